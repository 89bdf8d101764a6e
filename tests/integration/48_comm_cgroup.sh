#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Targets beyond a pid list. --comm NAME: every process of that name,
# one that is restarted (a new process, same name) followed and said so.
# --cgroup PATH: every process in a cgroup v2 directory the test makes,
# the one there at start and one started in it later, nothing outside it.
# Bad input: one message, exit 2, nothing written.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
port=$(free_port)
fx_start srv server -p "$port" || fail start server

# A name no other process on the machine has: tcpfix under another name.
NAME=csw$$
NAME=${NAME:0:15}
cp "$FIXTURES/tcpfix" "$TMP/$NAME"

# ---- --comm: a worker, then its restart ----
fix_start w1 "$TMP/$NAME" client -p "$port"
fix_expect w1 "ready *" 10 || fail comm/start "worker 1"
J=$TMP/comm.json
cs_attach "$J" "$TMP/comm.err" --comm "$NAME" -i 0.2 -j --report "$TMP/comm.html" ||
	{ fail comm/attach "$(cat "$TMP/comm.err")"; exit 0; }
assert_eq "$(fx_cmd w1 "churn 3")" "churned 3" comm/w1_churned
fx_stop w1
fix_start w2 "$TMP/$NAME" client -p "$port"
fix_expect w2 "ready *" 10 || fail comm/start "worker 2"
assert_eq "$(fx_cmd w2 "churn 4")" "churned 4" comm/w2_churned
wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted 7 closed 7 open 0' ]" 20
wait_for "grep -q 'process $w2_PID ($NAME) joined the targets' '$TMP/comm.err'" 5
cs_stop
assert_eq "$?" 0 comm/exit_status
r1=".processes[] | select(.pid == $w1_PID)" r2=".processes[] | select(.pid == $w2_PID)"
assert_eq "$(jqn "[$r1 | .target, .exited, .joined_s, .totals.connections_opened] | join(\" \")" "$J")" \
	"true true  3" comm/first_worker_from_start
assert_eq "$(jqn "[$r2 | .target, (.joined_s > 0), .totals.connections_opened] | join(\" \")" "$J")" \
	"true true 4" comm/restarted_worker_followed
assert_eq "$(grep -c "process $w2_PID ($NAME) joined the targets" "$TMP/comm.err")" 1 comm/join_said
assert_eq "$(jqn '.run.comm | join(",")' "$J")" "$NAME" comm/run_names_it
assert_eq "$(grep -A1 "<section class=\"card proc\" id=\"pid-$w2_PID\"" "$TMP/comm.html" |
	grep -c 'joined [0-9.]* s into the run')" 1 comm/html_says_joined
assert_eq "$(jqn "[.processes[] | select(.pid == $FX_PID_srv)] | length" "$J")" 0 comm/other_names_not_traced
fx_stop w2

# ---- fdleak --comm: the one there at start, one started later ----
fix_start f1 "$TMP/$NAME" client -p "$port"
fix_expect f1 "ready *" 10 || fail fdleak/start f1
spawn_bg "$CONNSCOPE" fdleak --comm "$NAME" -i 0.2 -j >"$TMP/fd.json" 2>"$TMP/fd.err"
FD_PID=$BG_PID
wait_for "grep -q '^connscope: tracing' '$TMP/fd.err'" 20
fix_start f2 "$TMP/$NAME" client -p "$port"
fix_expect f2 "ready *" 10 || fail fdleak/start f2
wait_for "grep -q 'process $f2_PID ($NAME) joined the targets' '$TMP/fd.err'" 10
kill -INT "$FD_PID"; wait "$FD_PID"
assert_eq "$?" 0 fdleak/exit_status
assert_eq "$(jqn "[.processes[].pid] | sort | join(\" \")" "$TMP/fd.json")" \
	"$(printf '%s\n' "$f1_PID" "$f2_PID" | sort -n | paste -sd' ')" fdleak/both_followed
fx_stop f1; fx_stop f2

# ---- exporter --comm: a worker started after it, in /metrics ----
http_get() {
	local fd
	exec {fd}<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&"$fd"
	timeout 5 cat <&"$fd" | tr -d '\r' | sed '1,/^$/d'
	exec {fd}>&-
}
eport=$(free_port)
spawn_bg "$CONNSCOPE" exporter --comm "$NAME" --listen "127.0.0.1:$eport" -i 0.2 >"$TMP/exp.out" 2>"$TMP/exp.err"
EXP=$BG_PID
wait_for "grep -q 'exporter serving' '$TMP/exp.err'" 30 || fail exporter/start "$(cat "$TMP/exp.err")"
fix_start e1 "$TMP/$NAME" client -p "$port"
fix_expect e1 "ready *" 10 || fail exporter/start_worker e1
assert_eq "$(fx_cmd e1 "churn 6")" "churned 6" exporter/churned
opened() { http_get "$eport" | awk -v p="pid=\"$e1_PID\"" 'index($0, "connscope_process_connections_opened_total{") == 1 && index($0, p) {print $NF}'; }
wait_for "[ \"\$(opened)\" = 6 ]" 20
assert_eq "$(opened)" 6 exporter/worker_started_later_counted
kill -TERM "$EXP"; wait "$EXP"
assert_eq "$?" 0 exporter/exit_status
fx_stop e1

# ---- --cgroup: a cgroup the test makes and removes ----
MNT=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
[[ -n $MNT ]] || { fail cgroup/mount "no cgroup2 mount in /proc/self/mountinfo"; exit 0; }
CG=$MNT/connscope-test-$$
mkdir "$CG" || { fail cgroup/mkdir "cannot make $CG"; exit 0; }
# Registered before the processes in it, so it runs after they are gone.
on_exit "rmdir '$CG'"
# in_cgroup CMD...: moves itself into the cgroup, then becomes CMD.
in_cgroup() { echo $BASHPID >"$CG/cgroup.procs" && exec "$@"; }
fix_start c1 bash -c "$(declare -f in_cgroup); CG='$CG'; in_cgroup \"\$@\"" _ "$FIXTURES/tcpfix" client -p "$port"
fix_expect c1 "ready *" 10 || fail cgroup/start c1
fx_start out client -p "$port" || fail cgroup/start outside
J=$TMP/cg.json
cs_attach "$J" "$TMP/cg.err" --cgroup "$CG" -i 0.2 -j ||
	{ fail cgroup/attach "$(cat "$TMP/cg.err")"; exit 0; }
fix_start c2 bash -c "$(declare -f in_cgroup); CG='$CG'; in_cgroup \"\$@\"" _ "$FIXTURES/tcpfix" client -p "$port"
fix_expect c2 "ready *" 10 || fail cgroup/start c2
# The server's count so far: the cases above used it too.
base=$(fx_cmd srv stats | awk '{print $3}')
assert_eq "$(fx_cmd c1 "churn 2")" "churned 2" cgroup/c1_churned
assert_eq "$(fx_cmd c2 "churn 5")" "churned 5" cgroup/c2_churned
assert_eq "$(fx_cmd out "churn 3")" "churned 3" cgroup/outside_churned
wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted $((base + 10)) closed $((base + 10)) open 0' ]" 20 ||
	fail cgroup/server_saw_all "$(fx_cmd srv stats), base $base"
cs_stop
assert_eq "$?" 0 cgroup/exit_status
assert_eq "$(jqn ".processes[] | select(.pid == $c1_PID) | [.target, .joined_s, .totals.connections_opened] | join(\" \")" "$J")" \
	"true  2" cgroup/in_it_at_start
assert_eq "$(jqn ".processes[] | select(.pid == $c2_PID) | [.target, (.joined_s > 0), .totals.connections_opened] | join(\" \")" "$J")" \
	"true true 5" cgroup/started_in_it_later
assert_eq "$(jqn "[.processes[] | select(.pid == $FX_PID_out)] | length" "$J")" 0 cgroup/outside_not_traced
assert_eq "$(jqn .run.cgroup "$J")" "$CG" cgroup/run_names_it
fx_stop c1; fx_stop c2; fx_stop out

# ---- bad input ----
# bad NAME ARGS...: exit 2, one message naming the problem (NAME.msg: its
# wrapped lines joined), each line within 80 columns, no report file.
bad() {
	local name=$1
	shift
	"$CONNSCOPE" attach "$@" -d 1 --report "$TMP/$name.html" >"$TMP/$name.out" 2>"$TMP/$name.err"
	assert_eq "$?" 2 "bad/$name/exit_2"
	msg_join "$TMP/$name.err" >"$TMP/$name.msg"
	assert_eq "$(wc -l <"$TMP/$name.msg")" 1 "bad/$name/one_message"
	fits80 "bad/$name" "$TMP/$name.err" "$TMP"
	assert_eq "$(ls "$TMP/$name".html* 2>/dev/null | wc -l)$(wc -c <"$TMP/$name.out")" 00 \
		"bad/$name/nothing_written"
}
bad comm_too_long --comm averyveryverylongname
assert_eq "$(grep -c 'at most\|1 to 15 bytes' "$TMP/comm_too_long.msg")" 1 bad/comm_too_long/says_15
bad cgroup_not_v2 --cgroup "$TMP"
assert_eq "$(grep -c 'not a cgroup v2 directory' "$TMP/cgroup_not_v2.msg")" 1 bad/cgroup_not_v2/said
bad cgroup_missing --cgroup /connscope-no-such-cgroup-$$
assert_eq "$(grep -c "under the cgroup2 mount $MNT" "$TMP/cgroup_missing.msg")" 1 bad/cgroup_missing/names_mount
fx_stop srv
