#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Attaching while the load already runs. A pure server (python3's
# http.server, HTTP/1.0: a connection a request) under continuous load
# from ab, a separate untraced process, in a network namespace of the
# test's own; connscope attaches to it mid-load ROUNDS times. At start-up
# sockets sit in its accept queue, mid-handshake, or just accepted: every
# one is a passive child of its listener, never a connection it opened.
# Before, 2 of 6 runs charged the server connections_opened 2-3, with
# "remote" endpoints named after the clients' ephemeral ports. Both
# kernel-side modes.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
ROUNDS=${MIDLOAD_ROUNDS:-8}
PORT=8000

fx_netns midload
spawn_bg ip netns exec "$NS" sh -c "exec python3 -m http.server $PORT --bind 127.0.0.1 -d $TMP >$TMP/http.log 2>&1"
SRV=$BG_PID
wait_for "inns ss -Hltn '( sport = :$PORT )' | grep -q LISTEN" 10 || { fail start http.server; exit 0; }
echo hello >"$TMP/index.html"
# ab stops at -n or -t, whichever first; -r: a reset does not end it.
spawn_bg sh -c "exec ip netns exec $NS ab -q -r -t 600 -n 10000000 -c 8 http://127.0.0.1:$PORT/index.html >$TMP/ab.log 2>&1"
AB=$BG_PID
wait_for "[ \$(inns ss -Htan state time-wait '( sport = :$PORT )' | wc -l) -ge 100 ]" 20 ||
	fail load_started "no TIME_WAIT on :$PORT"

# midload_attach MODE ROUND ARGS...: one agent, attached mid-load for 1 s.
midload_attach() {
	local m=$1 r=$2
	shift 2
	ip netns exec "$NS" "$CONNSCOPE" attach -p "$SRV" -d 1 -i 0.5 -j "$@" >"$TMP/midload_${m}_$r.json" \
		2>"$TMP/midload_${m}_$r.err"
}

midload_check() {
	local m=$1 r=$2 rc=$3 J=$TMP/midload_$1_$2.json
	((rc == 0)) || { fail "$m/$r/attach" "$(tail -c 300 "$TMP/midload_${m}_$r.err")"; return; }
	local p=".processes[] | select(.pid == $SRV)"
	assert_eq "$(jqn "$p | .totals.connections_opened" "$J")" 0 "$m/$r/opened"
	assert_eq "$(jqn "$p | .totals.connect_failed" "$J")" 0 "$m/$r/connect_failed"
	# Its endpoints are its listener only: no remote named after a client port.
	assert_eq "$(jqn "[$p | (.reuse.endpoints[]?, .time_wait_endpoints[]?) | select(.side == \"remote\") | .endpoint] | join(\",\")" "$J")" \
		"" "$m/$r/no_remote_endpoints"
	# Under load it accepted, and no more than it closed and holds.
	assert_eq "$(jqn "$p | .totals.connections_accepted > 0" "$J")" true "$m/$r/accepted"
	assert_eq "$(jqn "$p | .totals.connections_accepted <= .totals.connections_closed + (.tcp | [.[]] | add) - .tcp.listen" "$J")" \
		true "$m/$r/accepted_le_closed_and_held"
}

# Each round, both modes attach at once: two agents, each on its own,
# each meeting the load mid-flight (one after the other took twice the
# time for the same 16 attaches).
for r in $(seq "$ROUNDS"); do
	midload_attach pt "$r" --per-transition &
	PT=$!
	midload_attach sk "$r"
	sk_rc=$?
	wait "$PT"
	pt_rc=$?
	midload_check sk "$r" "$sk_rc"
	midload_check pt "$r" "$pt_rc"
done
kill -0 "$AB" 2>/dev/null && ok load_ran_throughout || fail load_ran_throughout "ab ended early"
