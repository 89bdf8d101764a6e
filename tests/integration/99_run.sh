#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# connscope run: a load test as one step. ab against a private nginx,
# without keep-alive (every request a new connection: the churn finding,
# its fix in ab's words, exit 4 or 5 with --fail-on warning) and with it
# (no finding: exit 0); COMMAND's own failure passes through as its exit
# status; the NDJSON stream has one valid object per interval whose rows
# add up to the report's totals; bad invocations get one line and 2.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=2000

if ! command -v nginx >/dev/null || ! command -v ab >/dev/null; then
	fail nginx_ab/installed "needs nginx and ab (Debian: nginx, apache2-utils; make test-deps)"
	exit 0
fi

NGX=$TMP/nginx
NPORT=$("$FIXTURES/tcpfix" freeport)
if ! nginx_start "$NGX" "$NPORT"; then
	fail nginx/start "$(tail -5 "$NGX/error.log" 2>/dev/null)"
	exit 0
fi
WORKER=$NGX_WORKER
URL=http://127.0.0.1:$NPORT/

# run_case NAME RUN_ARGS... -- COMMAND...: connscope run in the foreground
# (bounded by timeout), its status in RC, stdout in $TMP/NAME.json.
run_case() {
	local name=$1
	shift
	timeout 120 "$CONNSCOPE" run "$@" >"$TMP/$name.json" 2>"$TMP/$name.err"
	RC=$?
}

# ---- no keep-alive: a finding, the gate closes ----
run_case close -p "$WORKER" -i 0.3 -j --fail-on warning --cooldown 0.5 \
	--json-stream "$TMP/close.ndjson" -- ab -q -n "$N" -c 8 "$URL"
J=$TMP/close.json
assert_eq "$(jqn '.run.command' "$J")" run close/command
worst=$(jqn '[.findings[] | select(.rule != "agent_cost") | .severity] |
	if any(. == "critical") then "critical" elif any(. == "warning") then "warning" else "none" end' "$J")
want=$([[ $worst == critical ]] && echo 5 || echo 4)
assert_eq "$RC" "$want" "close/exit_status_of_the_worst_finding ($worst)"
grep -q "^connscope run: a $worst finding fired (--fail-on warning): exit $want" "$TMP/close.err" ||
	fail close/said_why "$(tail -3 "$TMP/close.err")"
AB=$(jqn '[.processes[] | select(.comm == "ab")][0].pid' "$J")
# ab may open a few connections more than requests it sends (it opens
# ahead, and closes those unused at the end): both sides must agree, and
# hold every request.
OPENED=$(jqn "[.processes[] | select(.pid == $AB)][0].reuse.connections_opened" "$J")
ACCEPTED=$(jqn "[.processes[] | select(.pid == $WORKER)][0].reuse.connections_accepted" "$J")
echo "# close: ab opened $OPENED, nginx accepted $ACCEPTED for $N requests"
assert_eq "$((OPENED >= N))" 1 "close/ab_traced_from_its_first_connection ($OPENED)"
assert_eq "$ACCEPTED" "$OPENED" close/nginx_accepted_what_ab_opened
assert_eq "$(jqn "[.findings[] | select(.rule == \"churn\" and .pid == $AB) | .fix |
	startswith(\"client (ab): ab -k\")] | any" "$J")" true close/churn_fix_in_ab_words
# The stream: one object an interval, the clock rising, rows that add up.
lines=$(wc -l <"$TMP/close.ndjson")
assert_eq "$(jq -c . "$TMP/close.ndjson" 2>/dev/null | wc -l)" "$lines" close/stream_every_line_json
assert_eq "$((lines >= 2))" 1 "close/stream_one_line_an_interval ($lines lines)"
assert_eq "$(jq -s '[.[].t_s] | . == (sort) and (unique | length) == length' "$TMP/close.ndjson")" true \
	close/stream_clock_rises
assert_eq "$(jq -s "[.[].processes[] | select(.pid == $AB) | .opened] | add" "$TMP/close.ndjson")" "$OPENED" \
	close/stream_opened_adds_up
assert_eq "$(jq -s "[.[].processes[] | select(.pid == $WORKER) | .accepted] | add" "$TMP/close.ndjson")" "$ACCEPTED" \
	close/stream_accepted_adds_up

# ---- keep-alive: healthy, the gate stays open ----
run_case keepalive -p "$WORKER" -i 0.3 -j --fail-on warning -- ab -q -k -n "$N" -c 8 "$URL"
J=$TMP/keepalive.json
assert_eq "$RC" 0 keepalive/exit_0
assert_eq "$(jqn '[.findings[] | select(.rule != "agent_cost")] | length' "$J")" 0 keepalive/no_finding
AB=$(jqn '[.processes[] | select(.comm == "ab")][0].pid' "$J")
assert_eq "$(jqn "[.processes[] | select(.pid == $AB)][0].reuse.connections_opened" "$J")" 8 \
	keepalive/ab_opened_its_8
# Without --fail-on the same churn exits 0: the gate is the user's.
run_case nogate -p "$WORKER" -i 0.3 -j -- ab -q -n 200 -c 4 "$URL"
assert_eq "$RC" 0 nogate/exit_0

# ---- COMMAND's failure passes through; ours are 2 with one line ----
run_case fails -p "$WORKER" -i 0.3 -j --fail-on warning -- sh -c 'exit 7'
assert_eq "$RC" 7 fails/commands_status
grep -q "^connscope run: sh exited with status 7" "$TMP/fails.err" ||
	fail fails/said "$(tail -2 "$TMP/fails.err")"
run_case killed -i 0.3 -j -- sh -c 'kill -TERM $$'
assert_eq "$RC" 143 killed/128_plus_signal

bad() {
	local name=$1 want=$2
	shift 2
	timeout 30 "$CONNSCOPE" run "$@" >"$TMP/bad.out" 2>"$TMP/bad.err"
	assert_eq "$?" 2 "bad/$name/exit_2"
	msg_join "$TMP/bad.err" >"$TMP/bad.msg"
	assert_eq "$(wc -l <"$TMP/bad.msg")" 1 "bad/$name/one_message"
	grep -q -- "$want" "$TMP/bad.msg" || fail "bad/$name/names_it" "$(cat "$TMP/bad.err")"
	fits80 "bad/$name" "$TMP/bad.err" "$TMP"
	assert_eq "$(wc -c <"$TMP/bad.out")" 0 "bad/$name/nothing_written"
}
bad no_command "give the load generator after --"
bad missing_command "cannot run 'no-such-load-generator'" -- no-such-load-generator -n 1
bad fail_on_level "give warning or critical" --fail-on sometimes -- true
bad duration "give --cooldown S" -d 5 -- true
bad nothing_traced "nothing to trace" --no-trace-command -- true
# (A directory that cannot be written is an error, 1: 21_bad_input_table.)
bad stream_path "is a directory; give a file name" --json-stream "$TMP" -- true

# COMMAND's fds before its exec (run lists it while it waits at the gate:
# connscope's own few) are not where its growth starts: a program that
# opens 40 fds as it starts and holds them is no leak (fd_leak "45 open
# now, up from 6" before).
timeout 60 "$CONNSCOPE" run -j -i 0.3 -- /usr/bin/python3 -c 'import os, time
fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(40)]
time.sleep(2)' >"$TMP/exec.json" 2>"$TMP/exec.err"
assert_eq "$?" 0 exec/exit_status
assert_eq "$(jqn '[.processes[] | select(.comm == "python3") | .fds.fds.total >= 43] | .[0]' "$TMP/exec.json")" \
	true exec/fds_listed
assert_eq "$(jqn '[.findings[] | select(.rule == "fd_leak")] | length' "$TMP/exec.json")" 0 \
	exec/start_up_fds_no_leak

# nginx's graceful stop; the master waits for its worker.
kill -QUIT "$NGX_MASTER"
wait_for "! kill -0 $NGX_MASTER 2>/dev/null" 10 || fail nginx/stopped "master $NGX_MASTER still running"
