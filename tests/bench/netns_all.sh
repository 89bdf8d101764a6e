#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Comparison 9 of tests/bench/run.sh (sourced by it, with its helpers and
# globals): what `exporter --all` costs per interval as the network
# namespaces it reads grow. Each interval it enters every namespace a
# process is in (setns), dumps its sockets (sock_diag), runs the birth
# pass there and reads its counters; this measures that with 0, 1, 10 and
# 50 extra namespaces, each holding idle connections (loadgen hold: a
# listener and ALL_CONNS established pairs), the agent's CPU summed over
# its threads (/proc/PID/task/*/schedstat, ns) across ALL_INTERVALS
# intervals of 1 s after it has settled. Reported, never asserted.

ALL_STEPS="0 1 10 50"	# extra network namespaces
ALL_CONNS=10		# connections held in each
ALL_INTERVALS=10

# The agent's CPU so far, ns, every thread.
agent_cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# all_grow N: namespaces with a holding loadgen until there are N.
all_grow() {
	local out

	while ((${#ALL_FDS[@]} < $1)); do
		ns_new || return 1
		out=$WORK/all.$NS_SEQ.out
		lg_start "$NS" "$out" hold -n "$ALL_CONNS" || return 1
		ALL_NS+=("$NS")
		ALL_FDS+=("$LG_FD")
		ALL_PIDS+=("$LG_PID")
		lg_go
		wait_for "grep -q '^held ' '$out'" 20 || { say "loadgen hold in $NS did not hold"; return 1; }
	done
}

# all_shrink: every holder ends (EOF on its stdin), every namespace goes.
all_shrink() {
	local fd p ns

	for fd in "${ALL_FDS[@]}"; do
		exec {fd}>&-
	done
	for p in "${ALL_PIDS[@]}"; do
		wait "$p" 2>/dev/null
		bg_forget "$p"
	done
	for ns in "${ALL_NS[@]}"; do
		ns_del "$ns"
	done
	ALL_FDS=() ALL_PIDS=() ALL_NS=()
}

# all_measure: ms of agent CPU per interval, or nothing on failure.
all_measure() {
	local port pid c0 c1 t0 t1

	port=$(( (RANDOM % 20000) + 30000 ))
	"$CS" exporter --all --listen "127.0.0.1:$port" -i 1 >/dev/null 2>"$WORK/all.err" &
	pid=$!
	BG+=("$pid")
	if ! wait_for "grep -q 'exporter serving' '$WORK/all.err'" 30; then
		say "exporter --all did not start: $(tail -n 2 "$WORK/all.err")"
		stop_proc "$pid"
		return 1
	fi
	# Loading and the start-up snapshot are not an interval's cost.
	sleep 3
	c0=$(agent_cpu_ns "$pid") t0=$(now_us)
	sleep "$ALL_INTERVALS"
	c1=$(agent_cpu_ns "$pid") t1=$(now_us)
	grep -q 'cannot be entered' "$WORK/all.err" &&
		note "exporter --all could not enter some namespaces (no CAP_SYS_ADMIN?): comparison 9 is not what it says"
	if ! kill -0 "$pid" 2>/dev/null || ((c0 == 0 || c1 <= c0)); then
		say "exporter --all ended or stalled while measured: $(tail -n 2 "$WORK/all.err")"
		stop_proc "$pid"
		return 1
	fi
	stop_proc "$pid"
	# Per second of wall time = per interval at -i 1.
	awk -v c="$((c1 - c0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.3f\n", c / 1e6 / (t / 1e6) }'
}

if want 9; then
	say "9: exporter --all per-interval CPU with $ALL_STEPS extra network namespaces ($SMALL_REPS rounds)"
	declare -A ALL_MS=()
	ALL_FDS=() ALL_PIDS=() ALL_NS=()
	for ((r = 0; r < SMALL_REPS; r++)); do
		for n in $ALL_STEPS; do
			all_grow "$n" || break
			ms=$(all_measure) || break
			ALL_MS[$n]+="$ms "
		done
		all_shrink
	done
	for n in $ALL_STEPS; do
		row 9 "agent CPU ms/interval, $n netns" "ms" - 0 ${ALL_MS[$n]:-}
	done
	last=${ALL_STEPS##* }
	row 9 "  ms per extra netns, $last vs 0" "ms" - 0 \
		$(paste -d' ' <(tr ' ' '\n' <<<"${ALL_MS[$last]:-}" | sed '/^$/d') \
			<(tr ' ' '\n' <<<"${ALL_MS[0]:-}" | sed '/^$/d') |
			awk -v n="$last" '{ printf "%.4g ", ($1 - $2) / n }')
fi
