#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A cgroup-scoped design measured against today's (issue #23; the findings
# in docs/performance-kernel.md, "A cgroup-scoped design (sock_ops),
# measured"): a sock_ops program attached to one cgroup against the tp_btf
# pair on sock:inet_sock_set_state, both from tests/bench/sockops_ab.bpf.c
# with the same body (socket storage, a clock read at ESTABLISHED, a
# 200-byte ring record and the storage's delete at CLOSE). Not connscope.
#
#  cover:     the transitions each hook sees, one scenario at a time
#             (client or server closing first, RST, connect refused, a
#             listener alone, a child left in the accept queue, a
#             connection older than the attach, the same given STATE_CB by
#             an iter/tcp program), made by the loader itself inside the
#             cgroup; then again with STATE_CB not asked for at
#             TCP_LISTEN_CB (a listener older than the attach).
#  recursion: both hooks attached with their bodies over a churn of P
#             pairs: the transitions each saw, the tracepoint program's
#             recursion_misses and its twin's catches, and the sock_ops
#             runs begun while another ran on the same CPU.
#  traced:    rotated rounds of none / tp / sockops over a loopback churn
#             (N connections, C at a time) in a cgroup v2 directory made
#             here: conns/s, the workload's CPU a connection (perf stat
#             task-clock of the load generator), program runs and run time
#             a connection (the kernel's run-time statistics; ~33 ns of
#             their own a run), and the transitions the programs saw.
#  calls:     as traced, the programs without their body (the tracepoint
#             pair returns after the protocol; sock_ops sets its flags and
#             counts): what being called costs each hook.
#  untraced:  the same churn by a process in another cgroup and network
#             namespace while the programs (with their body) trace an empty
#             cgroup and namespace: what is left for the rest of the machine.
#  profile:   the calling itself, which the statistics do not hold: the
#             churn under perf record (cpu-clock, a sample every 100 us of
#             the load generator's CPU, client and server and the softirqs
#             run in their context), none / tp and sockops without their
#             body (calls) / sockops attached to an empty cgroup
#             (untraced: the hook's static key on, no program for this
#             socket), rotated; ns a connection by symbol group.
#
#	tests/bench/sockops_ab.sh
#	ROUNDS=N (default 5) N=CONNS (20000) C=CONCURRENCY (32) P=PAIRS (recursion, 2)
#	MODES="cover recursion traced calls untraced profile" (the default)
#	SPIN=N: the recursion rounds' bpf_loop iterations in task-context
#	transitions, a longer window for a softirq to land in (default 0)
#
# Needs root, cgroup v2 at /sys/fs/cgroup/unified or /sys/fs/cgroup, and
# `make .output/bench/loadgen .output/bench/sockops_ab`. Leaves nothing
# behind (cgroup, namespaces, processes; the statistics end with the
# loader). Every mode at the defaults: ~15 minutes on 2 cores. A
# measurement: nothing is asserted.
set -u
export LC_ALL=C

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$REPO_ROOT/.output/bench
ROUNDS=${ROUNDS:-5} N=${N:-20000} C=${C:-32} P=${P:-2}
MODES=${MODES:-cover recursion traced calls untraced profile} SPIN=${SPIN:-0}
# shellcheck source=tests/bench/lib.sh
source "$REPO_ROOT/tests/bench/lib.sh"
[[ -x $B/sockops_ab ]] || { echo "sockops_ab.sh: $B/sockops_ab missing: make $B/sockops_ab" >&2; exit 1; }
ab_setup sockops_ab sockops
HAVE_PERF=false
perf stat -x, -e task-clock -o /dev/null true >/dev/null 2>&1 && HAVE_PERF=true

CGROOT=/sys/fs/cgroup/unified
[[ -f $CGROOT/cgroup.procs ]] || CGROOT=/sys/fs/cgroup
[[ -f $CGROOT/cgroup.subtree_control ]] || { echo "sockops_ab.sh: no cgroup v2 mounted" >&2; exit 1; }
CG=$CGROOT/connscope-sockops-$$
mkdir "$CG" || exit 1
trap 'cleanup; rmdir "$CG" 2>/dev/null' EXIT

# loader_start MODE NETNS ARGS...: the loader attached (prints "ready");
# LD_PID, its output in $WORK/ld.out, stdin a fifo held as LD_FD.
loader_start() {
	local mode=$1 ns=$2 fifo=$WORK/ld.in.$RANDOM

	shift 2
	rm -f "$WORK/ld.out"
	mkfifo "$fifo" || return 1
	"$B/sockops_ab" "$@" -n "/run/netns/$ns" "$mode" "$CG" <"$fifo" >"$WORK/ld.out" \
		2>>"$WORK/ld.err" &
	LD_PID=$!
	BG+=("$LD_PID")
	exec {LD_FD}>"$fifo"
	rm -f "$fifo"
	wait_for "grep -qs '^ready' '$WORK/ld.out'" 30 || {
		say "sockops_ab did not attach: $(tail -n 3 "$WORK/ld.err")"
		return 1
	}
}

loader_end() {
	exec {LD_FD}>&-
	stop_proc "$LD_PID" 10
}

# lg_start_in CGROUP|- NS ARGS...: lib.sh's lg_start, the load generator
# in CGROUP (joined before `ip netns exec`, whose own sysfs hides cgroupfs).
lg_start_in() {
	local cg=$1 ns=$2 out=$WORK/lg.out fifo=$WORK/lg.in.$RANDOM pre=()

	shift 2
	$HAVE_PERF && pre=(perf stat -x, -e task-clock -o "$out.perf")
	[[ -n ${RECORD:-} ]] && pre=(perf record -e cpu-clock -c 100000 -q -o "$out.data")
	rm -f "$out" "$out.perf" "$out.data"
	mkfifo "$fifo" || return 1
	(
		[[ $cg != - ]] && echo "$BASHPID" >"$cg/cgroup.procs"
		exec ip netns exec "$ns" "${pre[@]}" "$B/loadgen" "$@"
	) <"$fifo" >"$out" 2>>"$WORK/loadgen.err" &
	LG_PID=$!
	BG+=("$LG_PID")
	exec {LG_FD}>"$fifo"
	rm -f "$fifo"
	wait_for "grep -q '^pids ' '$out'" 20 || { say "loadgen did not start"; return 1; }
}

# The loader's output -> "runs_per_conn bpf_ns_per_conn trans_tp trans_nested
# trans_sockops records misses nested_sockops", a connection each but the
# last three (counts).
ld_figures() {
	awk -v n="$1" '
		/^prog / { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] += kv[2] } }
		/^trans / { t[$2] += $5 }
		/^sockops_nested/ { nest = $2; rec = $4 }
		END { printf "%.1f %d %.2f %.2f %.2f %.2f %d %d\n", v["runs"] / n, v["run_ns"] / n,
			t["tp"] / n, t["tp_nested"] / n, t["sockops"] / n, rec / n,
			v["recursion_misses"], nest }' "$WORK/ld.out"
}

# one WHERE NAME: one churn; WHERE traced or calls (the churn in the cgroup
# and the target namespace) or untraced (elsewhere); NAME none, tp or sockops.
one() {
	local where=$1 name=$2 ns tns= cg=$CG conns thr cpu figs="- - - - - - - -" body=-b stats=

	ns_new || return 1
	ns=$NS
	if [[ $where == untraced || $where == profile_untraced ]]; then
		ns_new || return 1
		tns=$NS cg=-
	fi
	[[ $where == calls || $where == profile* ]] && body=
	# The run-time statistics' clock reads would land in the dispatch.
	[[ $where != profile* ]] && stats=-s
	if [[ $name != none ]]; then
		loader_start "$name" "${tns:-$ns}" $body $stats || { ns_del "$ns"; [[ -n $tns ]] && ns_del "$tns"; return 1; }
	fi
	lg_start_in "$cg" "$ns" run -n "$N" -c "$C" -r 1 || {
		[[ $name != none ]] && loader_end
		ns_del "$ns"
		[[ -n $tns ]] && ns_del "$tns"
		return 1
	}
	lg_go
	lg_end || say "loadgen: $(tail -n 2 "$WORK/loadgen.err" 2>/dev/null)"
	conns=$(kv "$WORK/lg.out" conns) thr=$(kv "$WORK/lg.out" conns_per_s)
	if [[ $name != none ]]; then
		loader_end
		figs=$(ld_figures "${conns:-1}")
	fi
	ns_del "$ns"
	[[ -n $tns ]] && ns_del "$tns"
	cpu=$(awk -F, -v n="${conns:-1}" '$3 == "task-clock" { printf "%d", $1 * 1e6 / n }' \
		"$WORK/lg.out.perf" 2>/dev/null)
	echo "$name ${thr:-0} ${cpu:--} $figs"
}

cover() {
	local flags

	for flags in "" -L; do
		ns_new || return 1
		echo "cover${flags:+ ($flags: STATE_CB not asked for at TCP_LISTEN_CB)}:"
		"$B/sockops_ab" $flags -n "/run/netns/$NS" cover "$CG" 2>>"$WORK/ld.err" |
			awk '/^scenario/ { s = $2; print "  " s; next }
				$1 == "trans" { printf "    %-10s %s->%s %s\n", $2, $3, $4, $5; next }
				$1 == "op" { ops = ops " " $2 "=" $3; next }
				$1 == "adopted" { print "    sockets given STATE_CB by iter/tcp: " $2 \
					($4 ? " (bpf_setsockopt failed: " $4 ")" : ""); next }
				/sockops_nested/ { print "    sock_ops callbacks:" ops; ops = "" }'
		ns_del "$NS"
	done
}

recursion() {
	local r conns

	echo "recursion: both hooks with their bodies, $N connections, $P pairs x $C at a time, spin $SPIN"
	for ((r = 0; r < ROUNDS; r++)); do
		ns_new || return 1
		loader_start both "$NS" -b -a -s -S "$SPIN" || return 1
		lg_start_in "$CG" "$NS" run -P "$P" -n "$N" -c "$C" -r 1 || return 1
		lg_go
		lg_end
		conns=$(kv "$WORK/lg.out" conns)
		loader_end
		ns_del "$NS"
		echo "  round $((r + 1)): $conns connections; transitions seen (tracepoint main, its twin; sock_ops):" \
			"$(awk '/^trans / { t[$2] += $5 } END { printf "%d, %d; %d", t["tp"], t["tp_nested"], t["sockops"] }' \
				"$WORK/ld.out")"
		awk '/^prog / { print "    " $0 } /^sockops_nested/ { print "    sock_ops runs nested: " $2 }' \
			"$WORK/ld.out"
		# What sock_ops cannot see (CLOSE->SYN_SENT, CLOSE->LISTEN,
		# LISTEN->SYN_RECV) apart, the two should agree transition by transition.
		awk '/^trans / { k = $3 "->" $4; if ($2 == "sockops") s[k] += $5; else t[k] += $5; keys[k] }
			END { for (k in keys) if (s[k] != t[k]) printf "    %s: tracepoint %d, sock_ops %d\n", k, t[k], s[k] }' \
			"$WORK/ld.out" | sort
	done
}

rounds() {
	local where=$1 r k name line names=(none tp sockops)

	: >"$WORK/$where.res"
	for ((r = 0; r < ROUNDS; r++)); do
		for ((k = 0; k < 3; k++)); do
			name=${names[(k + r) % 3]}
			one "$where" "$name" >"$WORK/one.line"; line=$(<"$WORK/one.line")
			echo "$where round $((r + 1)): $line"
			echo "$r $line" >>"$WORK/$where.res"
		done
	done
	echo "$where: min / median / max of $ROUNDS rounds (a connection)"
	echo "  none conns/s: $(awk '$2 == "none" { print $3 }' "$WORK/$where.res" | stats)"
	echo "  none CPU ns/conn (workload): $(awk '$2 == "none" { print $4 }' "$WORK/$where.res" | stats)"
	for name in tp sockops; do
		echo "  $name conns/s / none: $(awk -v w="$name" '$2 == "none" { n[$1] = $3 } $2 == w { t[$1] = $3 }
			END { for (r in t) if (n[r] > 0) print t[r] / n[r] }' "$WORK/$where.res" | stats)"
		echo "  $name CPU / none (workload): $(awk -v w="$name" '$2 == "none" { n[$1] = $4 } $2 == w { t[$1] = $4 }
			END { for (r in t) if (n[r] > 0) print t[r] / n[r] }' "$WORK/$where.res" | stats)"
		col=4
		for fig in "CPU ns/conn (workload)" "program runs/conn" "BPF ns/conn" "transitions/conn, tp" \
			"transitions/conn, tp twin" "transitions/conn, sock_ops" "records/conn" \
			"recursion_misses" "sock_ops nested"; do
			echo "  $name $fig: $(awk -v w="$name" -v c="$col" '$2 == w { print $c }' "$WORK/$where.res" | stats)"
			col=$((col + 1))
		done
	done
}

# The recorded churn -> ns a connection of each symbol group: the
# tracepoint's dispatch (other agents' programs on this tracepoint too: a
# shared machine's; subtract the same round's none), the cgroup hook's,
# these programs (JITed), the rest of bpf (helpers; other agents'
# programs), and the whole.
profile_groups() {
	perf report -i "$WORK/lg.out.data" --stdio -n --sort sym 2>/dev/null |
		awk -v n="$1" '$2 ~ /^[0-9]+$/ && $3 ~ /^\[/ {
			sym = $4; c = $2; all += c
			if (sym ~ /^(__traceiter_inet_sock_set_state|bpf_trace_run[0-9]|__bpf_trace_inet_sock_set_state|__bpf_trace_run)$/) tp += c
			else if (sym ~ /^(__cgroup_bpf_run_filter_sock_ops|bpf_prog_run_array_cg|tcp_call_bpf)/) cg += c
			else if (sym ~ /^bpf_prog_.*_handle_(state_t|sockops)/) prog += c
			else if (sym ~ /bpf/) other += c }
			END { k = 100000 / n; printf "%d %d %d %d %d\n", tp * k, cg * k, prog * k, other * k, all * k }'
}

profile() {
	local r k name where line names=(none tp sockops untraced)

	: >"$WORK/profile.res"
	for ((r = 0; r < ROUNDS; r++)); do
		for ((k = 0; k < 4; k++)); do
			name=${names[(k + r) % 4]} where=profile
			case $name in
			none) line=$(RECORD=1 one profile none) ;;
			untraced) line=$(RECORD=1 one profile_untraced sockops) ;;
			*) line=$(RECORD=1 one profile "$name") ;;
			esac
			line="$name $(profile_groups "$(kv "$WORK/lg.out" conns)")"
			echo "profile round $((r + 1)): $line"
			echo "$r $line" >>"$WORK/profile.res"
		done
	done
	echo "profile: min / median / max of $ROUNDS rounds, ns a connection (perf samples of 100 us)"
	for name in none tp sockops untraced; do
		col=3
		for fig in "tracepoint dispatch" "cgroup sock_ops dispatch" "these programs (JITed)" \
			"other bpf symbols" "all the workload's CPU"; do
			echo "  $name $fig: $(awk -v w="$name" -v c="$col" '$2 == w { print $c }' "$WORK/profile.res" | stats)"
			col=$((col + 1))
		done
	done
}

for mode in $MODES; do
	case $mode in
	cover) cover ;;
	recursion) recursion ;;
	traced | calls | untraced) rounds "$mode" ;;
	profile) profile ;;
	*) say "unknown mode $mode" ;;
	esac
done
