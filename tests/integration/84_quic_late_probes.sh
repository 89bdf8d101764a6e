#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A process whose libngtcp2 probes came after its first connection began
# (#27): the probes go on a library file when an interval's scan finds a
# target mapping it, so a --comm client that maps its own copy of
# libngtcp2 (not the system one, probed from the start) runs its first
# connection unseen by ngtcp2, which then reports only its end. Its
# headline must never drop below what the wire saw, and the report says
# the probes came late (JSON, HTML). Clients that live 2 s, each with its
# own copy (a copy is probed once, whoever maps it): the scan falls
# within each one's life, after its first Initial, nearly always (that is
# the defect); then clients on a copy already probed: ngtcp2 exact.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

quic_setup www
COPIES=3
AFTER=2

SYSLIB=$(ldd "$(command -v gtlsclient)" | awk '$1 ~ /^libngtcp2\.so/ { print $3; exit }')
[[ -f $SYSLIB ]] || { fail setup/libngtcp2 "gtlsclient maps no libngtcp2.so"; exit 1; }
for ((c = 0; c < COPIES; c++)); do
	mkdir -p "$TMP/lib$c" && cp -L "$SYSLIB" "$TMP/lib$c/$(basename "$SYSLIB")"
done
PA=$(udp_free_port)
quic_server "$TMP" "$PA" || { fail setup/server "gtlsserver did not bind $PA"; exit 1; }
cs_attach "$TMP/c.json" "$TMP/c.err" --comm gtlsclient -j -i 0.5 --report "$TMP/c.html" ||
	{ fail attach "$(cat "$TMP/c.err")"; exit 1; }
# One client on library copy $1 that lives ~2 s: its request waits 2 s
# after the handshake. Its pid goes to pids; a failure is said.
pids=()
client() {
	LD_LIBRARY_PATH=$TMP/lib$1 gtlsclient -q --exit-on-all-streams-close --delay-stream=2s \
		127.0.0.1 "$PA" "https://127.0.0.1:$PA/index.html" >/dev/null 2>&1 </dev/null &
	pids+=("$!")
	wait $! || fail "client/$1/exit" "gtlsclient on copy $1 failed"
}
for ((c = 0; c < COPIES; c++)); do
	client "$c"
done
for ((c = 0; c < AFTER; c++)); do
	client 0
done
cs_stop
assert_eq "$?" 0 attach/exit_status
J=$TMP/c.json
C='[.processes[] | select(.comm == "gtlsclient")]'
assert_eq "$(jqn "$C | length" "$J")" "$((COPIES + AFTER))" clients/each_a_process
assert_eq "$(jqn "$C | map(select(.quic.by_source.wire.connections == 1 and
	.quic.by_source.wire.handshakes_completed == 1)) | length" "$J")" "$((COPIES + AFTER))" \
	clients/wire_exact
# The headline: one connection, as client, handshake completed, every one.
assert_eq "$(jqn "$C | map(select(.quic.connections == 1 and .quic.as_client == 1 and
	.quic.handshakes_completed == 1 and .quic.handshakes_failed == 0)) | length" "$J")" \
	"$((COPIES + AFTER))" clients/headline_never_below_wire
late=$(jqn "$C | map(select(.quic.ngtcp2_probes_late == true)) | length" "$J")
if [[ $late =~ ^[0-9]+$ ]] && ((late >= 1 && late <= COPIES)); then
	ok clients/late_said
else
	fail clients/late_said "$late clients said late, want 1 to $COPIES"
fi
# A late one's figures come from the wire, which saw its whole life, and
# it says how many connections began before the probes.
assert_eq "$(jqn "$C | map(select(.quic.ngtcp2_probes_late == true and
	(.quic.lifecycle_source != \"wire\" or .quic.ngtcp2_missed_connections != 1))) | length" "$J")" \
	0 clients/late_from_wire
# Clients started on a copy already probed: ngtcp2 saw them from birth.
for p in "${pids[@]:COPIES}"; do
	assert_eq "$(jqn ".processes[] | select(.pid == $p) | .quic |
		[.ngtcp2_probes_late, .lifecycle_source, .by_source.ngtcp2.connections] | @tsv" "$J")" \
		"$(printf 'false\tngtcp2\t1')" "clients/probed_from_birth"
done
# The HTML report says it where the late process's QUIC part is.
for p in $(jqn "$C | map(select(.quic.ngtcp2_probes_late == true) | .pid) | .[]" "$J"); do
	if awk -v id="id=\"quic-$p\"" 'index($0, id) { on = 1 } on && /probes came late/ { f = 1; exit }
		END { exit !f }' "$TMP/c.html"; then
		ok html/late_said
	else
		fail html/late_said "no 'probes came late' in the QUIC part of $p"
	fi
done
