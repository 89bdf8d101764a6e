#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Which tasks does this kernel run no BPF tracing program in? (issue 22,
# item 2; run by hand, not part of make test.) tasks.bpf.c counts each
# task's switches out (its program runs in that task's context) and in
# (it runs in the task before) for DURATION seconds (default 15), and
# this lists every task switched in at least 3 times but never seen
# switched out, with its name and process. A softirq that lands on such
# a task runs no program either (tracefs records softirq_entry and
# inet_sock_set_state there, tp_btf programs see none:
# docs/reliability.md), so a TCP state change made there is lost to
# every tracer, with no recursion miss counted. On this sandbox's 6.18
# it lists the sandbox agent's threads (PID 1, process_api:
# tokio-rt-worker) and no other task; exit 1 if it lists any.
set -u
export LC_ALL=C
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
DURATION=${DURATION:-15}
[[ $EUID -eq 0 ]] || { echo "tasks: needs root" >&2; exit 1; }
TMP=$(mktemp -d /tmp/tp_tasks.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$REPO/vmlinux/x86" \
	-c "$HERE/tasks.bpf.c" -o "$TMP/tasks.bpf.o" && cc -O2 "$HERE/loader.c" -o "$TMP/loader" -lbpf ||
	exit 1
"$TMP/loader" "$TMP/tasks.bpf.o" >"$TMP/out" 2>&1 &
L=$!
for ((i = 0; i < 100; i++)); do grep -q ready "$TMP/out" && break; sleep 0.1; done
sleep "$DURATION"
kill -INT $L
wait $L
awk '$1 == "task"' "$TMP/out" >"$TMP/tasks"
hidden=0
while read -r _ pid out in; do
	((out == 0 && in >= 3)) || continue
	hidden=1
	echo "task $pid ($(cat /proc/*/task/$pid/comm 2>/dev/null | head -1), process" \
		"$(awk '/^Tgid/ { print $2 }' /proc/*/task/$pid/status 2>/dev/null | head -1)):" \
		"switched in $in times, never seen switched out"
done <"$TMP/tasks"
echo "$(wc -l <"$TMP/tasks") tasks switched, $(awk '$3 > 0' "$TMP/tasks" | wc -l) seen switched out"
exit $hidden
