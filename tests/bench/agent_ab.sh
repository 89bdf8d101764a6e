#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The agent's own CPU a connection, two connscope binaries in alternated
# rounds on the same loopback churn (issue #23 item 6: <= 0.7 us a
# connection): the agent's task-clock from the moment it traces until it
# exits (agent_perf_start in lib.sh; make bench's row "agent us/conn"
# measures the same) divided by the connections it saw.
#
#	tests/bench/agent_ab.sh BEFORE AFTER	two connscope binaries
#	ROUNDS=N (default 5) N=CONNS (default 20000) C=CONCURRENCY (default 32)
#
# Prints one line a round ("before|after us_per_conn=.. events=.. lost=..
# conns=..") and min/median/max of each, of the rounds whose agent saw the
# whole churn (2 records a connection, none lost; others are shown and
# left out). Both ends of the churn traced (one
# loadgen client and server pair in a namespace made here, deleted at
# exit). A measurement: nothing is asserted.
set -u
export LC_ALL=C

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$REPO_ROOT/.output/bench
ROUNDS=${ROUNDS:-5} N=${N:-20000} C=${C:-32}
if (($# != 2)) || [[ ! -x $1 || ! -x $2 ]]; then
	echo "usage: agent_ab.sh BEFORE AFTER (two connscope binaries)" >&2
	exit 2
fi
# shellcheck source=tests/bench/lib.sh
source "$REPO_ROOT/tests/bench/lib.sh"
ab_setup agent_ab ab

# one BIN: a churn of N connections with BIN attached to both ends; prints
# "us_per_conn events lost conns".
one() {
	local cs=$1 tool child perfp ms ev lost conns

	ns_new || return 1
	# att.err too: the last round's says "connscope: tracing" until this
	# agent's redirection truncates it, and the churn must not start on it.
	rm -f "$WORK/att.json" "$WORK/att.err" "$WORK/perf.out"
	lg_start "$NS" "$WORK/lg.out" run -n "$N" -c "$C" -r 1 || { ns_del "$NS"; return 1; }
	ip netns exec "$NS" "$cs" attach -p "$LG_PIDS" -d 600 -i 1 -j \
		>"$WORK/att.json" 2>"$WORK/att.err" &
	tool=$!
	BG+=("$tool")
	wait_for "grep -qs 'connscope: tracing' '$WORK/att.err'" 30 ||
		say "connscope did not attach: $(head -n 3 "$WORK/att.err")"
	# ip netns exec execs: the agent is $tool itself.
	child=$tool
	agent_perf_start "$child" "$WORK/perf.out"
	perfp=$AGENT_PERF
	lg_go
	lg_end || say "loadgen: $(tail -n 2 "$WORK/loadgen.err" 2>/dev/null)"
	# It ends by itself once every target has exited.
	wait_for "! kill -0 $tool 2>/dev/null" 30 || kill -INT "$child" 2>/dev/null
	wait "$tool"
	bg_forget "$tool"
	wait "$perfp"
	bg_forget "$perfp"
	ns_del "$NS"
	ms=$(agent_perf_ms "$WORK/perf.out")
	ev=$(jq -r '.agent.events // 0' "$WORK/att.json")
	lost=$(jq -r '.agent.events_lost // 0' "$WORK/att.json")
	rec=$(jq -r '.agent.reconciles // 0' "$WORK/att.json")
	conns=$(kv "$WORK/lg.out" conns)
	awk -v ms="${ms:-0}" -v n="${conns:-0}" -v ev="$ev" -v lost="$lost" -v rec="$rec" 'BEGIN {
		printf "us_per_conn=%.3f events=%s lost=%s conns=%s cpu_ms=%.1f reconciles=%s\n",
		       n ? ms * 1e3 / n : 0, ev, lost, n, ms, rec }'
}

stats() {
	sort -n | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "min %.3f median %.3f max %.3f (%d rounds)\n", v[1], m, v[NR], NR }'
}

for ((r = 0; r < ROUNDS; r++)); do
	# Alternated, and which goes first alternates too.
	if ((r % 2)); then order="after before"; else order="before after"; fi
	for which in $order; do
		if [[ $which == before ]]; then bin=$1; else bin=$2; fi
		one "$bin" >"$WORK/one.line"; line=$(<"$WORK/one.line")
		echo "$which $line"
		# A round whose agent missed the churn (it saw fewer than the two
		# records a connection, or lost some) measured something else:
		# shown, left out of the figures.
		if ! awk -v l="$line" 'BEGIN { split(l, f, /[ =]/)
			for (i = 1; i in f; i += 2) v[f[i]] = f[i + 1]
			exit !(v["lost"] == 0 && v["conns"] > 0 && v["events"] >= 2 * v["conns"]) }'; then
			echo "$which round left out: events=$(grep -o 'events=[0-9]*' <<<"$line" | cut -d= -f2) for $(grep -o 'conns=[0-9]*' <<<"$line" | cut -d= -f2) connections, lost $(grep -o 'lost=[0-9]*' <<<"$line" | cut -d= -f2)"
			continue
		fi
		echo "$line" | grep -o 'us_per_conn=[0-9.]*' | cut -d= -f2 >>"$WORK/$which"
	done
done
echo "before us/connection: $(stats <"$WORK/before")"
echo "after  us/connection: $(stats <"$WORK/after")"
