#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# seccomp.sh [DEFAULT_PROFILE] > connscope-seccomp.json: the container
# runtime's default seccomp profile (Debian's containers-common:
# /usr/share/containers/seccomp.json, the same rules as Docker's), with
# bpf() allowed to a container that has CAP_BPF and perf_event_open() to one
# that has CAP_PERFMON. The default allows both only with CAP_SYS_ADMIN, so
# without this an agent given just CAP_BPF and CAP_PERFMON gets EPERM from
# bpf() at its first map. Every other rule is kept as it is:
#	podman run --security-opt seccomp=connscope-seccomp.json ...
# (docs/image.md). Needs jq.
set -euo pipefail
src=${1:-/usr/share/containers/seccomp.json}
[[ -r $src ]] || { echo "seccomp.sh: $src: cannot read the default profile (give its path)" >&2; exit 1; }
jq '
  def moved: ["bpf", "perf_event_open"];
  .syscalls |= (map(.names -= moved | select(.names | length > 0))
    + [{names: ["bpf"], action: "SCMP_ACT_ALLOW", args: [], comment: "connscope: CAP_BPF",
        includes: {caps: ["CAP_BPF"]}, excludes: {}},
       {names: ["perf_event_open"], action: "SCMP_ACT_ALLOW", args: [], comment: "connscope: CAP_PERFMON",
        includes: {caps: ["CAP_PERFMON"]}, excludes: {}}])
' "$src"
