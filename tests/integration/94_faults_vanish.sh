#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Faults: what the agent watches vanishes under it.
# - attach --cgroup: the processes in the cgroup exit (one cleanly, one
#   killed) and the cgroup is removed: attach says so once (stderr, JSON,
#   HTML), ends by itself with status 3 (no target left, none can come) and
#   its report has the exact counts of before.
# - exporter --cgroup: the same; it keeps serving (new snapshots rendered),
#   the gone processes' series held with their final values (the grace).
# - the cgroup restarted (removed and made again at its path: a new cgroup,
#   a new id, as systemd and container runtimes do): attach --cgroup alone
#   whose check falls after the new one is there (it is stopped meanwhile),
#   attach --cgroup --comm and exporter --cgroup after they said the
#   removal: each says the re-creation once and follows the new cgroup,
#   whose processes (one there before the agent looked, one started after)
#   are counted exactly; attach without --comm still ends with status 3
#   once the new one is removed too.
# - fdleak --cgroup: follows a re-created cgroup, says it, and ends with
#   status 3 once the cgroup is removed with no target left (before: never).
# (A cgroup removed before the run is a row of 21_bad_input_table.)
# - targets in a network namespace that are killed, then the namespace
#   deleted, while a host target keeps attach / the exporter running: said
#   when it is no longer read and when its last TIME_WAIT ended; its
#   TIME_WAIT is not read as gone while it still lives (it ends with the
#   namespace: ended early, nothing "end unseen"), nothing of it reported
#   live afterwards, no spinning.
# After each agent ends, every BPF program, link and map it held is gone.
#
# The TIME_WAIT charged to the targets are checked live (".time_wait", the
# namespaces' 23 and 4 that end with them), so every fixture but the host
# target runs in a network namespace of the test's own with tcp_rfc1337=1
# (fx_twns says why; the attach --cgroup agents with them): resets on a
# loaded machine would end them early in ours. The host target stays in
# ours: only its connections are counted.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)

# ended PID: our child PID has exited (a zombie until waited for).
ended() {
	local s
	s=$(_lib_pstate "$1") || return 0
	[[ $s == Z ]]
}

# released NAME LIST: every object of LIST (bpf_owned's) is gone; the
# kernel frees them once the last fd is closed (deferred): bounded wait.
released() {
	if [[ $(grep -c '^prog ' <<<"$2") -lt 3 ]]; then
		fail "$1/held_programs" "fdinfo listed: $(tr '\n' ' ' <<<"$2")"
		return
	fi
	if wait_for "[ -z \"\$(bpf_alive \"\$2\")\" ]" 20; then
		ok "$1/bpf_objects_released"
	else
		fail "$1/bpf_objects_released" "still there: $(bpf_alive "$2" | tr '\n' ' ')"
	fi
}

# metric PORT NAME PID: the value of NAME{pid="PID",...} in a scrape.
metric() {
	curl -s --max-time 5 "http://127.0.0.1:$1/metrics" |
		awk -v n="$2{" -v p="pid=\"$3\"" 'index($0, n) == 1 && index($0, p) {print $NF}'
}
# snapshots PORT: connscope_scrapes_total as rendered into the snapshot
# served: it moves only when a new snapshot is published.
snapshots() {
	curl -s --max-time 5 "http://127.0.0.1:$1/metrics" | awk '$1 == "connscope_scrapes_total" {print $2}'
}

MNT=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
[[ -n $MNT ]] || { fail cgroup/mount "no cgroup2 mount in /proc/self/mountinfo"; exit 0; }
# in_cgroup CMD...: moves itself into $CG, then becomes CMD.
in_cgroup() { echo $BASHPID >"$CG/cgroup.procs" && exec "$@"; }
# cg_client NAME CGROUP: a tcpfix client of $port inside CGROUP (and in
# FX_WRAP's network namespace, entered after the move: ip netns exec hides
# the cgroup2 mount).
cg_client() {
	fix_start "$1" bash -c "$(declare -f in_cgroup); CG='$2'; in_cgroup \"\$@\"" _ \
		"${FX_WRAP[@]}" "$FIXTURES/tcpfix" client -p "$port" && fix_expect "$1" "ready *" 10
}
# cg_server NAME CGROUP PORT: a tcpfix server of PORT inside CGROUP (and
# FX_WRAP's namespace).
cg_server() {
	fix_start "$1" bash -c "$(declare -f in_cgroup); CG='$2'; in_cgroup \"\$@\"" _ \
		"${FX_WRAP[@]}" "$FIXTURES/tcpfix" server -p "$3" && fix_expect "$1" "listening *" 10
}
# new_cgroup PATH: made now, removed at exit if the test did not (registered
# before the processes put in it, so it runs after they are gone).
new_cgroup() {
	mkdir "$1" || return 1
	on_exit "rmdir '$1' 2>/dev/null"
}

fx_twns vanishfx
MAIN_WRAP=("${FX_WRAP[@]}")
# The attach --cgroup agents run in that namespace too: the TIME_WAIT of
# targets that exited are read only in the agent's own namespace (no
# process is left to enter another by; the netns case below). nsenter,
# not ip netns exec, which hides the cgroup2 mount --cgroup names.
CS_WRAP=(nsenter "--net=/run/netns/$NS")
port=$(fx_port)
fx_start srv server -p "$port" || fail start server

# ---- attach --cgroup: its processes exit, then the cgroup is removed ----
CG=$MNT/connscope-vanish-$$
new_cgroup "$CG" || { fail cgroup/mkdir "cannot make $CG"; exit 0; }
cg_client c1 "$CG" || fail cgroup/start c1
J=$TMP/cg.json
cs_attach "$J" "$TMP/cg.err" --cgroup "$CG" -i 0.2 -j --report "$TMP/cg.html" ||
	{ fail cgroup/attach "$(cat "$TMP/cg.err")"; exit 0; }
held=$(bpf_owned "$CS_PID")
cg_client c2 "$CG" || fail cgroup/start c2
assert_eq "$(fx_cmd c1 "churn 3")" "churned 3" cgroup/c1_churned
assert_eq "$(fx_cmd c2 "churn 4")" "churned 4" cgroup/c2_churned
assert_eq "$(fx_cmd c2 "open 2")" "opened 2" cgroup/c2_holds_2
wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted 9 closed 7 open 2' ]" 20 ||
	fail cgroup/server_saw_all "$(fx_cmd srv stats)"
fx_stop c1
# Killed with 2 connections open: the kernel closes them at its exit.
kill -KILL "$c2_PID"
wait "$c2_PID" 2>/dev/null
wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted 9 closed 9 open 0' ]" 20 ||
	fail cgroup/server_saw_closes "$(fx_cmd srv stats)"
wait_for "[ -z \"\$(cat '$CG/cgroup.procs')\" ]" 10
if rmdir "$CG"; then ok cgroup/removed; else fail cgroup/removed "rmdir $CG failed"; fi
# Nothing can join any more and no target is left: it ends by itself.
wait_for "ended $CS_PID" 20 || fail cgroup/attach_ended_by_itself "still running 20 s after the rmdir"
wait "$CS_PID"
assert_eq "$?" 3 cgroup/attach_exit_status_3
assert_eq "$(grep -c "cgroup $CG was removed after [0-9.]* s" <(msg_join "$TMP/cg.err"))" 1 cgroup/removal_said_once
# Each wrapped at 80 columns, however long the cgroup's path.
fits80 cgroup/messages "$TMP/cg.err"
assert_eq "$(jqn '.run.cgroup_removed_s > 0' "$J")" true cgroup/json_cgroup_removed_s
assert_eq "$(jqn .run.end_reason "$J")" "target exited" cgroup/json_end_reason
assert_eq "$(grep -c 'data-k="cgroup_removed"' "$TMP/cg.html")" 1 cgroup/html_says_removed
p1=".processes[] | select(.pid == $c1_PID)" p2=".processes[] | select(.pid == $c2_PID)"
tot='.totals.connections_opened, .totals.connections_closed, .totals.time_wait_entered, .time_wait'
assert_eq "$(jqn "[$p1 | .exited, $tot] | join(\" \")" "$J")" "true 3 3 3 3" cgroup/c1_exact
assert_eq "$(jqn "[$p2 | .exited, (.joined_s > 0), $tot] | join(\" \")" "$J")" "true true 6 6 6 6" \
	cgroup/c2_joined_killed_exact
# The TIME_WAIT charged to them is the kernel's: the clients closed first.
assert_eq "$(jqn "[($p1), ($p2) | .time_wait] | add" "$J")" "$(tw_on_port "$port")" cgroup/time_wait_eq_kernel
assert_eq "$(jqn '[.agent.losses.total, .agent.time_wait_end_unseen] | join(" ")' "$J")" "0 0" \
	cgroup/nothing_lost
assert_eq "$(tw_unbalanced "$J")" "" cgroup/tw_books_balance
released cgroup "$held"

# ---- attach --cgroup: the cgroup restarted before attach looked ----
CG=$MNT/connscope-vanish-re-$$
new_cgroup "$CG" || { fail restart/mkdir "cannot make $CG"; exit 0; }
cg_client r1 "$CG" || fail restart/start r1
J=$TMP/re.json
cs_attach "$J" "$TMP/re.err" --cgroup "$CG" -i 0.2 -j --report "$TMP/re.html" ||
	{ fail restart/attach "$(cat "$TMP/re.err")"; exit 0; }
held=$(bpf_owned "$CS_PID")
assert_eq "$(fx_cmd r1 "churn 2")" "churned 2" restart/r1_churned
fx_stop r1
wait_for "[ -z \"\$(cat '$CG/cgroup.procs')\" ]" 10
wait_for "grep -q 'process $r1_PID (tcpfix) exited' '$TMP/re.err'" 10
# The unit restarts while attach is stopped: removed, made again, and its
# server already listening when attach looks again.
rport=$(fx_port)
if kill -STOP "$CS_PID" && rmdir "$CG" && mkdir "$CG" && cg_server rs "$CG" "$rport"; then
	ok restart/recreated_with_server
else
	fail restart/recreated_with_server "rmdir/mkdir $CG or the server failed"
fi
kill -CONT "$CS_PID"
wait_for "grep -q 'process $rs_PID (tcpfix) joined the targets' '$TMP/re.err' || ended $CS_PID" 20 ||
	fail restart/server_joined "$(cat "$TMP/re.err")"
# Clients outside the cgroup (not traced) to the server; one inside the
# new cgroup, started now, to the first server.
fx_start rout client -p "$rport" || fail restart/start rout
assert_eq "$(fx_cmd rout "churn 5")" "churned 5" restart/rout_churned
cg_client r2 "$CG" || fail restart/start r2
assert_eq "$(fx_cmd r2 "churn 4")" "churned 4" restart/r2_churned
wait_for "[ \"\$(fx_cmd rs stats)\" = 'stats accepted 5 closed 5 open 0' ]" 20 ||
	fail restart/server_saw_all "$(fx_cmd rs stats)"
fx_stop rout
fx_stop r2
fx_stop rs
wait_for "[ -z \"\$(cat '$CG/cgroup.procs')\" ]" 10
if rmdir "$CG"; then ok restart/removed_again; else fail restart/removed_again "rmdir $CG failed"; fi
wait_for "ended $CS_PID" 20 || fail restart/attach_ended_by_itself "still running 20 s after the rmdir"
wait "$CS_PID"
assert_eq "$?" 3 restart/attach_exit_status_3
assert_eq "$(grep -c "cgroup $CG was re-created after [0-9.]* s.*following the new one" <(msg_join "$TMP/re.err"))" 1 \
	restart/recreation_said_once
assert_eq "$(grep -c "cgroup $CG was removed after [0-9.]* s" <(msg_join "$TMP/re.err"))" 1 restart/removal_said_once
fits80 restart/messages "$TMP/re.err"
assert_eq "$(jqn '[.run.cgroup_recreated, .run.cgroup_removed_s > .run.cgroup_recreated_s, .run.end_reason] | join(" ")' "$J")" \
	"1 true target exited" restart/json_recreated_then_removed
assert_eq "$(grep -c 'data-k="cgroup_recreated"' "$TMP/re.html")$(grep -c 'data-k="cgroup_removed"' "$TMP/re.html")" 11 \
	restart/html_says_both
ps=".processes[] | select(.pid == $rs_PID)" p2=".processes[] | select(.pid == $r2_PID)"
assert_eq "$(jqn "[$ps | .exited, (.joined_s > 0), .totals.connections_accepted, .totals.connections_closed] | join(\" \")" "$J")" \
	"true true 5 5" restart/server_in_new_cgroup_exact
assert_eq "$(jqn "[$p2 | .exited, (.joined_s > 0), $tot] | join(\" \")" "$J")" "true true 4 4 4 4" \
	restart/client_in_new_cgroup_exact
assert_eq "$(jqn "[.processes[] | select(.pid == $r1_PID) | .totals.connections_opened] | add" "$J")" 2 \
	restart/old_cgroup_client_exact
assert_eq "$(jqn '[.agent.losses.total, .agent.time_wait_end_unseen] | join(" ")' "$J")" "0 0" \
	restart/nothing_lost
assert_eq "$(tw_unbalanced "$J")" "" restart/tw_books_balance
released restart "$held"

# ---- attach --cgroup --comm: removal said, then the restart followed ----
CG=$MNT/connscope-vanish-rc-$$
new_cgroup "$CG" || { fail restart_comm/mkdir "cannot make $CG"; exit 0; }
J=$TMP/rc.json
# --comm of no process: it only keeps attach from ending at the removal.
cs_attach "$J" "$TMP/rc.err" --cgroup "$CG" --comm cs-nomatch -i 0.2 -j ||
	{ fail restart_comm/attach "$(cat "$TMP/rc.err")"; exit 0; }
held=$(bpf_owned "$CS_PID")
rmdir "$CG"
wait_for "msg_join '$TMP/rc.err' | grep -q 'cgroup $CG was removed'" 10 ||
	fail restart_comm/removal_said "$(cat "$TMP/rc.err")"
mkdir "$CG"
wait_for "msg_join '$TMP/rc.err' | grep -q 'cgroup $CG was re-created'" 10 ||
	fail restart_comm/recreation_said "$(cat "$TMP/rc.err")"
cg_client r3 "$CG" || fail restart_comm/start r3
assert_eq "$(fx_cmd r3 "churn 3")" "churned 3" restart_comm/r3_churned
fx_stop r3
wait_for "[ -z \"\$(cat '$CG/cgroup.procs')\" ]" 10
rmdir "$CG"
wait_for "[ \$(msg_join '$TMP/rc.err' | grep -c 'cgroup $CG was removed') -ge 2 ] || ended $CS_PID" 10
if ended "$CS_PID"; then fail restart_comm/runs_on_with_comm "ended: $(cat "$TMP/rc.err")"; fi
cs_stop
assert_eq "$?" 0 restart_comm/exit_status
assert_eq "$(grep -c "cgroup $CG was removed after [0-9.]* s" <(msg_join "$TMP/rc.err"))" 2 restart_comm/each_removal_said_once
fits80 restart_comm/messages "$TMP/rc.err"
assert_eq "$(jqn "[.processes[] | select(.pid == $r3_PID) | .exited, (.joined_s > 0), $tot] | join(\" \")" "$J")" \
	"true true 3 3 3 3" restart_comm/client_in_new_cgroup_exact
assert_eq "$(jqn '[.run.cgroup_recreated, .run.cgroup_removed_s > .run.cgroup_recreated_s] | join(" ")' "$J")" "1 true" \
	restart_comm/json_recreated
released restart_comm "$held"
CS_WRAP=()

# ---- exporter --cgroup: the same, and it keeps serving ----
CG=$MNT/connscope-vanish-exp-$$
new_cgroup "$CG" || { fail exporter/mkdir "cannot make $CG"; exit 0; }
cg_client e1 "$CG" || fail exporter/start e1
eport=$(free_port)
spawn_bg "$CONNSCOPE" exporter --cgroup "$CG" --listen "127.0.0.1:$eport" -i 0.2 \
	>"$TMP/exp.out" 2>"$TMP/exp.err"
EXP=$BG_PID
wait_for "grep -q 'exporter serving' '$TMP/exp.err' || ended $EXP" 30 ||
	fail exporter/start "$(cat "$TMP/exp.err")"
held=$(bpf_owned "$EXP")
cg_client e2 "$CG" || fail exporter/start e2
assert_eq "$(fx_cmd e1 "churn 5")" "churned 5" exporter/e1_churned
assert_eq "$(fx_cmd e2 "churn 2")" "churned 2" exporter/e2_churned
opened='connscope_process_connections_opened_total'
wait_for "[ \"\$(metric $eport $opened $e1_PID)\" = 5 ] && [ \"\$(metric $eport $opened $e2_PID)\" = 2 ]" 20
fx_stop e1
kill -KILL "$e2_PID"
wait "$e2_PID" 2>/dev/null
wait_for "[ -z \"\$(cat '$CG/cgroup.procs')\" ]" 10
if rmdir "$CG"; then ok exporter/cgroup_removed; else fail exporter/cgroup_removed "rmdir $CG failed"; fi
wait_for "msg_join '$TMP/exp.err' | grep -q 'cgroup $CG was removed' || ended $EXP" 10
n0=$(snapshots "$eport")
# Three more snapshots rendered after the removal: still at work.
if wait_for "[ \"\$(snapshots $eport)\" -ge $((${n0:-0} + 3)) ]" 20 && ! ended "$EXP"; then
	ok exporter/keeps_serving
else
	fail exporter/keeps_serving "snapshots $n0 -> $(snapshots "$eport"); $(cat "$TMP/exp.err")"
fi
assert_eq "$(grep -c "cgroup $CG was removed after [0-9.]* s" <(msg_join "$TMP/exp.err"))" 1 exporter/removal_said_once
# Held with their final values for the 60 s grace (freed after it:
# test_prom/selector_members_retired_after_grace).
assert_eq "$(metric "$eport" $opened "$e1_PID") $(metric "$eport" $opened "$e2_PID")" "5 2" \
	exporter/gone_series_held_final
# The unit restarts: a new cgroup at the path, followed; a process in it
# counted exactly.
mkdir "$CG"
wait_for "msg_join '$TMP/exp.err' | grep -q 'cgroup $CG was re-created' || ended $EXP" 10
assert_eq "$(grep -c "cgroup $CG was re-created after [0-9.]* s.*following the new one" <(msg_join "$TMP/exp.err"))" 1 \
	exporter/recreation_said_once
fits80 exporter/messages "$TMP/exp.err"
cg_client e3 "$CG" || fail exporter/start e3
assert_eq "$(fx_cmd e3 "churn 3")" "churned 3" exporter/e3_churned
if wait_for "[ \"\$(metric $eport $opened $e3_PID)\" = 3 ]" 20; then
	ok exporter/new_cgroup_counted
else
	fail exporter/new_cgroup_counted "$opened of $e3_PID: '$(metric "$eport" $opened "$e3_PID")'"
fi
fx_stop e3
wait_for "[ -z \"\$(cat '$CG/cgroup.procs')\" ]" 10
rmdir "$CG"
kill -TERM "$EXP"
wait "$EXP"
assert_eq "$?" 0 exporter/exit_status
released exporter "$held"

# ---- fdleak --cgroup: a restart followed, the removal ends it ----
CG=$MNT/connscope-vanish-fd-$$
new_cgroup "$CG" || { fail fdleak/mkdir "cannot make $CG"; exit 0; }
cg_client f1 "$CG" || fail fdleak/start f1
spawn_bg "$CONNSCOPE" fdleak --cgroup "$CG" -i 0.2 -j >"$TMP/fd.json" 2>"$TMP/fd.err"
FDL=$BG_PID
wait_for "grep -q '^connscope: tracing' '$TMP/fd.err' || ended $FDL" 30 ||
	fail fdleak/start "$(cat "$TMP/fd.err")"
held=$(bpf_owned "$FDL")
fx_stop f1
wait_for "grep -q 'process $f1_PID (tcpfix) exited' '$TMP/fd.err'" 10 ||
	fail fdleak/exit_said "$(cat "$TMP/fd.err")"
# Restarted while fdleak is stopped; a process in the new one before it looks.
kill -STOP "$FDL"
rmdir "$CG" && mkdir "$CG" && cg_client f2 "$CG" || fail fdleak/recreated "rmdir/mkdir $CG or f2 failed"
kill -CONT "$FDL"
wait_for "grep -q 'process $f2_PID (tcpfix) joined the targets' '$TMP/fd.err' || ended $FDL" 10 ||
	fail fdleak/new_cgroup_process_joined "$(cat "$TMP/fd.err")"
fx_stop f2
wait_for "[ -z \"\$(cat '$CG/cgroup.procs')\" ]" 10
rmdir "$CG"
if wait_for "ended $FDL" 20; then
	ok fdleak/ended_by_itself
else
	fail fdleak/ended_by_itself "still running 20 s after the rmdir: $(cat "$TMP/fd.err")"
	kill -INT "$FDL"
fi
wait "$FDL"
assert_eq "$?" 3 fdleak/exit_status_3
assert_eq "$(grep -c "cgroup $CG was re-created after [0-9.]* s.*following the new one" <(msg_join "$TMP/fd.err"))" 1 \
	fdleak/recreation_said_once
assert_eq "$(grep -c "cgroup $CG was removed after [0-9.]* s.*fdleak ends once no target is left" <(msg_join "$TMP/fd.err"))" 1 \
	fdleak/removal_said_once
fits80 fdleak/messages "$TMP/fd.err"
assert_eq "$(jqn '[.run.end_reason, .run.cgroup_recreated, .run.cgroup_removed_s > .run.cgroup_recreated_s] | join(" ")' "$TMP/fd.json")" \
	"target exited 1 true" fdleak/json_run
assert_eq "$(jqn "[.processes[] | select(.pid == $f1_PID or .pid == $f2_PID) | .exited] | join(\" \")" "$TMP/fd.json")" \
	"true true" fdleak/both_followed_to_exit
released fdleak "$held"

# ---- targets in a network namespace killed, then the namespace deleted ----
fx_twns vanish
nsport=$(fx_port)
fx_start nsrv server -p "$nsport" || fail netns/start server
fx_start ncli client -p "$nsport" || fail netns/start client
# The host target, with a server of its own, in ours.
FX_WRAP=()
hport=$(free_port)
fx_start hsrv server -p "$hport" || fail netns/start host_server
fx_start hcli client -p "$hport" || fail netns/start host_client
ino=$(stat -Lc %i "/proc/$FX_PID_ncli/ns/net")
ns_tw() { ip netns exec "$NS" ss -Htan state time-wait | wc -l; }
# Text mode: its live table (a row per target each interval) says when
# each reconcile ran; the text report, HTML and --prom give the end.
O=$TMP/ns.out
# --tw-timers: a namespace no dump reads any more leaves its TIME_WAIT ends
# to the kernel's events (the census alone would count them end unseen
# once their 60 s are past: unit test_tw_books).
cs_attach "$O" "$TMP/ns.err" -p "$FX_PID_ncli,$FX_PID_nsrv,$FX_PID_hcli" -i 0.2 -H \
	--tw-timers --report "$TMP/ns.html" --prom "$TMP/ns.prom" ||
	{ fail netns/attach "$(cat "$TMP/ns.err")"; exit 0; }
held=$(bpf_owned "$CS_PID")
# rows: the live rows of the host target so far (one per reconcile).
rows() { grep -c "^[0-9:.]* *$FX_PID_hcli " "$O"; }
assert_eq "$(fx_cmd ncli "churn 20")" "churned 20" netns/churned
assert_eq "$(fx_cmd ncli "open 3")" "opened 3" netns/holds_3
wait_for "[ \"\$(fx_cmd nsrv stats)\" = 'stats accepted 23 closed 20 open 3' ]" 20
kill -KILL "$FX_PID_ncli"
wait "$FX_PID_ncli" 2>/dev/null
wait_for "[ \"\$(fx_cmd nsrv stats)\" = 'stats accepted 23 closed 23 open 0' ]" 20 ||
	fail netns/server_saw_closes "$(fx_cmd nsrv stats)"
wait_for "[ \$(ns_tw) -eq 23 ]" 20 || fail netns/time_wait_in_ns "$(ns_tw)"
kill -KILL "$FX_PID_nsrv"
wait "$FX_PID_nsrv" 2>/dev/null
# The agent reconciles without the namespace (no process left to enter it
# by) while its 23 TIME_WAIT live on in it: three reconciles, absent from
# every dump, and not ended.
wait_for "err_notes '$TMP/ns.err' | grep -q 'net:\[$ino\] is no longer read'" 10
assert_eq "$(err_notes "$TMP/ns.err" | grep -c "net:\[$ino\] is no longer read after [0-9.]* s: no traced process is left in it; its 23 TIME_WAIT")" 1 \
	netns/unread_said_once
n0=$(rows)
wait_for "[ \$(rows) -ge $((n0 + 3)) ]" 20 || fail netns/reconciles_go_on "$(rows) rows, $n0 before"
assert_eq "$(err_notes "$TMP/ns.err" | grep -c "net:\[$ino\]: the last of its")" 0 \
	netns/time_wait_not_ended_while_unread
ip netns delete "$NS"
# Deleting it kills them (their timers cancelled): the agent sees each end.
wait_for "err_notes '$TMP/ns.err' | grep -q 'net:\[$ino\]: the last of its 23 TIME_WAIT sockets ended'" 20
assert_eq "$(err_notes "$TMP/ns.err" | grep -c "net:\[$ino\]: the last of its 23 TIME_WAIT sockets ended")" 1 \
	netns/last_time_wait_end_said_once
# And its BPF map of traced TIME_WAIT sockets is empty again: each one
# killed left it (before: all 23 stayed, for a tw socket that never
# came back to their addresses).
assert_eq "$(agent_map_entries "$CS_PID" tw_owners)" 0 netns/tw_map_emptied
# Both killed targets left the kernel's filter (from user space: a fixed
# pid list has no exit hook), the host target stays in it.
for pid in "$FX_PID_ncli" "$FX_PID_nsrv"; do
	wait_for "err_notes '$TMP/ns.err' | grep -q 'process $pid (tcpfix) exited after'" 10
done
assert_eq "$(agent_map_entries "$CS_PID" targets)" 1 netns/gone_targets_left_the_filter
# Still at work for the host target.
assert_eq "$(fx_cmd hcli "churn 2")" "churned 2" netns/host_churned
wait_for "closes_done $hport" 10 || fail netns/host_closed "kernel: still closing on $hport"
cs_stop
assert_eq "$?" 0 netns/exit_status
# What it said on stderr reads on an 80-column terminal (each target's
# exit was one line of 83 columns here, each namespace note about 200).
assert_eq "$(awk 'length > 80' "$TMP/ns.err")" "" netns/stderr_fits_80_columns
for pid in "$FX_PID_ncli" "$FX_PID_nsrv"; do
	assert_eq "$(err_notes "$TMP/ns.err" | grep -c "process $pid (tcpfix) exited after")" 1 \
		"netns/exit_of_$pid/said"
done
# section PID: the text report's lines for PID.
section() { awk -v h="PID $1 " 'index($0, "PID ") == 1 {on = index($0, h) == 1} on' "$O"; }
sc=$(section "$FX_PID_ncli") ss=$(section "$FX_PID_nsrv")
assert_eq "$(grep -c 'exited during the run' <<<"$sc")$(grep -Ec '^  connections +opened 23 \(.*\), accepted 0 \(.*\), closed 23$' <<<"$sc")" \
	11 netns/client_exact
# Ended with the namespace, not "end unseen"; nothing of it live after.
assert_eq "$(grep -Ec '^  TIME_WAIT +entered 23 \(.*\), live 0, expired 0, ended early 23$' <<<"$sc")" 1 \
	netns/time_wait_ended_with_namespace
assert_eq "$(grep -Ec '^  connections +opened 0 \(.*\), accepted 23 \(.*\), closed 23$' <<<"$ss")" 1 netns/server_exact
assert_eq "$(grep -Ec '^  sockets now +none$' <<<"$sc$ss")" 2 netns/nothing_live_after
assert_eq "$(grep -c '<dt>TIME_WAIT end unseen</dt><dd>0</dd>' "$TMP/ns.html")" 1 netns/no_end_unseen
assert_eq "$(grep -c 'LOST' "$O")$(awk '$1 == "connscope_agent_losses_total" {n += $2} END {print n + 0}' "$TMP/ns.prom")" 00 \
	netns/nothing_lost
assert_eq "$(section "$FX_PID_hcli" | grep -Ec '^  connections +opened 2 ')" 1 netns/host_target_still_counted
# No spinning: one live row an interval, and the agent's CPU far below
# one core (a spin would be about 1.0).
elapsed=$(awk '/^connscope attach: / {print $3}' "$O")
assert_eq "$(awk -v r="$(rows)" -v e="$elapsed" 'BEGIN {print (r <= e / 0.2 + 3) ? "yes" : "no: " r " rows in " e " s"}')" yes \
	netns/one_reconcile_an_interval
assert_eq "$(awk -v e="$elapsed" '$1 == "connscope_agent_cpu_seconds_total" {print ($2 < 0.5 * e) ? "yes" : "no: " $2 " s in " e " s"}' "$TMP/ns.prom")" yes \
	netns/no_spin
released netns "$held"

# ---- exporter -p with a target in a namespace that goes away ----
fx_twns vanish-x
fx_start xsrv server -p "$nsport" || fail xnetns/start server
fx_start xcli client -p "$nsport" || fail xnetns/start client
FX_WRAP=()
ino=$(stat -Lc %i "/proc/$FX_PID_xcli/ns/net")
eport=$(free_port)
spawn_bg "$CONNSCOPE" exporter -p "$FX_PID_xcli,$FX_PID_xsrv,$FX_PID_hcli" --listen "127.0.0.1:$eport" -i 0.2 --tw-timers \
	>"$TMP/xexp.out" 2>"$TMP/xexp.err"
EXP=$BG_PID
wait_for "grep -q 'exporter serving' '$TMP/xexp.err' || ended $EXP" 30 ||
	fail xnetns/exporter_start "$(cat "$TMP/xexp.err")"
held=$(bpf_owned "$EXP")
assert_eq "$(fx_cmd xcli "churn 4")" "churned 4" xnetns/churned
wait_for "[ \"\$(metric $eport $opened $FX_PID_xcli)\" = 4 ]" 20
kill -KILL "$FX_PID_xcli" "$FX_PID_xsrv"
wait "$FX_PID_xcli" "$FX_PID_xsrv" 2>/dev/null
wait_for "err_notes '$TMP/xexp.err' | grep -q 'net:\[$ino\] is no longer read'" 10 ||
	fail xnetns/unread_said "$(cat "$TMP/xexp.err")"
# Three reconciles without it (a snapshot each) while its TIME_WAIT lives
# on: absent from the dumps, not ended.
n0=$(snapshots "$eport")
wait_for "[ \"\$(snapshots $eport)\" -ge $((${n0:-0} + 3)) ]" 20
assert_eq "$(metric "$eport" connscope_process_time_wait_ended_early_total "$FX_PID_xcli")" 0 \
	xnetns/time_wait_not_ended_while_unread
ip netns delete "$NS"
wait_for "err_notes '$TMP/xexp.err' | grep -q 'net:\[$ino\]: the last of its 4 TIME_WAIT sockets ended'" 20 ||
	fail xnetns/last_time_wait_end_said "$(cat "$TMP/xexp.err")"
assert_eq "$(fx_cmd hcli "churn 3")" "churned 3" xnetns/host_churned
if wait_for "[ \"\$(metric $eport $opened $FX_PID_hcli)\" = 3 ]" 20 && ! ended "$EXP"; then
	ok xnetns/exporter_keeps_counting
else
	fail xnetns/exporter_keeps_counting "host client: $(metric "$eport" $opened "$FX_PID_hcli"); $(cat "$TMP/xexp.err")"
fi
assert_eq "$(metric "$eport" connscope_process_time_wait_ended_early_total "$FX_PID_xcli")" 4 \
	xnetns/time_wait_ended_with_namespace
assert_eq "$(metric "$eport" connscope_process_tcp_sockets "$FX_PID_xcli" | awk '{n += $1} END {print n + 0}')" 0 \
	xnetns/nothing_live_after
kill -TERM "$EXP"
wait "$EXP"
assert_eq "$?" 0 xnetns/exit_status
assert_eq "$(awk 'length > 80' "$TMP/xexp.err")" "" xnetns/stderr_fits_80_columns
released xnetns "$held"
fx_stop hcli
fx_stop hsrv
FX_WRAP=("${MAIN_WRAP[@]}")
fx_stop srv
