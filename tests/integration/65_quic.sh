#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# QUIC with real peers: Debian's ngtcp2 example server (gtlsserver) and
# client (gtlsclient) on loopback, traced by attach. The servers are
# targets; the clients are children of a traced driver (tests/quic_driver.sh,
# followed with --children). Every count is exact against what the driver
# ran, from both sources: the wire (cgroup_skb) and the libngtcp2 uprobes.
#   plain server:  5 clients in a row, 8 four at a time, 1 NAT rebinding,
#                  1 deliberate migration (ngtcp2_conn_initiate_migration),
#                  1 with an unknown version (answered by Version
#                  Negotiation, no connection on the wire)
#   Retry server:  2 clients (gtlsserver -V)
#   closed port:   1 client that gets no answer and gives up (refused)
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

quic_setup www

PA=$(udp_free_port) PB=$(udp_free_port) PC=$(udp_free_port)
quic_server "$TMP" "$PA" || { fail setup/server "gtlsserver did not bind $PA"; exit 1; }
SA=$QS_PID
quic_server "$TMP" "$PB" -V || { fail setup/retry_server "gtlsserver -V did not bind $PB"; exit 1; }
SB=$QS_PID
fix_start drv "$TESTS_DIR/quic_driver.sh"
fix_expect drv 'ready *' 10 || { fail setup/driver "no ready line"; exit 1; }
DPID=${FIX_LINE#ready }

# summary: the servers' UDP sockets (as ss -p counts them) and their library.
"$CONNSCOPE" summary -p "$SA" -j >"$TMP/s.json" 2>"$TMP/s.err" || fail summary/run "$(cat "$TMP/s.err")"
assert_eq "$(jqn ".udp.processes[] | select(.pid == $SA) | .udp_sockets" "$TMP/s.json")" \
	"$(ss -Huanp | grep -c "pid=$SA,")" summary/udp_sockets
assert_eq "$(jqn ".udp.processes[] | select(.pid == $SA) | .quic_library | startswith(\"libngtcp2.so\")" \
	"$TMP/s.json")" true summary/quic_library
"$CONNSCOPE" summary -p "$SA" >"$TMP/s.txt" 2>&1
if grep -Eq "^$SA +gtlsserver +[0-9]+  libngtcp2\.so" "$TMP/s.txt"; then
	ok summary/text_row
else
	fail summary/text_row "$(tail -5 "$TMP/s.txt")"
fi

cs_attach "$TMP/q.json" "$TMP/q.err" -p "$SA,$SB,$DPID" --children -j -i 0.5 \
	--report "$TMP/q.html" --prom "$TMP/q.prom" || { fail attach "$(cat "$TMP/q.err")"; exit 1; }

run() {	# NAME COMMAND [WANT_FAILED]: clients that exited nonzero
	if fix_cmd drv "$2" 'done *' 120; then
		[[ -z ${3:-} ]] || assert_eq "${FIX_LINE#done }" "$3" "clients/$1"
	else
		fail "clients/$1" "driver gave no answer to: $2"
	fi
}
run sequential "seq 5 $PA" 0
run parallel "par 8 4 $PA" 0
run retry "seq 2 $PB" 0
run rebinding "seq 1 $PA --change-local-addr=100ms --nat-rebinding --delay-stream=400ms" 0
# A deliberate migration: new connection IDs, so only the library sees it.
run migration "seq 1 $PA --change-local-addr=100ms --delay-stream=400ms" 0
# gtlsclient exits 0 after Version Negotiation without a common version.
run version_negotiation "seq 1 $PA -v 0x1a2a3a4a" 0
# No server on PC: the client gives up after 1 s (and exits 0 even so).
run refused "seq 1 $PC --handshake-timeout=1s"
cs_stop
assert_eq "$?" 0 attach/exit_status
J=$TMP/q.json

srv() { jqn ".processes[] | select(.pid == $1) | .quic$2" "$J"; }
# Plain server: 5 + 8 + 1 rebinding + 1 migration; the unknown version
# opens nothing.
assert_eq "$(srv "$SA" '.sources | join(",")')" "wire,ngtcp2" server/sources
assert_eq "$(srv "$SA" .by_source.wire.connections)" 15 server/wire/connections
assert_eq "$(srv "$SA" .by_source.wire.handshakes_completed)" 15 server/wire/handshakes
assert_eq "$(srv "$SA" .by_source.ngtcp2.connections)" 15 server/ngtcp2/connections
assert_eq "$(srv "$SA" .by_source.ngtcp2.handshakes_completed)" 15 server/ngtcp2/handshakes
assert_eq "$(srv "$SA" .handshakes_failed)" 0 server/failed
assert_eq "$(srv "$SA" .as_server)" 15 server/as_server
assert_eq "$(srv "$SA" .version_negotiations)" 1 server/version_negotiations
assert_eq "$(srv "$SA" .migrations)" 1 server/migrations
assert_eq "$(srv "$SA" .retries)" 0 server/no_retry
# Retry server: both connections got one Retry and completed.
assert_eq "$(srv "$SB" .connections)" 2 retry_server/connections
assert_eq "$(srv "$SB" .handshakes_completed)" 2 retry_server/handshakes
assert_eq "$(srv "$SB" .retries)" 2 retry_server/retries

# Clients: one process each, charged to its own pid and comm.
C='[.processes[] | select(.comm == "gtlsclient")]'
sum() { jqn "$C | map(.quic$1) | add" "$J"; }
assert_eq "$(jqn "$C | length" "$J")" 19 clients/processes
assert_eq "$(jqn "$C | map(select(.quic.by_source.wire.connections > 1)) | length" "$J")" 0 \
	clients/one_connection_each
assert_eq "$(sum .by_source.wire.connections)" 18 clients/wire/connections
assert_eq "$(sum .by_source.ngtcp2.connections)" 19 clients/ngtcp2/connections
assert_eq "$(sum .by_source.wire.handshakes_completed)" 17 clients/wire/handshakes
assert_eq "$(sum .by_source.ngtcp2.handshakes_completed)" 17 clients/ngtcp2/handshakes
assert_eq "$(sum .as_client)" 19 clients/as_client
assert_eq "$(sum .retries)" 2 clients/retries
assert_eq "$(sum .version_negotiations)" 1 clients/version_negotiations
assert_eq "$(sum .by_source.wire.migrations)" 1 clients/rebinding
assert_eq "$(sum .by_source.ngtcp2.migrations)" 1 clients/initiated_migration
assert_eq "$(sum .migrations)" 2 clients/migrations
# The refused client: a failed handshake and no completed one, both ways.
R="$C | map(select(.quic.by_source.wire.handshakes_failed == 1))"
assert_eq "$(jqn "$R | length" "$J")" 1 refused/one_process
assert_eq "$(jqn "$R | .[0].quic.by_source.wire.handshakes_completed" "$J")" 0 refused/wire_none
assert_eq "$(jqn "$R | .[0].quic.by_source.ngtcp2.handshakes_failed" "$J")" 1 refused/ngtcp2
assert_eq "$(jqn "$R | .[0].quic.by_source.ngtcp2.handshakes_completed" "$J")" 0 \
	refused/ngtcp2_none

# The agent's own books: attached on the cgroup v2 root, nothing lost.
assert_eq "$(jqn .agent.quic.wire "$J")" true agent/wire_on
assert_eq "$(jqn '.agent.quic.cgroup | length > 0' "$J")" true agent/cgroup
assert_eq "$(jqn .agent.quic.wire_events_lost "$J")" 0 agent/wire_lost
assert_eq "$(jqn .agent.quic.ngtcp2_events_lost "$J")" 0 agent/ngtcp2_lost
assert_eq "$(jqn '.agent.quic.malformed_events' "$J")" 0 agent/malformed
assert_eq "$(jqn '.agent.quic.datagrams > 0' "$J")" true agent/datagrams

# Heatmaps: the connections map's "opened" row adds up to the connections.
assert_eq "$(srv "$SA" '.heatmaps[] | select(.kind == "quic_connections") |
	(.rows | index("opened")) as $i | .cells[$i] | add')" 15 heatmap/opened
assert_eq "$(srv "$SA" '.heatmaps[] | select(.kind == "quic_handshake") | [.cells[] | add] |
	add')" 15 heatmap/handshakes
# The HTML report has the server's QUIC part with the same figure.
if grep -q "id=\"quic-$SA\"" "$TMP/q.html"; then
	ok html/quic_part
else
	fail html/quic_part "no QUIC part for $SA in the report"
fi
assert_eq "$(awk -v id="id=\"quic-$SA\"" 'index($0, id) { on = 1 }
	on && match($0, /data-k="quic_connections">[0-9]+/) {
		print substr($0, RSTART + 26, RLENGTH - 26); exit }' "$TMP/q.html")" 15 html/connections

# Prometheus: the same figures, with their source; promtool finds nothing.
prom() { awk -v m="$1" -v p="pid=\"$2\"" 'index($0, m "{") == 1 && index($0, p) { print $NF }' "$TMP/q.prom"; }
assert_eq "$(prom connscope_process_quic_connections_total "$SA")" 15 prom/connections
assert_eq "$(grep -c "^connscope_process_quic_connections_total{pid=\"$SA\".*source=\"ngtcp2\"" \
	"$TMP/q.prom")" 1 prom/source_label
assert_eq "$(prom connscope_process_quic_retries_total "$SB")" 2 prom/retries
assert_eq "$(prom connscope_process_quic_handshake_seconds_count "$SA")" 15 prom/handshake_count
assert_eq "$(grep -c '^connscope_quic_source_attached{source="wire"} 1$' "$TMP/q.prom")" 1 \
	prom/wire_attached
if command -v promtool >/dev/null; then
	assert_eq "$(promtool check metrics <"$TMP/q.prom" 2>&1)" "" prom/promtool_silent
else
	fail prom/promtool "promtool missing (apt-get install prometheus)"
fi

# --no-quic: no QUIC programs, no quic object.
cs_attach "$TMP/n.json" "$TMP/n.err" -p "$SA" --no-quic -j || fail noquic/attach "$(cat "$TMP/n.err")"
cs_stop
assert_eq "$(jqn '.processes[0].quic == null and .agent.quic == null' "$TMP/n.json")" true \
	noquic/absent
# The live table (text, not a tty): a QUIC line per process, counts so
# far, and the whole output fits 80 columns.
cs_attach "$TMP/live.txt" "$TMP/live.err" -p "$SA" -i 0.3 || fail live/attach "$(cat "$TMP/live.err")"
run live "seq 2 $PA" 0
wait_for "grep -Eq '^[0-9:.]+ +$SA +gtlsserver +QUIC 2 conns, 2 done, 0 failed' '$TMP/live.txt'" 10
if grep -Eq "^[0-9:.]+ +$SA +gtlsserver +QUIC 2 conns, 2 done, 0 failed, 0 open \[ngtcp2\]$" "$TMP/live.txt"; then
	ok live/quic_line
else
	fail live/quic_line "$(grep QUIC "$TMP/live.txt" | tail -2)"
fi
cs_stop
assert_eq "$(awk 'length > 80' "$TMP/live.txt" | wc -l)" 0 live/fits_80_columns
fix_send drv quit
