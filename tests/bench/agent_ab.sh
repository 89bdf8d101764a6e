#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The agent's own CPU a connection, two connscope binaries in alternated
# rounds on the same loopback churn (issue #23 item 6: <= 0.7 us a
# connection): the agent's task-clock from the moment it traces until it
# exits (agent_perf_start in lib.sh; make bench's row "agent us/conn
# (perf task-clock, churn)" measures the same) divided by the connections
# it saw, and that figure split by the agent's CPU clock read at the
# load's go and end (agent_split in lib.sh): while the load ran ("during":
# make bench's "agent us/conn while the churn runs", the CPU the agent
# takes beside the load), after it ("exit": the last ring reads, the final
# census and reconcile, the report, the detach) and before it ("start").
#
#	tests/bench/agent_ab.sh BEFORE AFTER	two connscope binaries
#	ROUNDS=N (default 5) N=CONNS (default 20000) C=CONCURRENCY (default 32)
#
# Prints one line a round ("before|after us_per_conn=.. during=.. exit=..
# start=.. events=.. lost=.. conns=..") and min/median/max of each figure,
# of the rounds whose agent saw the
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
	local cs=$1 tool child perfp ms ev lost conns c0 c1 c2 u_start u_during u_exit

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
	# Its CPU clock at perf's start, at the load's go and at its end: the
	# figure split into before, during and after the load (agent_split).
	cpu_clock_open "$child"
	cpu_clock_read c0
	cpu_clock_read c1
	lg_go
	lg_end || say "loadgen: $(tail -n 2 "$WORK/loadgen.err" 2>/dev/null)"
	cpu_clock_read c2
	# It ends by itself once every target has exited.
	wait_for "! kill -0 $tool 2>/dev/null" 30 || kill -INT "$child" 2>/dev/null
	cpu_clock_close
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
	read -r u_start u_during u_exit < <(agent_split "$ms" "$c0" "$c1" "$c2" "$conns")
	awk -v ms="${ms:-0}" -v n="${conns:-0}" -v ev="$ev" -v lost="$lost" -v rec="$rec" \
	    -v us="$u_start" -v ud="$u_during" -v ux="$u_exit" -v secs="$(kv "$WORK/lg.out" seconds)" 'BEGIN {
		printf "us_per_conn=%.3f during=%s exit=%s start=%s events=%s lost=%s conns=%s " \
		       "churn_s=%.2f cpu_ms=%.1f reconciles=%s\n",
		       n ? ms * 1e3 / n : 0, ud, ux, us, ev, lost, n, secs, ms, rec }'
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
		for f in us_per_conn during exit start; do
			echo "$line" | grep -o "\b$f=[0-9.][0-9.]*" | cut -d= -f2 >>"$WORK/$which.$f"
		done
	done
done
# The whole run's figure, then its parts: while the load ran (what the
# agent takes from the load test), after it (the exit: the last ring
# reads, final census and reconcile, report, detach) and before it (traced,
# the load not started yet). They sum to the first.
for f in us_per_conn during exit start; do
	case $f in
	us_per_conn) what="us/connection, tracing to exit" ;;
	during) what="  of it while the load ran" ;;
	exit) what="  of it after the load (exit)" ;;
	start) what="  of it before the load" ;;
	esac
	for which in before after; do
		printf '%-6s %-34s %s\n' "$which" "$what:" "$(stats <"$WORK/$which.$f" 2>/dev/null)"
	done
done
