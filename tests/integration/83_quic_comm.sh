#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Clients named by --comm get the QUIC packet programs and the libngtcp2
# probes before they can send: a gtlsclient joins the targets at its exec
# (in the kernel), its first Initial goes out within milliseconds, and the
# programs used to be attached only once the agent heard of its UDP socket
# (the wire missed it) and the probes only at an interval's scan (ngtcp2
# saw nothing). 10 short clients, one after another: each counted once,
# as client, handshake completed, by the wire and by ngtcp2.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

quic_tools
TMP=$(lib_tmpdir)
N=10

quic_www "$TMP" || { fail setup/cert "openssl could not make a certificate"; exit 1; }
PA=$(udp_free_port)
quic_server "$TMP" "$PA" || { fail setup/server "gtlsserver did not bind $PA"; exit 1; }
cs_attach "$TMP/c.json" "$TMP/c.err" --comm gtlsclient -j -i 0.5 ||
	{ fail attach "$(cat "$TMP/c.err")"; exit 1; }
quic_fetch "$PA" "$N"
cs_stop
assert_eq "$?" 0 attach/exit_status
C='[.processes[] | select(.comm == "gtlsclient")]'
J=$TMP/c.json
assert_eq "$(jqn "$C | length" "$J")" "$N" clients/each_a_process
assert_eq "$(jqn "$C | map(select(.quic.by_source.wire.connections == 1 and
	.quic.by_source.wire.handshakes_completed == 1 and .quic.as_client == 1 and
	.quic.as_server == 0 and .quic.handshakes_failed == 0)) | length" "$J")" "$N" clients/wire_exact
assert_eq "$(jqn "$C | map(.quic.by_source.ngtcp2.connections // 0) | add" "$J")" "$N" clients/ngtcp2_saw_each
assert_eq "$(jqn "$C | map(.quic.connections) | add" "$J")" "$N" clients/headline
assert_eq "$(jqn .agent.quic.wire_events_lost "$J")" 0 agent/nothing_lost
