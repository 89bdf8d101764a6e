#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A client port reused against an HTTP/3 gateway on quic-go (#27): each
# new client that binds the port an earlier one had arrives on the same
# 4-tuple while the server's books still hold the earlier connection as
# live (its end is encrypted). quic-go moves each connection to a new
# connection ID after its handshake: that flow is the newest connection's
# on the 4-tuple, not an unmatched one. With 20 clients on 28,232
# ephemeral ports two share a port in ~1 run of 150 (82_caddy_http3 met
# it); here the test's own namespace has one ephemeral port, so every
# client reuses it.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

quic_tools
command -v caddy >/dev/null || { fail tools/caddy "caddy missing (apt-get install caddy)"; exit 1; }
TMP=$(lib_tmpdir)
CLIENTS=6
PORT=8443
CPORT=45000

fx_netns quicreuse
inns sysctl -qw net.ipv4.ip_local_port_range="$CPORT $CPORT" ||
	{ fail setup/port_range "cannot narrow the namespace's ephemeral ports"; exit 1; }
mkdir -p "$TMP/home"
cat >"$TMP/Caddyfile" <<CADDY
{
	admin off
	skip_install_trust
	auto_https disable_redirects
	servers {
		protocols h1 h2 h3
	}
}
https://localhost:$PORT {
	bind 127.0.0.1
	tls internal
	respond "hello"
}
CADDY
spawn_bg ip netns exec "$NS" env HOME="$TMP/home" XDG_DATA_HOME="$TMP/home/data" \
	XDG_CONFIG_HOME="$TMP/home/config" caddy run --config "$TMP/Caddyfile" --adapter caddyfile \
	>"$TMP/caddy.log" 2>&1
if ! wait_for "[[ -n \$(inns ss -Hlun 'sport = :$PORT') ]]" 30; then
	fail setup/caddy "caddy did not bind $PORT: $(tail -3 "$TMP/caddy.log")"
	exit 1
fi
CADDY_PID=$(inns ss -Hlunp "sport = :$PORT" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
# One client from the namespace's one ephemeral port: 0 when its
# handshake completed and it got a 200.
fetch() {
	inns gtlsclient --exit-on-all-streams-close --handshake-timeout=5s 127.0.0.1 "$PORT" \
		"https://127.0.0.1:$PORT/" </dev/null 2>&1 >/dev/null |
		grep -E -c 'QUIC handshake has completed|:status: 200' | grep -qx 2
}
# Caddy issues its certificate at start: ready when a client gets through.
wait_for fetch 30 || { fail setup/first_fetch "no HTTP/3 answer: $(tail -3 "$TMP/caddy.log")"; exit 1; }

# The agent in the namespace (its UDP sockets are seeded from there); ip
# netns exec mounts a sysfs of its own, without the cgroup v2 hierarchy
# the wire unit attaches to: mounted again in that private mount
# namespace, which goes with the agent.
CS_WRAP=(ip netns exec "$NS" sh -c 'mount -t cgroup2 none /sys/fs/cgroup && exec "$@"' sh)
cs_attach "$TMP/a.json" "$TMP/a.err" -p "$CADDY_PID" -j -i 0.5 ||
	{ fail attach "$(cat "$TMP/a.err")"; exit 1; }
good=0
for ((i = 0; i < CLIENTS; i++)); do
	fetch && good=$((good + 1))
done
assert_eq "$good" "$CLIENTS" clients/completed_with_200
cs_stop
assert_eq "$?" 0 attach/exit_status
sel=".processes[] | select(.pid == $CADDY_PID) | .quic"
assert_eq "$(jqn "$sel | [.connections, .as_server, .handshakes_completed, .handshakes_failed] |
	@tsv" "$TMP/a.json")" "$(printf '%s\t%s\t%s\t0' "$CLIENTS" "$CLIENTS" "$CLIENTS")" \
	quic/connections_handshakes
assert_eq "$(jqn "$sel | .unmatched_short_flows" "$TMP/a.json")" 0 quic/no_unmatched_short_flows
assert_eq "$(jqn "$sel | .short_flows_new_cid" "$TMP/a.json")" "$CLIENTS" quic/new_cid_per_connection
