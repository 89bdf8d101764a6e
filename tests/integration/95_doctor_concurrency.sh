#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Concurrency counts the connections carrying requests, not the sockets
# still open (#26): a client that lets the server close first and closes
# its own end late (a Node agent with keepAlive: false, HTTP's Connection:
# close) holds up to two sockets a worker, one of them in CLOSE_WAIT, with
# one request in flight. lagclose.py: 8 workers, 400 requests, a
# connection each, the one before closed only after the next answer. The
# doctor's churn finding sizes the pool by the requests in flight (at most
# 8, never the 16 sockets), in both record modes. Before: concurrency 16,
# "keep >= 16 idle connections".
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=400
W=8
LAG=$TESTS_DIR/fixtures/lagclose.py
EV() { echo "(.evidence[] | select(.name == \"$1\") | .value)"; }

# lag_case NAME [DOCTOR FLAGS...]
lag_case() {
	local name=$1 J c pc open2
	shift
	J=$TMP/$name.json
	fix_start "${name}s" python3 "$LAG" server && fix_expect "${name}s" "listening *" 10 ||
		{ fail "$name/start" server; return; }
	read -r _ PORT _ <<<"$FIX_LINE"
	fix_start "${name}c" python3 "$LAG" client "$PORT" -w "$W" && fix_expect "${name}c" "ready *" 10 ||
		{ fail "$name/start" client; return; }
	CPID=${FIX_LINE#ready }
	spawn_bg "$CONNSCOPE" doctor -d 120 -i 0.3 -j -p "$CPID" "$@" >"$J" 2>"$TMP/$name.err"
	DR_PID=$BG_PID
	wait_for "grep -q '^connscope: tracing' '$TMP/$name.err' || ! kill -0 $DR_PID 2>/dev/null" 30
	if ! grep -q '^connscope: tracing' "$TMP/$name.err"; then
		fail "$name/attach" "$(cat "$TMP/$name.err")"
		return
	fi
	fix_cmd "${name}c" "go $N" '@(done|error) *' 120
	assert_eq "$FIX_LINE" "done $N opened $N" "$name/fixture"
	# Every client socket closed (the fixture closed them all before
	# answering); the server's TIME_WAIT is the server's.
	kill -INT "$DR_PID"
	wait "$DR_PID"
	assert_eq "$?" 0 "$name/exit_status"
	c=$(jqn "[.findings[] | select(.rule == \"churn\" and .pid == $CPID)][0] | .concurrency" "$J")
	pc=$(jqn "[.findings[] | select(.rule == \"churn\" and .pid == $CPID)][0] | $(EV peak_concurrent)" "$J")
	[[ $c =~ ^[0-9]+$ ]] || c=0
	echo "# $name: concurrency $c"
	assert_eq "$((c >= 2 && c <= W))" 1 "$name/concurrency_is_requests_in_flight (2 <= $c <= $W)"
	assert_eq "$pc" "$c" "$name/peak_concurrent_evidence"
	assert_eq "$(jqn "[.findings[] | select(.rule == \"churn\" and .pid == $CPID)][0] | [.connections, .requests] | @tsv" "$J")" \
		"$(printf '%s\t%s' "$N" "$N")" "$name/counts_exact"
	assert_eq "$(jqn "[.findings[] | select(.rule == \"churn\" and .pid == $CPID)][0].fix | test(\"keep at least $c idle connection\")" "$J")" \
		true "$name/fix_sized_to_requests_in_flight"
	# The same figure in the reuse table.
	assert_eq "$(jqn "[.processes[] | select(.pid == $CPID)][0].reuse.endpoints[] | select(.endpoint == \"127.0.0.1:$PORT\") | .peak_concurrent" "$J")" \
		"$c" "$name/reuse_table_peak"
	fix_send "${name}c" exit
	fix_send "${name}s" exit
}

lag_case default
lag_case per_transition --per-transition
