#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# An HTTP/3 gateway on quic-go: Debian's Caddy (Go, quic-go compiled in;
# HTTP/3 on the TCP listener's port number, `tls internal`, admin off, its
# state in a temporary HOME) on 127.0.0.1, loaded by ngtcp2's gtlsclient.
# attach -p CADDY must count every HTTP/3 connection and handshake from
# the wire; quic-go's move to a new connection ID after each handshake is
# that connection's, not an unmatched flow; the UDP traffic never reaches
# the listener's TCP books (0 accepted, 0 requests, 0 bytes), and 5 TCP
# connections beside it are counted exactly; summary names quic-go.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

quic_setup
CLIENTS=20
TCP_CONNS=5

# A port free for both TCP and UDP.
for ((i = 0; i < 200; i++)); do
	PORT=$(udp_free_port) || break
	[[ -z $(ss -Hltn "sport = :$PORT") ]] && break
done
# Ready once an HTTP/3 client got through (UDP only, before the agent
# starts, so the TCP books stay empty).
caddy_start "$TMP" "$PORT" || exit 1
fetch() { caddy_fetch "$@"; }

# summary: the stack compiled into /usr/bin/caddy.
"$CONNSCOPE" summary -p "$CADDY_PID" -j >"$TMP/s.json" 2>"$TMP/s.err" || fail summary/run "$(cat "$TMP/s.err")"
lib=$(jqn ".udp.processes[] | select(.pid == $CADDY_PID) | .quic_library" "$TMP/s.json")
if [[ $lib == "quic-go "*"(statically linked"* ]]; then
	ok summary/names_quic_go
else
	fail summary/names_quic_go "quic_library '$lib'"
fi

cs_attach "$TMP/a.json" "$TMP/a.err" -p "$CADDY_PID" -j -i 0.5 --report "$TMP/a.html" ||
	{ fail attach "$(cat "$TMP/a.err")"; exit 1; }
good=0
for ((i = 0; i < CLIENTS; i++)); do
	fetch && good=$((good + 1))
done
assert_eq "$good" "$CLIENTS" clients/completed_with_200
J=$TMP/a.json
cs_stop
assert_eq "$?" 0 attach/exit_status
sel=".processes[] | select(.pid == $CADDY_PID)"
assert_eq "$(jqn "$sel | .quic | [.connections, .as_server, .handshakes_completed, .handshakes_failed] | @tsv" "$J")" \
	"$(printf '%s\t%s\t%s\t0' "$CLIENTS" "$CLIENTS" "$CLIENTS")" quic/connections_handshakes
assert_eq "$(jqn "$sel | .quic.lifecycle_source" "$J")" wire quic/source
assert_eq "$(jqn "$sel | .quic.unmatched_short_flows" "$J")" 0 quic/no_unmatched_short_flows
assert_eq "$(jqn "$sel | .quic.short_flows_new_cid" "$J")" "$CLIENTS" quic/new_cid_per_connection
assert_eq "$(jqn "$sel | .reuse | [.connections_accepted, .requests] | @tsv" "$J")" \
	"$(printf '0\t0')" tcp/untouched_by_http3
assert_eq "$(jqn "[$sel | .reuse.endpoints[]?] | length" "$J")" 0 tcp/no_endpoint
assert_eq "$(jqn ".agent.events_lost" "$J")" 0 agent/no_events_lost
# attach names the stack as summary does, and measures it on the wire.
assert_eq "$(jqn "$sel | .quic | [.stack, .stack_lifecycle] | @tsv" "$J")" \
	"$(printf '%s\twire' "$lib")" attach/names_quic_go
if awk -v id="id=\"quic-$CADDY_PID\"" 'index($0, id) { on = 1 }
	on && /Stack: quic-go .*measured on the wire only/ { f = 1; exit } END { exit !f }' "$TMP/a.html"; then
	ok html/names_quic_go
else
	fail html/names_quic_go "no 'Stack: quic-go ... wire only' in Caddy's QUIC part"
fi

# TCP beside HTTP/3: exactly the connections made.
cs_attach "$TMP/b.json" "$TMP/b.err" -p "$CADDY_PID" -j -i 0.5 ||
	{ fail attach2 "$(cat "$TMP/b.err")"; exit 1; }
good=0
for ((i = 0; i < 5; i++)); do
	fetch && good=$((good + 1))
	curl -sk --http1.1 --resolve "localhost:$PORT:127.0.0.1" "https://localhost:$PORT/" \
		-o /dev/null -w '%{http_code}\n' | grep -qx 200 || fail tcp/curl "curl got no 200"
done
assert_eq "$good" 5 clients2/completed_with_200
cs_stop
assert_eq "$?" 0 attach2/exit_status
assert_eq "$(jqn ".processes[] | select(.pid == $CADDY_PID) | .reuse.connections_accepted" "$TMP/b.json")" \
	"$TCP_CONNS" tcp/accepted_exact_beside_http3
assert_eq "$(jqn ".processes[] | select(.pid == $CADDY_PID) | .quic.connections" "$TMP/b.json")" 5 \
	quic/connections_beside_tcp

# The clients followed by name (--comm), each from its exec: 10 short ones
# one after another, then 10 that live 2 s (each request waits 2 s after
# its handshake), 5 at a time. Each is one process with one connection as
# client and a completed handshake, from the wire and from ngtcp2 (whose
# probes are on from the start); the headline is exact for every one.
cs_attach "$TMP/c.json" "$TMP/c.err" --comm gtlsclient -j -i 0.5 ||
	{ fail attach3 "$(cat "$TMP/c.err")"; exit 1; }
good=0
for ((i = 0; i < CLIENTS / 2; i++)); do
	fetch && good=$((good + 1))
done
for ((b = 0; b < CLIENTS / 2; b += 5)); do
	bg=()
	for ((i = 0; i < 5; i++)); do
		fetch --delay-stream=2s &
		bg+=("$!")
	done
	for p in "${bg[@]}"; do
		wait "$p" && good=$((good + 1))
	done
done
assert_eq "$good" "$CLIENTS" comm/completed_with_200
cs_stop
assert_eq "$?" 0 attach3/exit_status
J=$TMP/c.json
C='[.processes[] | select(.comm == "gtlsclient")]'
assert_eq "$(jqn "$C | length" "$J")" "$CLIENTS" comm/each_a_process
assert_eq "$(jqn "$C | map(select(.quic.by_source.wire.connections == 1 and
	.quic.by_source.wire.handshakes_completed == 1 and .quic.by_source.wire.as_client == 1 and
	.quic.by_source.wire.as_server == 0 and .quic.by_source.wire.handshakes_failed == 0)) |
	length" "$J")" "$CLIENTS" comm/wire_exact
assert_eq "$(jqn "$C | map(select(.quic.by_source.ngtcp2.connections == 1 and
	.quic.by_source.ngtcp2.handshakes_completed == 1)) | length" "$J")" "$CLIENTS" comm/ngtcp2_exact
assert_eq "$(jqn "$C | map(select(.quic.connections == 1 and .quic.as_client == 1 and
	.quic.handshakes_completed == 1 and .quic.handshakes_failed == 0 and
	.quic.ngtcp2_probes_late == false)) | length" "$J")" "$CLIENTS" comm/headline_exact
assert_eq "$(jqn "[.agent.quic.wire_events_lost, .agent.quic.ngtcp2_events_lost] | add" "$J")" 0 \
	comm/nothing_lost
