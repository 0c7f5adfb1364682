#!/usr/bin/env bash
# Event classes as kernel-events/classes.c infers them from BTF, against
# the kernel's own map (__bpf_raw_tp entries -> __bpf_trace_<class>).
. "$(dirname "$0")/../lib.sh"
need_root class_oracle
"$PWD/${BUILD:-build}/tests/tools/class_oracle"
