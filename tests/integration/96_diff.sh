#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# connscope diff on two doctor runs of the pool fixture against the same
# server: first a pool too small (2 idle for 8 workers, in rounds: 602
# connections for 800 requests), then a pool sized to the concurrency (8
# connections). The churn finding must be reported cleared, and connections
# per request must drop by the fixture's own ratio (8 / 602), in text, JSON
# and HTML. Bad input: one message, exit 2, nothing written.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

for f in poolfix doctorfix; do
	if [[ ! -x $FIXTURES/$f ]]; then
		fail "${f}_built" "$FIXTURES/$f missing (make .output/fixtures/$f)"
		exit 1
	fi
done
TMP=$(lib_tmpdir)

fix_start srv "$FIXTURES/poolfix" server && fix_expect srv "listening *" 10 || fail start server
read -r _ PORT SPID <<<"$FIX_LINE"

# run NAME POOL [FLAGS...]: a client of 8 workers and 800 requests with
# POOL idle connections, traced with the server by doctor -j into
# $TMP/NAME.json. The client's done line is left in DONE, its pid in CPID.
run() {
	local name=$1 pool=$2 dpid
	shift 2
	fix_start "$name" "$FIXTURES/poolfix" client -p "$PORT" -w 8 -n 800 -P "$pool" "$@" &&
		fix_expect "$name" "ready *" 10 || { fail "$name/start" client; return 1; }
	CPID=${FIX_LINE#ready }
	spawn_bg "$CONNSCOPE" doctor -p "$CPID,$SPID" -d 120 -i 0.3 -j >"$TMP/$name.json" 2>"$TMP/$name.err"
	dpid=$BG_PID
	wait_for "grep -q '^connscope: tracing' '$TMP/$name.err' || ! kill -0 $dpid 2>/dev/null" 30
	fix_cmd "$name" go '@(done|error) *' 120 || { fail "$name/client" "$FIX_LINE"; return 1; }
	DONE=$FIX_LINE
	wait_for "fix_cmd srv stats 'stats *' 5 && [[ \$FIX_LINE == *' open 0' ]]" 20
	kill -INT "$dpid"
	wait "$dpid" || { fail "$name/doctor" "$(cat "$TMP/$name.err")"; return 1; }
	fix_send "$name" exit
}

run small 2 -b || exit 0
read -r _ _ _ _ C1 _ _ _ _ <<<"$DONE"
C1PID=$CPID
run sized 8 || exit 0
read -r _ _ _ _ C2 _ _ _ _ <<<"$DONE"
C2PID=$CPID
assert_eq "$C1 $C2" "602 8" fixture_connections
assert_eq "$(jqn '[.findings[] | select(.rule == "churn")] | length' "$TMP/small.json")" 1 before_has_churn
assert_eq "$(jqn '.findings | length' "$TMP/sized.json")" 0 after_is_healthy

# ---- JSON ----
"$CONNSCOPE" diff "$TMP/small.json" "$TMP/sized.json" -j --report "$TMP/diff.html" \
	>"$TMP/diff.json" 2>"$TMP/diff.err"
assert_eq "$?" 0 diff_exit_status
J=$TMP/diff.json
assert_eq "$(jqn '[.findings[] | [.change, .rule, .comm, .endpoint] | @tsv] | join(";")' "$J")" \
	"$(printf 'cleared\tchurn\tpoolfix\t127.0.0.1:%s' "$PORT")" finding_cleared_none_raised
CL="(.processes[] | select(.pid_before == $C1PID and .pid_after == $C2PID))"
SV="(.processes[] | select(.pid_before == $SPID and .pid_after == $SPID))"
assert_eq "$(jqn "[$CL] | length" "$J")" 1 client_paired
assert_eq "$(jqn "[$SV] | length" "$J")" 1 server_paired_with_itself
cpr="$CL | .metrics.connections_per_request"
assert_eq "$(jqn "$cpr | [.before, .after] | @tsv" "$J")" "$(printf '0.7525\t0.01')" \
	connections_per_request_values
# The drop is the fixture's own: 8 connections instead of 602.
assert_eq "$(jqn "$cpr | .ratio - (8 / 602) | fabs < 1e-6" "$J")" true \
	connections_per_request_ratio_is_fixture_ratio
assert_eq "$(jqn "$CL | .endpoints[] | select(.endpoint == \"127.0.0.1:$PORT\") | .metrics.connections | [.before, .after] | @tsv" "$J")" \
	"$(printf '602\t8')" endpoint_connections
assert_eq "$(jqn "$CL | .metrics.time_wait_entered | [.before, .after] | @tsv" "$J")" \
	"$(printf '602\t8')" client_time_wait_entered
assert_eq "$(jqn "$SV | .endpoints[] | select(.endpoint == \"listen 127.0.0.1:$PORT\") | .metrics.connections | [.before, .after] | @tsv" "$J")" \
	"$(printf '602\t8')" server_endpoint_connections

# ---- text ----
"$CONNSCOPE" diff "$TMP/small.json" "$TMP/sized.json" >"$TMP/diff.txt" 2>&1
assert_eq "$(grep -c '^Findings: 1 cleared, 0 raised, 0 still there$' "$TMP/diff.txt")" 1 text/summary
assert_eq "$(grep -c "^  cleared  \[warning\] churn  poolfix  127.0.0.1:$PORT\$" "$TMP/diff.txt")" 1 text/cleared_line
assert_eq "$(grep -A4 "^poolfix (PID $C1PID -> $C2PID)" "$TMP/diff.txt" | grep -c 'connections_per_request  *0.7525 -> 0.01  *x0.0133 better$')" \
	1 text/ratio
# ---- HTML ----
assert_eq "$(grep -c '<div class="finding cleared" data-change="cleared" data-rule="churn">' "$TMP/diff.html")" 1 html/cleared_box
assert_eq "$(grep -c '<tr data-metric="connections_per_request"><td class="l">connections_per_request</td><td data-k="before">0.7525</td><td data-k="after">0.01</td>' "$TMP/diff.html")" \
	4 html/rows_processes_and_endpoints
assert_eq "$(grep -c 'http' "$TMP/diff.html")" 0 html/self_contained

# ---- bad input: one message, exit 2, nothing written ----
# bad NAME WANT_PATTERN FILE1 FILE2: one message (wrapped lines joined),
# each line within 80 columns.
bad() {
	local name=$1 want=$2 out err rc
	shift 2
	rm -f "$TMP/bad.html"
	"$CONNSCOPE" diff "$@" --report "$TMP/bad.html" >"$TMP/bad.out" 2>"$TMP/bad.err"
	rc=$?
	assert_eq "$rc" 2 "bad/$name/exit_2"
	msg_join "$TMP/bad.err" >"$TMP/bad.msg"
	assert_eq "$(wc -l <"$TMP/bad.msg")" 1 "bad/$name/one_message"
	assert_eq "$(grep -c -- "$want" "$TMP/bad.msg")" 1 "bad/$name/message"
	fits80 "bad/$name" "$TMP/bad.err" "$TMP"
	assert_eq "$(wc -c <"$TMP/bad.out")" 0 "bad/$name/nothing_printed"
	assert_eq "$(ls "$TMP"/bad.html* 2>/dev/null | wc -l)" 0 "bad/$name/no_report_file"
}
bad missing "cannot read $TMP/nope.json (BEFORE): No such file or directory" "$TMP/nope.json" "$TMP/sized.json"
printf 'hello\n' >"$TMP/text.txt"
bad not_json "$TMP/text.txt (AFTER) is not a connscope report" "$TMP/small.json" "$TMP/text.txt"
printf '{"run": {"command": "summary"}, "processes": []}\n' >"$TMP/other.json"
bad other_json "is not a connscope report; give the output of .connscope doctor -j." "$TMP/other.json" "$TMP/sized.json"
# A run of another program: doctorfix instead of poolfix.
fix_start df "$FIXTURES/doctorfix" && fix_expect df "ready *" 10
DFPID=${FIX_LINE#ready }
"$CONNSCOPE" doctor -p "$DFPID" -d 0.5 -i 0.2 -j >"$TMP/df.json" 2>"$TMP/df.err" || fail df_doctor "$(cat "$TMP/df.err")"
fix_send df exit
bad different_programs "traced poolfix but $TMP/df.json traced doctorfix: diff compares two runs of the same program" \
	"$TMP/small.json" "$TMP/df.json"
# The report's path, as every command's output file (21_bad_input_table):
# a directory missing or unwritable is an error (1), a path that names no
# file a bad command line (2); nothing printed, nothing left in TMP.
# bad_out NAME STATUS MESSAGE PATH
bad_out() {
	local before
	before=$(ls -A "$TMP")
	"$CONNSCOPE" diff "$TMP/small.json" "$TMP/sized.json" --report "$4" >"$TMP/bad.out" 2>"$TMP/bad.err"
	assert_eq "$?" "$2" "bad/$1/exit_status"
	assert_eq "$(msg_join "$TMP/bad.err")" "$3" "bad/$1/message"
	fits80 "bad/$1" "$TMP/bad.err" "$TMP"
	assert_eq "$(wc -c <"$TMP/bad.out")" 0 "bad/$1/nothing_printed"
	assert_eq "$(ls -A "$TMP")" "$before" "bad/$1/nothing_written"
}
bad_out report_missing_directory 1 "connscope: cannot write the report $TMP/nodir/d.html: No such file or directory (check the directory exists and is writable)" \
	"$TMP/nodir/d.html"
bad_out report_is_directory 2 "connscope: the report $TMP is a directory; give a file name (e.g. $TMP/diff.html)" \
	"$TMP"
"$CONNSCOPE" diff "$TMP/small.json" >"$TMP/one.out" 2>"$TMP/one.err"
assert_eq "$?" 2 bad/one_file/exit_2
assert_eq "$(msg_join "$TMP/one.err")" "connscope diff: give two reports, BEFORE.json AFTER.json (from \`connscope doctor -j\`); got 1 file" bad/one_file/message
fits80 bad/one_file "$TMP/one.err"
fix_send srv exit
