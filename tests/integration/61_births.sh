#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Connections held open are in the books while they are held. In the
# socket-storage mode a socket sends no record when it is established,
# only at its end; the birth pass the agent runs each interval (an iter/tcp
# iterator) tells the books of those that outlive it. Seen through the
# exporter mid-run, a pool held open: opened and accepted exact, nothing
# closed, books and kernel agreeing; then the pool closed: closed exact.
# A pass with more births than the ring holds drains it as it goes: a
# pool of 400 held through a 64 KiB ring (~300 records) loses nothing.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
H=6

# metric PORT NAME PID: NAME{pid="PID",...} in the exporter's scrape.
metric() {
	http_get "$1" /metrics | awk -v m="$2" -v p="pid=\"$3\"" \
		'index($0, m "{") == 1 && index($0, p) {print $NF}' | head -1
}
mismatch() { http_get "$1" /metrics | awk '$1 == "connscope_books_mismatch_sockets" {print $2}'; }

held_case() {
	local m=$1 port eport exp
	port=$(free_port)
	fx_start "srv$m" server -p "$port" && fx_start "cli$m" client -p "$port" ||
		{ fail "$m/start" "fixtures"; return; }
	local cli=FX_PID_cli$m srv=FX_PID_srv$m
	eport=$(free_port)
	spawn_bg "$CONNSCOPE" exporter -p "${!cli},${!srv}" --listen "127.0.0.1:$eport" -i 0.3 \
		>"$TMP/exp$m.out" 2>"$TMP/exp$m.err"
	exp=$BG_PID
	wait_for "grep -q 'exporter serving' '$TMP/exp$m.err' || ! kill -0 $exp" 30
	grep -q 'exporter serving' "$TMP/exp$m.err" || { fail "$m/exporter" "$(head -c 300 "$TMP/exp$m.err")"; return; }
	assert_eq "$(fx_cmd "cli$m" "open $H")" "opened $H" "$m/pool_opened"
	wait_for "[ \"\$(metric $eport connscope_process_connections_opened_total ${!cli})\" = $H ]" 20
	assert_eq "$(metric "$eport" connscope_process_connections_opened_total "${!cli}")" "$H" \
		"$m/opened_while_held"
	wait_for "[ \"\$(metric $eport connscope_process_connections_accepted_total ${!srv})\" = $H ]" 20
	assert_eq "$(metric "$eport" connscope_process_connections_accepted_total "${!srv}")" "$H" \
		"$m/accepted_while_held"
	assert_eq "$(metric "$eport" connscope_process_connections_closed_total "${!cli}")" 0 \
		"$m/none_closed_yet"
	wait_for "[ \"\$(mismatch $eport)\" = 0 ]" 20
	assert_eq "$(mismatch "$eport")" 0 "$m/books_agree_with_kernel"
	assert_eq "$(fx_cmd "cli$m" close)" "closed $H" "$m/pool_closed"
	wait_for "[ \"\$(metric $eport connscope_process_connections_closed_total ${!srv})\" = $H ]" 20
	assert_eq "$(metric "$eport" connscope_process_connections_closed_total "${!cli}")" "$H" \
		"$m/client_closed"
	assert_eq "$(metric "$eport" connscope_process_connections_closed_total "${!srv}")" "$H" \
		"$m/server_closed"
	assert_eq "$(metric "$eport" connscope_process_connections_opened_total "${!cli}")" "$H" \
		"$m/opened_once"
	fx_stop "cli$m"
	fx_stop "srv$m"
}

held_case storage

# burst: 800 births (both ends of 400 connections) in one pass through a
# ring of 64 KiB; before the pass drained the ring as it went, a burst of
# 100k births lost 74k.
B=400
port=$(free_port)
fx_start bsrv server -p "$port" && fx_start bcli client -p "$port" || fail burst/start fixtures
if cs_attach "$TMP/burst.json" "$TMP/burst.err" -p "$FX_PID_bcli,$FX_PID_bsrv" -j -i 60 \
	--ringbuf-size 65536; then
	assert_eq "$(fx_cmd bcli "open $B")" "opened $B" burst/pool_opened
	wait_for "[[ \$(fx_cmd bsrv stats) == 'stats accepted $B '* ]]" 20
	cs_stop
	J=$TMP/burst.json
	assert_eq "$(jqn .agent.events_lost "$J")" 0 burst/none_lost
	assert_eq "$(jqn ".processes[] | select(.pid == $FX_PID_bcli) | .totals.connections_opened" "$J")" \
		"$B" burst/opened
	assert_eq "$(jqn ".processes[] | select(.pid == $FX_PID_bsrv) | .totals.connections_accepted" "$J")" \
		"$B" burst/accepted
	assert_eq "$(jqn .agent.books_mismatch_last "$J")" 0 burst/books_agree_with_kernel
else
	fail burst/attach "$(head -c 300 "$TMP/burst.err")"
fi
fx_stop bcli
fx_stop bsrv
