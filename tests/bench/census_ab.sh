#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The agent's CPU an interval while its books hold a churn's TIME_WAIT,
# two connscope binaries in alternated rounds (issue #23 item 6): what a
# connection keeps costing the agent for the 60 s of its TIME_WAIT, where
# the census (sock_diag dump, iter/tcp birth pass, reconcile) looks at
# each of them every interval. agent_ab.sh's runs end a few intervals
# after their churn and hold little of it.
#
#	tests/bench/census_ab.sh BEFORE AFTER	two connscope binaries
#	ROUNDS=N (default 4) N=CONNS (default 20000) SECONDS_MEASURED=S (default 8)
#
# Each run: a loadgen churn of N connections in a namespace made here,
# traced by `attach --comm loadgen -i 1` from before it starts; once it
# ended, the agent's perf stat -p task-clock over S seconds of intervals.
# Prints one line a round ("before|after ms_per_interval=.. time_wait=..")
# and min/median/max of each. A measurement: nothing is asserted.
set -u
export LC_ALL=C

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$REPO_ROOT/.output/bench
ROUNDS=${ROUNDS:-4} N=${N:-20000} S=${SECONDS_MEASURED:-8}
if (($# != 2)) || [[ ! -x $1 || ! -x $2 ]]; then
	echo "usage: census_ab.sh BEFORE AFTER (two connscope binaries)" >&2
	exit 2
fi
# shellcheck source=tests/bench/lib.sh
source "$REPO_ROOT/tests/bench/lib.sh"
ab_setup census_ab census

# one BIN: prints "ms_per_interval time_wait".
one() {
	local cs=$1 tool tw

	ns_new || return 1
	lg_start "$NS" "$WORK/lg.out" run -n "$N" -c 32 -r 1 || { ns_del "$NS"; return 1; }
	# --comm: the run lasts its -d whatever its targets do.
	# The last round's att.err says "connscope: tracing" until this
	# agent's redirection truncates it: not a sign of this one.
	rm -f "$WORK/att.err"
	ip netns exec "$NS" "$cs" attach --comm loadgen -d $((S + 8)) -i 1 -j \
		>"$WORK/att.json" 2>"$WORK/att.err" &
	tool=$!
	BG+=("$tool")
	wait_for "grep -qs 'connscope: tracing' '$WORK/att.err'" 30 ||
		say "connscope did not attach: $(head -n 3 "$WORK/att.err")"
	lg_go
	lg_end || say "loadgen: $(tail -n 2 "$WORK/loadgen.err" 2>/dev/null)"
	perf stat -x, -e task-clock -p "$tool" -o "$WORK/perf.out" -- sleep "$S"
	tw=$(ip netns exec "$NS" ss -tanH state time-wait | wc -l)
	wait_for "! kill -0 $tool 2>/dev/null" 30 || kill -INT "$tool" 2>/dev/null
	wait "$tool"
	bg_forget "$tool"
	ns_del "$NS"
	awk -F, -v s="$S" -v tw="$tw" '$3 == "task-clock" {
		printf "ms_per_interval=%.2f time_wait=%s\n", $1 / s, tw }' "$WORK/perf.out"
}

stats() {
	sort -n | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "min %.2f median %.2f max %.2f (%d rounds)\n", v[1], m, v[NR], NR }'
}

for ((r = 0; r < ROUNDS; r++)); do
	if ((r % 2)); then order="after before"; else order="before after"; fi
	for which in $order; do
		if [[ $which == before ]]; then bin=$1; else bin=$2; fi
		one "$bin" >"$WORK/one.line"; line=$(<"$WORK/one.line")
		echo "$which $line"
		echo "$line" | grep -o 'ms_per_interval=[0-9.]*' | cut -d= -f2 >>"$WORK/$which"
	done
done
echo "before ms/interval: $(stats <"$WORK/before")"
echo "after  ms/interval: $(stats <"$WORK/after")"
