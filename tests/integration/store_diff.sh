#!/usr/bin/env bash
# The event store read back equals the kernel's text: render_diff.sh with
# tracerd writing to the store and `tracerd --read` printing what is compared.
RENDER_DIFF_VIA_STORE=1 exec bash "$(dirname "$0")/render_diff.sh"
