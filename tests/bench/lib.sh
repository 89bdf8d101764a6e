#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The helpers of tests/bench/run.sh, sourced by it: cleanup of what the
# bench started and made, network namespaces, the loadgen workload's
# start and end, waiting, and the rows of the results table. They use the
# driver's globals (WORK, B, CS, BG, NETNS, NS_SEQ, ROWS, NOTES, ONLY).

# ---- the A/B scripts' start (agent_ab, bpf_ab, census_ab, census_split) ----

# ab_setup NAME TAG: root and the loadgen binary checked (exits with a
# message naming NAME otherwise), WORK made (connscope-TAG.XXXXXX), the
# globals the helpers below use, cleanup on exit and on a signal.
ab_setup() {
	local name=$1 tag=$2

	((EUID == 0)) || { echo "$name: needs root (BPF, network namespaces)" >&2; exit 1; }
	[[ -x $B/loadgen ]] || { echo "$name: $B/loadgen missing: make .output/bench/loadgen" >&2; exit 1; }
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/connscope-$tag.XXXXXX") || exit 1
	BG=() NETNS=() NS_SEQ=0 MOUNTED_TRACEFS= NOTES=$WORK/notes
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM HUP
}

# ---- cleanup: what we started and made, nothing else ----

# PID and its descendants (time(1) and perf(1) run the real process as a
# child), deepest first.
tree_pids() {
	local c

	for c in $(pgrep -P "$1"); do
		tree_pids "$c"
	done
	echo "$1"
}

cleanup() {
	local p ns all=()

	set +u
	for p in "${BG[@]}"; do
		all+=($(tree_pids "$p"))
	done
	# SIGINT first: a BPF tracer detaches cleanly on it.
	((${#all[@]})) && kill -INT "${all[@]}" 2>/dev/null
	sleep 0.5
	((${#all[@]})) && kill -KILL "${all[@]}" 2>/dev/null
	for p in "${BG[@]}"; do
		wait "$p" 2>/dev/null
	done
	for ns in "${NETNS[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	[[ -n $MOUNTED_TRACEFS ]] && umount /sys/kernel/tracing 2>/dev/null
	rm -rf "$WORK"
}

say() {
	printf 'bench: %s\n' "$*" >&2
}

note() {
	printf '%s\n' "$*" >>"$NOTES"
	say "note: $*"
}

now_us() {
	local t=$EPOCHREALTIME

	echo $((10#${t//[!0-9]/}))
}

# wait_for CMD SECONDS: poll CMD every 20 ms.
wait_for() {
	local end=$(($(now_us) + $2 * 1000000))

	until eval "$1"; do
		(($(now_us) >= end)) && return 1
		sleep 0.02
	done
}

bg_forget() {
	local i

	for i in "${!BG[@]}"; do
		[[ ${BG[i]} == "$1" ]] && unset 'BG[i]'
	done
}

# ns_new: a fresh namespace with lo up and the whole port range; its name in NS.
ns_new() {
	NS=csbench-$$-$((NS_SEQ++))
	ip netns add "$NS" || return 1
	NETNS+=("$NS")
	ip -n "$NS" link set lo up
	ip netns exec "$NS" sysctl -qw net.ipv4.ip_local_port_range="1024 65535"
}

ns_del() {
	local i

	ip netns del "$1" 2>/dev/null
	for i in "${!NETNS[@]}"; do
		[[ ${NETNS[i]} == "$1" ]] && unset 'NETNS[i]'
	done
}

# lg_start NS OUT [perf] ARGS...: loadgen in NS, stdout to OUT, stdin a fifo
# held open as LG_FD. LG_PID (the process we started), LG_PIDS (the
# workload's client and server pids, comma-separated).
lg_start() {
	local ns=$1 out=$2 fifo=$WORK/lg.in.$NS_SEQ.$RANDOM pre=()

	shift 2
	if [[ $1 == perf ]]; then
		shift
		$HAVE_PERF && pre=(perf stat -x, -e task-clock -o "$out.perf")
	fi
	mkfifo "$fifo" || return 1
	ip netns exec "$ns" "${pre[@]}" "$B/loadgen" "$@" <"$fifo" >"$out" 2>>"$WORK/loadgen.err" &
	LG_PID=$!
	BG+=("$LG_PID")
	exec {LG_FD}>"$fifo"
	rm -f "$fifo"
	if ! wait_for "grep -q '^pids ' '$out'" 20; then
		say "loadgen did not start: $(tail -n 3 "$WORK/loadgen.err")"
		return 1
	fi
	LG_PIDS=$(sed -n 's/^pids //p' "$out")
}

lg_go() {
	echo go >&"$LG_FD"
}

lg_end() {
	local rc

	exec {LG_FD}>&-
	wait "$LG_PID"
	rc=$?
	bg_forget "$LG_PID"
	return $rc
}

# kv FILE KEY: the value of KEY=VALUE in FILE's "result"/"replay"/... line.
kv() {
	grep -o "\b$2=[^ ]*" "$1" | head -n 1 | cut -d= -f2
}

# stop_proc PID [SECONDS]: SIGINT (a tracer's clean exit), then TERM after
# SECONDS (default 5), then KILL.
stop_proc() {
	kill -INT "$1" 2>/dev/null
	wait_for "! kill -0 $1 2>/dev/null" "${2:-5}" || kill -TERM "$1" 2>/dev/null
	wait_for "! kill -0 $1 2>/dev/null" 5 || kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	bg_forget "$1"
}

proc_cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# perf_fd_held PID SECONDS: PID holds a perf_event fd (a perf counter
# opened, a tracepoint attached) within SECONDS.
perf_fd_held() {
	wait_for "ls -l /proc/$1/fd 2>/dev/null | grep -q perf_event" "$2"
}

# agent_perf_start PID FILE: the agent's CPU from now until it exits (perf
# stat -p, task-clock in ns: GNU time's and /proc/PID/stat's 10 ms ticks
# are 0.5 us a connection at 20,000); AGENT_PERF is the perf process, to
# be waited for once the agent ended. agent_perf_ms FILE: its milliseconds.
# CPU time, not throughput: it does not depend on who else runs. Returns
# once perf holds its counter (a perf_event fd, ~60 ms): its -o FILE stays
# empty until perf ends, so a wait for FILE's first bytes ran out its 5 s
# every time, and the idle agent's five or so censuses of those seconds
# went into the figure (and into the exit, agent_split's residual).
agent_perf_start() {
	perf stat -x, -e task-clock -p "$1" -o "$2" &
	AGENT_PERF=$!
	BG+=("$AGENT_PERF")
	perf_fd_held "$AGENT_PERF" 5
}

agent_perf_ms() {
	awk -F, '$3 == "task-clock" { print $1 }' "$1" 2>/dev/null
}

# cpu_clock_open PID / cpu_clock_read VAR / cpu_clock_close: PID's CPU
# time so far in ns, all its threads, exact to the moment read: the
# kernel's process CPU clock (clock_gettime on MAKE_PROCESS_CPUCLOCK(PID,
# CPUCLOCK_SCHED)), which brings a running thread's time up to date where
# /proc/PID/schedstat lags it by up to a tick. One reader started before,
# asked a line at a time (a Python start takes 50-200 ms on a busy
# machine, in which an agent can exit); empty once PID has exited and was
# reaped. The agent's CPU at the load's start and end (agent_ab.sh,
# run.sh): the part of agent_perf_ms spent while the load ran.
cpu_clock_open() {
	coproc CPUCLK { python3 -u -c 'import sys, time
clk = ((~int(sys.argv[1])) << 3) | 2
for _ in sys.stdin:
    try:
        print(time.clock_gettime_ns(clk))
    except OSError:
        print("")' "$1" 2>/dev/null; }
	BG+=("$CPUCLK_PID")
}

# cpu_clock_read VAR: the reading into VAR (a coprocess's fds are not
# there in a $(...) subshell).
cpu_clock_read() {
	local v=

	[[ -n ${CPUCLK[1]:-} ]] && echo >&"${CPUCLK[1]}" 2>/dev/null &&
		read -r -t 10 v <&"${CPUCLK[0]}"
	printf -v "$1" '%s' "$v"
}

cpu_clock_close() {
	local p=${CPUCLK_PID:-}

	[[ -n ${CPUCLK[1]:-} ]] && eval "exec ${CPUCLK[1]}>&-"
	[[ -n $p ]] && { wait "$p" 2>/dev/null; bg_forget "$p"; }
}

# agent_split MS C0 C1 C2 CONNS: the agent's task-clock MS (agent_perf_ms,
# from the moment it traced until it exited) split by its CPU clock read
# just after perf attached (C0), just before the load's go (C1) and just
# after the load ended (C2), each in us a connection: "start during exit"
# (before the load, while it ran, after it: the last ring reads, the final
# census and reconcile, the report, the detach). They sum to MS's figure.
agent_split() {
	awk -v ms="${1:-0}" -v c0="${2:-0}" -v c1="${3:-0}" -v c2="${4:-0}" -v n="${5:-0}" 'BEGIN {
		if (!n || !ms || !c0 || !c1 || !c2) { print "- - -"; exit }
		printf "%.3f %.3f %.3f\n", (c1 - c0) / 1e3 / n, (c2 - c1) / 1e3 / n,
		       (ms * 1e6 - (c2 - c0)) / 1e3 / n }'
}

# The tracer attached: a perf_event fd (tracepoint attach) in PID, then a moment.
wait_perf_event() {
	perf_fd_held "$1" 20 || return 1
	sleep 0.3
}

# Map memory of a process's BPF maps: "bytes maps owners_entries" from
# bpftool's bytes_memlock for the map ids in its fdinfo.
bpf_map_memory() {
	local ids

	ids=$(grep -h '^map_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -un |
		paste -sd, -)
	[[ -z $ids ]] && { echo "0 0 0"; return; }
	bpftool map show -j 2>/dev/null | jq -r --arg ids "$ids" '
		($ids | split(",") | map(tonumber)) as $want
		| [ .[] | select(.id as $i | $want | index($i)) ]
		| "\(map(.bytes_memlock // 0) | add) \(length) \(map(select(.name == "owners") | .max_entries) | add // 0)"'
}

# ---- results ----

# row ID FIGURE UNIT OP TARGET VALUES...: one table row. OP is ">=", "<=",
# ">" or "-" (no target: information); the median is what meets it.
row() {
	local id=$1 fig=$2 unit=$3 op=$4 target=$5

	shift 5
	vals=$(printf '%s\n' "$@" | awk '/^-?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/' | paste -sd, -)
	[[ -z $vals ]] && { say "no values for: $fig"; vals=null; }
	jq -nc --arg id "$id" --arg fig "$fig" --arg unit "$unit" --arg op "$op" \
		--arg target "$target" --argjson vals "[$vals]" '
		($vals | map(select(. != null)) | sort) as $v
		| ($v | length) as $n
		| (if $n == 0 then null elif $n % 2 == 1 then $v[($n - 1) / 2]
		   else ($v[$n / 2 - 1] + $v[$n / 2]) / 2 end) as $med
		| { comparison: ($id | tonumber), figure: $fig, unit: $unit, values: $vals,
		    min: $v[0], median: $med, max: $v[-1],
		    target: (if $op == "-" then null else { op: $op, value: ($target | tonumber) } end),
		    met: (if $op == "-" or $med == null then null
			  elif $op == ">=" then $med >= ($target | tonumber)
			  elif $op == ">" then $med > ($target | tonumber)
			  else $med <= ($target | tonumber) end) }' >>"$ROWS"
}

# ratios A B: element-wise A[i]/B[i] of two space-separated lists.
ratios() {
	paste -d' ' <(tr ' ' '\n' <<<"$1" | sed '/^$/d') <(tr ' ' '\n' <<<"$2" | sed '/^$/d') |
		awk '$2 > 0 { printf "%.6g ", $1 / $2 }'
}

# hf_times FILE NAME: hyperfine's per-run times (s) of the named command.
hf_times() {
	jq -r --arg n "$2" '.results[] | select(.command == $n) | .times | map(tostring) | join(" ")' "$1"
}

median_of() {
	tr ' ' '\n' <<<"$*" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2];
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

want() {
	[[ " $ONLY " == *" $1 "* ]]
}

# stats: "min / median / max" of the numbers on stdin, one a line ("-"
# for none); sort -g, for figures written as 1e+06 too.
stats() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f / %.3f / %.3f", v[1], m, v[NR] }'
}
