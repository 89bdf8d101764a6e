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

quic_setup
CLIENTS=6
PORT=8443
CPORT=45000

fx_netns quicreuse
inns sysctl -qw net.ipv4.ip_local_port_range="$CPORT $CPORT" ||
	{ fail setup/port_range "cannot narrow the namespace's ephemeral ports"; exit 1; }
CADDY_WRAP=(ip netns exec "$NS")
caddy_start "$TMP" "$PORT" || exit 1
# One client, from the namespace's one ephemeral port.
fetch() { caddy_fetch; }

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
