#!/usr/bin/env bash
# Records written by emitted filter programs (filter/filter_emit_frame.c:
# copied from the tracepoint at constant offsets, the header from the task)
# render as the kernel's text: render_diff.sh with a Filter= that keeps
# every record, over the classes of tools/render_events.txt (records of
# many sizes, odd ones among them, and fields at odd offsets).
RENDER_DIFF_FILTER='common_pid >= 0' exec bash "$(dirname "$0")/render_diff.sh"
