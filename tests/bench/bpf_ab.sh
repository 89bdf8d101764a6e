#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The kernel side's cost, two connscope binaries against each other and
# against nothing attached, in rotated rounds (issue #23 items 2-5):
#
#  traced:   a loopback churn, both ends traced, --cost-every 1: conns/s and
#            the BPF run time a connection (the kernel's own run-time
#            statistics of connscope's programs over the run, each run
#            carrying the statistics' ~33 ns of clock reads), split into the
#            state program, its nested twin, send/receive and the rest; the
#            nested program's catches (agent.state_changes_nested).
#  cpu:      every mode: the workload's task-clock a connection (perf stat
#            of the load generator), which also holds what the statistics
#            miss: the trampoline, storage clone and free in the kernel;
#            and the agent's task-clock while the load runs, over the same
#            connections (what it takes of the two cores meanwhile).
#  untraced: the same churn by a process nobody traces while the binary
#            traces a sleep: conns/s, and the BPF run time its connections
#            cost (all of connscope's programs over the run / connections).
#  othercg:  the untraced churn again, while the binary traces a process that
#            holds a UDP socket in a cgroup v2 directory of its own (so the
#            QUIC wire unit's packet programs are on): the QUIC programs'
#            (qw_*) runs and run time a connection of the untraced churn,
#            and the churn's TCP segments a connection (the netns's
#            OutSegs), for runs a packet. The churn runs in the root cgroup.
#  keepalive: KA_N connections x KA_R exchanges (default 320 x 2000: ~5 s
#            where make bench's 320 x 1000 lasts ~2.5), both ends traced, as
#            traced; every figure a request, not a connection.
#
#	tests/bench/bpf_ab.sh BEFORE AFTER	two connscope binaries
#	ROUNDS=N (default 5) N=CONNS (default 20000) C=CONCURRENCY (default 32)
#	MODES="traced untraced othercg keepalive" (default "traced untraced")
#	KA_N=CONNS KA_R=EXCHANGES (keepalive; default 320 and 2000)
#	KEEP=DIR: the agent's JSON of every attached run kept there
#
# One line a run, then min/median/max of each figure; throughput as the
# ratio to the unattached run of the same round. Run time is CPU the
# programs took, much less sensitive than throughput to whoever else runs
# on the machine. A measurement: nothing is asserted.
set -u
export LC_ALL=C

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$REPO_ROOT/.output/bench
ROUNDS=${ROUNDS:-5} N=${N:-20000} C=${C:-32} MODES=${MODES:-traced untraced}
KA_N=${KA_N:-320} KA_R=${KA_R:-2000}
if (($# != 2)) || [[ ! -x $1 || ! -x $2 ]]; then
	echo "usage: bpf_ab.sh BEFORE AFTER (two connscope binaries)" >&2
	exit 2
fi
# shellcheck source=tests/bench/lib.sh
source "$REPO_ROOT/tests/bench/lib.sh"
ab_setup bpf_ab bpfab
# othercg's target cgroup (made and removed by each run; at exit too, after
# cleanup killed what was in it).
OCG=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)/connscope-bpfab-$$
trap 'cleanup; rmdir "$OCG" 2>/dev/null' EXIT
HAVE_PERF=false
perf stat -x, -e task-clock -o /dev/null true >/dev/null 2>&1 && HAVE_PERF=true

# The agent's JSON -> "bpf_ns state nested io other catches runs" over
# conns (runs: program runs a connection, each carrying the statistics'
# own ~33 ns).
cost_of() {
	jq -r --argjson n "$2" '.agent as $a | $a.cost as $c |
		[$c.programs[]? | {g: (if (.name | test("nested")) then 1
			elif (.name | test("set_stat")) then 0
			elif (.name | test("send|recv|rcv_space")) then 2 else 3 end), t: .run_time_ns}] as $p |
		[($c.bpf_run_time_ns // 0)] + [range(4) as $i | $p | map(select(.g == $i) | .t) | add // 0]
		| map(. / $n | floor) + [$a.state_changes_nested // 0,
			(([$c.programs[]?.runs] | add // 0) / $n * 10 | floor / 10)]
		| map(tostring) | join(" ")' "$1"
}

# one MODE NAME BIN|-: one churn; prints "NAME conns_per_s" and cost_of's.
one() {
	local mode=$1 name=$2 cs=$3 tool= target= conns thr ams= args=(run -n "$N" -c "$C" -r 1)

	[[ $mode == keepalive ]] && args=(run -n "$KA_N" -c "$C" -r "$KA_R")
	ns_new || return 1
	rm -f "$WORK/att.json" "$WORK/att.err" "$WORK/lg.out.perf"
	lg_start "$NS" "$WORK/lg.out" perf "${args[@]}" || { ns_del "$NS"; return 1; }
	if [[ $cs != - ]]; then
		if [[ $mode == othercg ]]; then
			mkdir -p "$OCG"
			# SIGINT back to its default (a background job starts with
			# it ignored); no fd of ours held.
			# shellcheck disable=SC2016
			bash -c 'echo $$ >"$1/cgroup.procs" && exec python3 -c "$2"' _ "$OCG" \
				'import signal, socket, time
signal.signal(signal.SIGINT, signal.SIG_DFL)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
time.sleep(3600)' </dev/null >/dev/null 2>&1 &
			target=$!
			BG+=("$target")
			wait_for "ss -Huanp | grep -q 'pid=$target,'" 10 || say "no UDP socket in $target"
			"$cs" attach -p "$target" -d 600 -i 1 -j --cost-every 1 \
				>"$WORK/att.json" 2>"$WORK/att.err" &
		elif [[ $mode != untraced ]]; then
			ip netns exec "$NS" "$cs" attach -p "$LG_PIDS" -d 600 -i 1 -j --cost-every 1 \
				>"$WORK/att.json" 2>"$WORK/att.err" &
		else
			sleep 3600 </dev/null &
			target=$!
			BG+=("$target")
			"$cs" attach -p "$target" -d 600 -i 1 -j --cost-every 1 \
				>"$WORK/att.json" 2>"$WORK/att.err" &
		fi
		tool=$!
		BG+=("$tool")
		wait_for "grep -qs 'connscope: tracing' '$WORK/att.err'" 30 ||
			say "connscope did not attach: $(head -n 3 "$WORK/att.err")"
	fi
	# The agent's CPU while the workload runs, what it takes of the two
	# cores from it: its task-clock from the start to the end of the load.
	AGENT_PERF=
	rm -f "$WORK/agent.perf"
	[[ -n $tool ]] && $HAVE_PERF && agent_perf_start "$tool" "$WORK/agent.perf"
	segs0=$(ip netns exec "$NS" awk '$1 == "Tcp:" && $11 ~ /^[0-9]+$/ {print $12}' /proc/net/snmp)
	lg_go
	lg_end || say "loadgen: $(tail -n 2 "$WORK/loadgen.err" 2>/dev/null)"
	segs=$(ip netns exec "$NS" awk -v s="$segs0" '$1 == "Tcp:" && $11 ~ /^[0-9]+$/ {print $12 - s}' /proc/net/snmp)
	if [[ -n $AGENT_PERF ]]; then
		kill -INT "$AGENT_PERF" 2>/dev/null
		wait "$AGENT_PERF"
		bg_forget "$AGENT_PERF"
		ams=$(agent_perf_ms "$WORK/agent.perf")
	fi
	if [[ -n $tool ]]; then
		if [[ $mode != untraced && $mode != othercg ]]; then
			# It ends by itself once every target has exited.
			wait_for "! kill -0 $tool 2>/dev/null" 30 || kill -INT "$tool" 2>/dev/null
			wait "$tool"
			bg_forget "$tool"
		else
			stop_proc "$tool"
			stop_proc "$target"
			bg_forget "$target"
			[[ $mode == othercg ]] && rmdir "$OCG"
		fi
	fi
	ns_del "$NS"
	conns=$(kv "$WORK/lg.out" conns) thr=$(kv "$WORK/lg.out" conns_per_s)
	# Keep-alive: every figure a request (exchange), not a connection.
	[[ $mode == keepalive ]] && conns=$(kv "$WORK/lg.out" reqs) thr=$(kv "$WORK/lg.out" reqs_per_s)
	# The workload's own CPU a connection (client and server, the
	# programs, the trampoline and the storage's kernel work that run in
	# their context included): what the statistics do not see.
	cpu=$(awk -F, -v n="${conns:-1}" '$3 == "task-clock" { printf "%d", $1 * 1e6 / n }' \
		"$WORK/lg.out.perf" 2>/dev/null)
	[[ -n ${KEEP:-} && -n $tool ]] && cp "$WORK/att.json" "$KEEP/$mode.$name.$(date +%s%N).json"
	[[ -n $ams ]] && ams=$(awk -v m="$ams" -v n="${conns:-1}" 'BEGIN { printf "%d", m * 1e6 / n }')
	# The QUIC programs alone: runs and ns a connection; segments a connection.
	qw=$(jq -r --argjson n "${conns:-1}" '[.agent.cost.programs[]? | select(.name | test("qw_"))] |
		"\((map(.runs) | add // 0) / $n * 100 | floor / 100) \((map(.run_time_ns) | add // 0) / $n | floor)"' \
		"$WORK/att.json" 2>/dev/null)
	spc=$(awk -v s="${segs:-0}" -v n="${conns:-1}" 'BEGIN { printf "%.2f", s / n }')
	if [[ -n $tool ]]; then
		echo "$name ${thr:-0} ${cpu:--} $(cost_of "$WORK/att.json" "${conns:-1}") ${ams:--} ${qw:-- -} $spc"
	else
		echo "$name ${thr:-0} ${cpu:--} - - - - - - - - - - $spc"
	fi
}

for mode in $MODES; do
	: >"$WORK/$mode.res"
	names=(none before after)
	for ((r = 0; r < ROUNDS; r++)); do
		for ((k = 0; k < 3; k++)); do
			name=${names[(k + r) % 3]}
			case $name in none) bin=- ;; before) bin=$1 ;; after) bin=$2 ;; esac
			one "$mode" "$name" "$bin" >"$WORK/one.line"; line=$(<"$WORK/one.line")
			echo "$mode round $((r + 1)): $line"
			echo "$r $line" >>"$WORK/$mode.res"
		done
	done
	u=conn
	[[ $mode == keepalive ]] && u=req
	echo "$mode: min / median / max of $ROUNDS rounds (a $u)"
	for name in before after; do
		# Throughput as the ratio to the same round's unattached run.
		ratio=$(awk -v w="$name" '$2 == "none" { n[$1] = $3 } $2 == w { t[$1] = $3 }
			END { for (r in t) if (n[r] > 0) print t[r] / n[r] }' "$WORK/$mode.res" | stats)
		echo "  $name ${u}s/s / none: $ratio"
		col=4
		for fig in "CPU ns/$u (workload)" "BPF ns/$u" "  state" "  nested" "  send/recv" "  other" "nested catches" "runs/$u" \
			"agent CPU ns/$u, during the load" "QUIC (qw_*) runs/$u" "QUIC (qw_*) ns/$u"; do
			echo "  $name $fig: $(awk -v w="$name" -v c="$col" '$2 == w { print $c }' "$WORK/$mode.res" | stats)"
			col=$((col + 1))
		done
	done
	echo "  none ${u}s/s: $(awk '$2 == "none" { print $3 }' "$WORK/$mode.res" | stats)"
	echo "  none CPU ns/$u (workload): $(awk '$2 == "none" { print $4 }' "$WORK/$mode.res" | stats)"
	echo "  TCP segments/$u: $(awk '{ print $NF }' "$WORK/$mode.res" | stats)"
done
