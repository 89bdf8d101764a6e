#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Who a socket belongs to, in both kernel-side modes (socket storage, the
# default; --per-transition, what kernels before 6.3 get): server-side
# orphans charged to the server and equal to sock_diag's; sockets reset
# before they are accepted and a starved ring leave no owner behind for
# the next socket at the same address (no untraced process ever shows up,
# accepted equal to the fixture's own count); workers accepting from one
# shared listener are each charged their own accepts, and an untraced
# worker's accepts are charged to nobody; TIME_WAIT taken over under
# tcp_tw_reuse counted as ended early, live TIME_WAIT equal to the
# namespace's sock_diag. Each case in a network namespace of its own.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
NS_SEQ=0

# mode_ns TAG: a fresh namespace NS for one case (lo up, deleted at exit,
# its orphans killed first: they pin it); the agent and the fixtures run
# in it.
mode_ns() {
	NS=connscope-id${1%%/*}$((++NS_SEQ))-$$
	new_netns "$NS" || { fail "$1/netns" "ip netns add $NS"; return 1; }
	on_exit "ip netns exec $NS ss -K state fin-wait-1 state fin-wait-2 >/dev/null 2>&1"
	FX_WRAP=(ip netns exec "$NS")
	CS_WRAP=(ip netns exec "$NS")
}

absent() {	# absent JSON PID...: how many of the pids have books
	local p n=0
	for p in "${@:2}"; do
		n=$((n + $(jqn "[.processes[] | select(.pid == $p)] | length" "$1")))
	done
	echo "$n"
}

# P PID: the jq path of a process's books.
P() { echo ".processes[] | select(.pid == $1)"; }

# stats_field LINE WORD: the number after WORD in a tcpfix stats line.
stats_field() { awk -v w="$2" '{for (i = 1; i < NF; i++) if ($i == w) {print $(i + 1); exit}}' <<<"$1"; }

# ---- 1. server-side orphans: FIN_WAIT1 with unsent data, peer not reading ----
orphans_case() {
	local m=$1 K=3 M=5 J spid cpid
	shift
	mode_ns "$m/orphans" || return
	fix_start "osrv$m" "${FX_WRAP[@]}" "$FIXTURES/orphanfix" server -p 8080 -w $K &&
		fix_expect "osrv$m" "listening *" 10 || { fail "$m/orphans/start" server; return; }
	spid=${FIX_LINE##* }
	fix_start "ocli$m" "${FX_WRAP[@]}" "$FIXTURES/orphanfix" client -p 8080 -n $M --hold &&
		fix_expect "ocli$m" "ready *" 10 || { fail "$m/orphans/start" client; return; }
	cpid=${FIX_LINE#ready }
	J=$TMP/orphans_$m.json
	cs_attach "$J" "$TMP/orphans_$m.err" -p "$spid,$cpid" -j -i 0.3 "$@" ||
		{ fail "$m/orphans/attach" "$(cat "$TMP/orphans_$m.err")"; return; }
	fix_send "ocli$m" go
	fix_expect "ocli$m" "held *" 30
	assert_eq "$FIX_LINE" "held $M" "$m/orphans/client_holds"
	wait_for "fix_send osrv$m stats && fix_expect osrv$m 'accepted *' 5 && [ \"\$FIX_LINE\" = 'accepted $M closed $K' ]" 30
	assert_eq "$FIX_LINE" "accepted $M closed $K" "$m/orphans/server_filled_and_closed"
	# Orphans: sockets without an inode. The server's ends, FIN_WAIT1
	# because the FIN waits behind data the peer's shut window refuses.
	fw1() { inns ss -Htane state fin-wait-1 | grep -c ' ino:0 '; }
	wait_for "[ \$(fw1) -eq $K ]" 20
	local kernel; kernel=$(fw1)
	cs_stop
	assert_eq "$?" 0 "$m/orphans/exit_status"
	assert_eq "$(jqn .run.records "$J" | grep -c "$([ "$m" = pt ] && echo 'per state transition' || echo 'per socket: ')")" 1 "$m/orphans/mode_ran"
	assert_eq "$kernel" $K "$m/orphans/sock_diag_fin_wait1_orphans"
	assert_eq "$(jqn "$(P "$spid") | [.orphans.now, .orphans.fin_wait1] | @tsv" "$J")" \
		"$(printf '%s\t%s' "$kernel" "$kernel")" "$m/orphans/charged_to_server_eq_sock_diag"
	# (.totals.orphaned counts orphans seen by their end: these live on.)
	assert_eq "$(jqn "$(P "$spid") | [.totals.connections_accepted, .tcp.orphan, .tcp.established] | @tsv" "$J")" \
		"$(printf '%s\t%s\t%s' $M $K $((M - K)))" "$m/orphans/server_accepted_and_holds"
	assert_eq "$(jqn "$(P "$cpid") | [.orphans.now, .totals.connections_opened, .tcp.established] | @tsv" "$J")" \
		"$(printf '0\t%s\t%s' $M $M)" "$m/orphans/client_holds_no_orphan"
	assert_eq "$(jqn '.unattributed.tcp.orphan' "$J")" 0 "$m/orphans/none_unattributed"
	fix_send "ocli$m" exit
	fix_send "osrv$m" exit 2>/dev/null
}

# ---- 2a. sockets reset before the server accepts them ----
# A traced client connects and resets at once (SO_LINGER 0), R times,
# against a traced server; meanwhile an untraced client makes ordinary
# connections to the same server, and an untraced pair churns on another
# port: every socket of theirs may land where a dead one of ours was.
reset_case() {
	local m=$1 R=500 U=300 J st acc
	shift
	mode_ns "$m/reset" || return
	fx_start "rs$m" server -p 8080 && fx_start "rc$m" client -p 8080 &&
		fx_start "uc$m" client -p 8080 && fx_start "us$m" server -p 8081 &&
		fx_start "uo$m" client -p 8081 || { fail "$m/reset/start" fixtures; return; }
	local s=FX_PID_rs$m c=FX_PID_rc$m u=FX_PID_uc$m us=FX_PID_us$m uo=FX_PID_uo$m
	J=$TMP/reset_$m.json
	cs_attach "$J" "$TMP/reset_$m.err" -p "${!s},${!c}" -j -i 0.2 "$@" ||
		{ fail "$m/reset/attach" "$(cat "$TMP/reset_$m.err")"; return; }
	fix_send "rc$m" "churn-reset $R"
	fix_send "uc$m" "churn $U"
	fix_send "uo$m" "churn $U"
	fix_expect "rc$m" "churned *" 60; assert_eq "$FIX_LINE" "churned $R" "$m/reset/traced_reset_churned"
	fix_expect "uc$m" "churned *" 60; assert_eq "$FIX_LINE" "churned $U" "$m/reset/untraced_churned"
	fix_expect "uo$m" "churned *" 60; assert_eq "$FIX_LINE" "churned $U" "$m/reset/untraced_elsewhere_churned"
	wait_for "[ \"\$(fx_cmd rs$m stats)\" = 'stats accepted $((R + U)) closed $((R + U)) open 0' ]" 30
	st=$(fx_cmd "rs$m" stats)
	acc=$(stats_field "$st" accepted)
	assert_eq "$st" "stats accepted $((R + U)) closed $((R + U)) open 0" "$m/reset/server_accepted_all"
	wait_for "[ \"\$(fx_cmd us$m stats)\" = 'stats accepted $U closed $U open 0' ]" 30
	cs_stop
	assert_eq "$?" 0 "$m/reset/exit_status"
	# accept() returned all of them, but one reset while it waited in the
	# queue was a dead socket by then: never accepted, not accepted (the
	# socket-storage mode sees no accept() at all). Only our resets can be.
	assert_eq "$(jqn "$(P "${!s}") | .totals | .connections_accepted + .connections_never_accepted" "$J")" \
		"$acc" "$m/reset/server_accepted_and_never_eq_fixture"
	assert_eq "$(jqn "$(P "${!s}") | .totals | .connections_accepted >= $U and .connections_never_accepted <= $R" "$J")" \
		true "$m/reset/never_accepted_only_resets"
	assert_eq "$(jqn "$(P "${!s}") | [.totals.connections_closed, .totals.resets, .totals.connections_opened] | @tsv" "$J")" \
		"$(printf '%s\t%s\t0' "$acc" $R)" "$m/reset/server_closed_resets_no_opens"
	assert_eq "$(jqn "$(P "${!c}") | [.totals.connections_opened, .totals.connections_closed, .totals.connections_accepted] | @tsv" "$J")" \
		"$(printf '%s\t%s\t0' $R $R)" "$m/reset/client_opened_exact"
	assert_eq "$(absent "$J" "${!u}" "${!us}" "${!uo}")" 0 "$m/reset/untraced_never_charged"
	assert_eq "$(jqn '.processes | length' "$J")" 2 "$m/reset/only_the_targets"
	assert_eq "$(jqn '.agent.events_lost' "$J")" 0 "$m/reset/nothing_lost"
	# The per-transition mode drops an owner it finds at a new socket's
	# address (that is its defence); socket storage has no such owner.
	[ "$m" = sk ] && assert_eq "$(jqn '.agent.stale_owners_dropped' "$J")" 0 "$m/reset/no_stale_owner"
	echo "# $m reset: stale owners dropped $(jqn '.agent.stale_owners_dropped' "$J"), nested $(jqn '.agent.state_changes_nested' "$J"), unknown-owner records $(jqn '.agent.unknown_owner_events' "$J"), accept unresolved $(jqn '.agent.accept_unresolved' "$J")" >&2
	for f in rc uc uo rs us; do fx_stop "$f$m"; done
}

# ---- 2b. a starved ring, then more churn with an untraced client ----
starved_case() {
	local m=$1 N1=200 N2=300 U=300 J st acc
	shift
	mode_ns "$m/starved" || return
	fx_start "ss$m" server -p 8080 && fx_start "sc$m" client -p 8080 &&
		fx_start "su$m" client -p 8080 || { fail "$m/starved/start" fixtures; return; }
	local s=FX_PID_ss$m c=FX_PID_sc$m u=FX_PID_su$m
	J=$TMP/starved_$m.json
	cs_attach "$J" "$TMP/starved_$m.err" -p "${!s},${!c}" -j -i 0.2 --ringbuf-size 4096 "$@" ||
		{ fail "$m/starved/attach" "$(cat "$TMP/starved_$m.err")"; return; }
	kill -STOP "$CS_PID"
	assert_eq "$(fx_cmd "sc$m" "churn $N1")" "churned $N1" "$m/starved/churn_while_stopped"
	kill -CONT "$CS_PID"
	fix_send "sc$m" "churn $N2"
	fix_send "su$m" "churn $U"
	fix_expect "sc$m" "churned *" 60; assert_eq "$FIX_LINE" "churned $N2" "$m/starved/traced_churned"
	fix_expect "su$m" "churned *" 60; assert_eq "$FIX_LINE" "churned $U" "$m/starved/untraced_churned"
	wait_for "[ \"\$(fx_cmd ss$m stats)\" = 'stats accepted $((N1 + N2 + U)) closed $((N1 + N2 + U)) open 0' ]" 30
	st=$(fx_cmd "ss$m" stats)
	acc=$(stats_field "$st" accepted)
	cs_stop
	assert_eq "$?" 0 "$m/starved/exit_status"
	assert_eq "$acc" $((N1 + N2 + U)) "$m/starved/server_accepted_all"
	assert_eq "$(jqn '.agent.events_lost > 0 and .agent.losses.total > 0' "$J")" true "$m/starved/losses_counted"
	assert_eq "$(absent "$J" "${!u}")" 0 "$m/starved/untraced_never_charged"
	assert_eq "$(jqn '.processes | length' "$J")" 2 "$m/starved/only_the_targets"
	assert_eq "$(jqn "$(P "${!c}") | .totals.connections_opened <= $((N1 + N2)) and .totals.connections_accepted == 0" "$J")" \
		true "$m/starved/client_opened_at_most_made"
	assert_eq "$(jqn "$(P "${!s}") | .totals.connections_accepted <= $acc and .totals.connections_opened == 0" "$J")" \
		true "$m/starved/server_accepted_at_most_made"
	assert_eq "$(jqn '.agent.stale_owners_dropped' "$J")" 0 "$m/starved/no_stale_owner"
	echo "# $m starved: lost $(jqn '.agent.events_lost' "$J"), client opened $(jqn "$(P "${!c}") | .totals.connections_opened" "$J") of $((N1 + N2)), server accepted $(jqn "$(P "${!s}") | .totals.connections_accepted" "$J") of $acc" >&2
	for f in sc su ss; do fx_stop "$f$m"; done
}

# ---- 3. workers accepting from one listener their parent made ----
# workers_case MODE TRACE_W2(yes|no) FLAGS...
workers_case() {
	local m=$1 both=$2 J st pid w1 w2 a1=0 a2=0 c1=0 c2=0 name i
	shift 2
	name=$m/workers_$([ "$both" = yes ] && echo both_traced || echo one_untraced)
	mode_ns "$name" || return
	local f=wk$m$both
	fx_start "$f" server --workers 2 --defer-listen -p 8080 ||
		{ fail "$name/start" server; return; }
	read -r _ pid _ w1 w2 <<<"$FIX_LINE"
	fx_start "wc$f" client -p 8080 || { fail "$name/start" client; return; }
	J=$TMP/$f.json
	local targets="$pid,$w1"
	[ "$both" = yes ] && targets+=",$w2"
	cs_attach "$J" "$TMP/$f.err" -p "$targets" -j -i 0.2 "$@" ||
		{ fail "$name/attach" "$(cat "$TMP/$f.err")"; return; }
	assert_eq "$(fx_cmd "$f" listen)" "listening 8080 $pid" "$name/listening"
	# Which worker takes a connection is the kernel's choice: churn until
	# each has taken some (bounded).
	local made=0
	for ((i = 0; i < 20; i++)); do
		[ "$(fx_cmd "wc$f" "churn 50")" = "churned 50" ] || break
		made=$((made + 50))
		wait_for "[ \"\$(stats_field \"\$(fx_cmd $f stats)\" closed)\" = $made ]" 20
		st=$(fx_cmd "$f" stats)
		read -r _ _ _ _ _ _ _ _ _ a1 c1 _ _ a2 c2 <<<"$st"
		((a1 > 0 && a2 > 0)) && break
	done
	assert_eq "$((a1 > 0 && a2 > 0)):$((a1 + a2)):$((c1 + c2))" "1:$made:$made" "$name/both_workers_accepted"
	cs_stop
	assert_eq "$?" 0 "$name/exit_status"
	assert_eq "$(jqn "$(P "$w1") | [.totals.connections_accepted, .totals.connections_closed] | @tsv" "$J")" \
		"$(printf '%s\t%s' "$a1" "$c1")" "$name/worker1_its_own"
	if [ "$both" = yes ]; then
		assert_eq "$(jqn "$(P "$w2") | [.totals.connections_accepted, .totals.connections_closed] | @tsv" "$J")" \
			"$(printf '%s\t%s' "$a2" "$c2")" "$name/worker2_its_own"
	else
		assert_eq "$(absent "$J" "$w2")" 0 "$name/untraced_worker_not_in_books"
	fi
	assert_eq "$(jqn "[.processes[].totals.connections_accepted] | add" "$J")" \
		"$([ "$both" = yes ] && echo "$made" || echo "$a1")" "$name/accepts_only_traced_workers"
	# The parent only listens: the accepts were never its own (an untraced
	# worker's neither), nor any interval's.
	assert_eq "$(jqn "$(P "$pid") | [.totals.connections_accepted, ([.intervals[].connections_accepted] | max // 0)] | @tsv" "$J")" \
		"$(printf '0\t0')" "$name/parent_accepted_none"
	assert_eq "$(jqn "$(P "$pid") | [.totals.connections_closed, .tcp.established, .tcp.close_wait] | @tsv" "$J")" \
		"$(printf '0\t0\t0')" "$name/parent_closed_none"
	fx_stop "wc$f"; fx_stop "$f"
}

# ---- 4. TIME_WAIT taken over under tcp_tw_reuse ----
tw_reuse_case() {
	local m=$1 N=40 J kernel_tw C
	shift
	mode_ns "$m/tw_reuse" || return
	# Eight local ports: from the ninth connection on, each connect()
	# takes over a TIME_WAIT of the client's (tcp_tw_reuse=1).
	inns sysctl -qw net.ipv4.tcp_tw_reuse=1
	inns sysctl -qw net.ipv4.ip_local_port_range="40000 40007"
	fx_start "ts$m" server -p 8080 && fx_start "tc$m" client -p 8080 ||
		{ fail "$m/tw_reuse/start" fixtures; return; }
	local c=FX_PID_tc$m s=FX_PID_ts$m
	J=$TMP/tw_$m.json
	cs_attach "$J" "$TMP/tw_$m.err" -p "${!c},${!s}" -j -i 0.2 "$@" ||
		{ fail "$m/tw_reuse/attach" "$(cat "$TMP/tw_$m.err")"; return; }
	assert_eq "$(fx_cmd "tc$m" "churn-reuse $N" 120)" "churned $N" "$m/tw_reuse/churned"
	closing() { inns ss -Htan state fin-wait-1 state fin-wait-2 state closing state last-ack state close-wait | wc -l; }
	wait_for '[ "$(closing)" -eq 0 ]' 30 || fail "$m/tw_reuse/quiet" "$(closing) sockets still closing"
	wait_for "[ \"\$(fx_cmd ts$m stats)\" = 'stats accepted $N closed $N open 0' ]" 20
	# The agent's map of traced TIME_WAIT sockets holds the live ones
	# only: each one taken over (killed early) leaves it (before: it
	# stayed until a later tw socket took its address). With no
	# TIME_WAIT hook (the census, the default here) it holds none.
	local want_map
	want_map=$(inns ss -Htan state time-wait | wc -l)
	[[ " $* " == *" --tw-timers "* ]] || want_map=0
	assert_eq "$(agent_map_entries "$CS_PID" tw_owners)" "$want_map" \
		"$m/tw_reuse/tw_map_holds_live_only"
	cs_stop
	assert_eq "$?" 0 "$m/tw_reuse/exit_status"
	kernel_tw=$(inns ss -Htan state time-wait | wc -l)
	C=$(P "${!c}")
	assert_eq "$kernel_tw" 8 "$m/tw_reuse/kernel_holds_one_per_port"
	assert_eq "$(jqn "$C | .time_wait" "$J")" "$kernel_tw" "$m/tw_reuse/live_eq_sock_diag"
	assert_eq "$(jqn "$C | .totals.time_wait_entered" "$J")" $N "$m/tw_reuse/entered"
	assert_eq "$(jqn "$C | .totals.time_wait_ended_early > 0 and .totals.time_wait_expired == 0" "$J")" true \
		"$m/tw_reuse/ended_early_counted"
	assert_eq "$(jqn "$C | .totals.time_wait_entered - .totals.time_wait_ended_early - .totals.time_wait_expired" "$J")" \
		"$kernel_tw" "$m/tw_reuse/entered_eq_ended_plus_live"
	assert_eq "$(tw_unbalanced "$J")" "" "$m/tw_reuse/tw_books_balance"
	assert_eq "$(jqn ".agent.time_wait_reused" "$J")" $((N - kernel_tw)) "$m/tw_reuse/reused_counted"
	assert_eq "$(jqn "$(P "${!s}") | [.totals.connections_accepted, .totals.time_wait_entered] | @tsv" "$J")" \
		"$(printf '%s\t0' $N)" "$m/tw_reuse/server_accepted"
	assert_eq "$(jqn '.unattributed.tcp.time_wait' "$J")" 0 "$m/tw_reuse/none_unattributed"
	# Each TIME_WAIT's own socket is matched to the connection it ends,
	# also one that takes the place (and often the memory) of the one
	# before it with the same 4-tuple.
	assert_eq "$(jqn '.agent.time_wait_timer_unmatched' "$J")" 0 "$m/tw_reuse/every_tw_socket_matched"
	fx_stop "tc$m"; fx_stop "ts$m"
}

# ID_CASES: a subset of the cases, to run while working on one.
cases=" ${ID_CASES:-orphans reset starved workers tw_reuse} "
# mode_cases MODE FLAGS...: the cases, one after the other, in one mode.
mode_cases() {
	local m=$1
	shift
	[[ $cases == *" orphans "* ]] && orphans_case "$m" "$@"
	[[ $cases == *" reset "* ]] && reset_case "$m" "$@"
	[[ $cases == *" starved "* ]] && starved_case "$m" "$@"
	[[ $cases == *" workers "* ]] && workers_case "$m" yes "$@" &&
		workers_case "$m" no "$@"
	[[ $cases == *" tw_reuse "* ]] && tw_reuse_case "$m" "$@"
	FX_WRAP=() CS_WRAP=()
}
# Both modes at once, each case in a namespace of its own with its own
# fixtures and agent: the time is mostly agents loading, one core each
# (as 64_attach_midload's two agents a round).
lib_fork mode_cases pt --per-transition
PT_CASES=$BG_PID
mode_cases sk
wait "$PT_CASES" || fail pt/cases "the per-transition cases ended with status $? (a crash: their remaining results are missing)"
# The timer tracepoints, on request: each tw socket matched and followed
# in the kernel (tw_owners), re-arms and reuse of its memory included.
[[ $cases == *" tw_reuse "* ]] && tw_reuse_case tm --tw-timers
FX_WRAP=() CS_WRAP=()
