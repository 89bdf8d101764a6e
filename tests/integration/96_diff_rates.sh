#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# connscope diff compares rates and judges each figure by its direction
# (#26): before, a client opening a connection per request (lagclose.py,
# 1 worker, 300 requests); after, a keep-alive client whose 4 connections
# were open before the doctor attached (keepalive.py) carrying 483
# requests. Connections held at the start count (connections_per_request
# 1 -> 4/483, not -> 0), requests per second are each run's requests over
# its own elapsed time, and fewer or more requests is no better or worse
# (no colour), while fewer connections per request is better. Only the
# client is traced (both fixtures are python3).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
FX=$TESTS_DIR/fixtures

# doctor_on OUT PID: doctor -j on PID in the background (DR_PID) until
# doctor_off; returns once it traces.
doctor_on() {
	spawn_bg "$CONNSCOPE" doctor -p "$2" -d 120 -i 0.3 -j >"$1" 2>"$1.err"
	DR_PID=$BG_PID
	wait_for "grep -q '^connscope: tracing' '$1.err' || ! kill -0 $DR_PID 2>/dev/null" 30
	grep -q '^connscope: tracing' "$1.err" || { fail "attach" "$(cat "$1.err")"; exit 1; }
}
doctor_off() {
	kill -INT "$DR_PID"
	wait "$DR_PID" || fail doctor_exit "$(cat "$1.err")"
}

# ---- before: a connection per request ----
fix_start ls python3 "$FX/lagclose.py" server && fix_expect ls "listening *" 10 || fail start lagclose
read -r _ LPORT _ <<<"$FIX_LINE"
fix_start lc python3 "$FX/lagclose.py" client "$LPORT" -w 1 && fix_expect lc "ready *" 10 || fail start client
doctor_on "$TMP/before.json" "${FIX_LINE#ready }"
fix_cmd lc "go 300" '@(done|error) *' 120
assert_eq "$FIX_LINE" "done 300 opened 300" before/fixture
doctor_off "$TMP/before.json"
fix_send lc exit
fix_send ls exit

# ---- after: 4 keep-alive connections held at the start ----
fix_start ks python3 "$FX/keepalive.py" server && fix_expect ks "listening *" 10 || fail start keepalive
read -r _ KPORT _ <<<"$FIX_LINE"
fix_start kc python3 "$FX/keepalive.py" client "$KPORT" && fix_expect kc "ready *" 10 || fail start client
KCPID=${FIX_LINE#ready }
fix_cmd kc "open 4" '@(opened|error) *' 10
assert_eq "$FIX_LINE" "opened 4" after/fixture_open
doctor_on "$TMP/after.json" "$KCPID"
fix_cmd kc "go 483" '@(done|error) *' 120
assert_eq "$FIX_LINE" "done 483" after/fixture_requests
doctor_off "$TMP/after.json"
fix_cmd kc close '@(closed|error) *' 10
fix_send kc exit
fix_send ks exit

P=".processes[] | select(.pid == $KCPID) | .reuse"
assert_eq "$(jqn "$P | [.connections_opened, .connections_held_at_start, .requests] | @tsv" "$TMP/after.json")" \
	"$(printf '0\t4\t483')" after/held_connections_counted
assert_eq "$(jqn "$P | .endpoints[] | select(.endpoint == \"127.0.0.1:$KPORT\") | [.held_at_start, .requests] | @tsv" "$TMP/after.json")" \
	"$(printf '4\t483')" after/endpoint_held

"$CONNSCOPE" diff "$TMP/before.json" "$TMP/after.json" -j --report "$TMP/diff.html" >"$TMP/diff.json" \
	2>"$TMP/diff.err"
assert_eq "$?" 0 diff/exit_status
J=$TMP/diff.json
M='.processes[0].metrics'
assert_eq "$(jqn "$M.connections | [.before, .after] | @tsv" "$J")" "$(printf '300\t4')" diff/connections_held_count
assert_eq "$(jqn "$M.connections_per_request | [.before, (.after - 4 / 483 | fabs < 1e-6), .judgement] | @tsv" "$J")" \
	"$(printf '1\ttrue\tbetter')" diff/connections_per_request_not_zero
assert_eq "$(jqn "$M.requests | [.before, .after, .judgement] | @tsv" "$J")" \
	"$(printf '300\t483\t')" diff/more_requests_is_no_judgement
# Per second: each run's requests over its own load's time (run.load_s:
# first to last connection transition, within the run).
eb=$(jqn '.run.load_s' "$TMP/before.json")
ea=$(jqn '.run.load_s' "$TMP/after.json")
assert_eq "$(jq -n --slurpfile b "$TMP/before.json" --slurpfile a "$TMP/after.json" \
	'[$b[0], $a[0]] | map(.run.load_s > 0 and .run.load_s <= .run.elapsed_s) | all')" true diff/load_within_run
assert_eq "$(jqn "$M.requests_per_s | (.before - 300 / $eb | fabs < 1e-3) and (.after - 483 / $ea | fabs < 1e-3)" "$J")" \
	true diff/requests_per_s
assert_eq "$(jqn "$M.time_wait_per_request | [.before, .after, .judgement] | @tsv" "$J")" \
	"$(printf '0\t0\t')" diff/time_wait_per_request
# HTML: coloured by judgement, requests not at all.
H=$TMP/diff.html
assert_eq "$(grep -c '<tr data-metric="requests"><td class="l">requests</td><td data-k="before">300</td><td data-k="after">483</td><td class="">' "$H")" \
	2 html/requests_uncoloured_process_and_endpoint
assert_eq "$(grep -c '<tr data-metric="connections_per_request"><td class="l">connections_per_request</td><td data-k="before">1</td><td data-k="after">0.008282</td><td class="better">' "$H")" \
	2 html/per_request_better_process_and_endpoint
# Text: the judgement after the ratio.
"$CONNSCOPE" diff "$TMP/before.json" "$TMP/after.json" >"$TMP/diff.txt" 2>&1
assert_eq "$(grep -c '^  connections_per_request  *1 -> 0.008282  *x0.00828 better$' "$TMP/diff.txt")" 1 text/better
assert_eq "$(grep -c '^  requests  *300 -> 483  *x1.61$' "$TMP/diff.txt")" 1 text/requests_no_word
