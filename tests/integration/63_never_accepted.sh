#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Accepted means accept() returned it. Two listeners that accept only when
# told, in a network namespace of the test's own: one never accepts, the
# other accepts 7 of its 20; then every client resets. A connection that
# completed its handshake and ended in the accept queue is counted apart,
# as never accepted. Checked against the kernel: the listener's queue
# length (ss Recv-Q) before the resets is what was never accepted, and
# PassiveOpens the sum of both. Before, socket-storage mode counted every
# passive child accepted at its end (accepted 20 for a listener that never
# accepts; --per-transition 0). Both kernel-side modes.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=20
K=7

# snmp_tcp FIELD: a Tcp counter of /proc/net/snmp in the namespace.
snmp_tcp() {
	inns awk -v f="$1" '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++)
		if ($i == f) c = i; h = 1 } else print $c }' /proc/net/snmp
}

# queue PORT: connections waiting in the listener's accept queue.
queue() {
	inns ss -Hltn "( sport = :$1 )" | awk '{ print $2 }'
}

acq() {
	fix_start "$1" "${FX_WRAP[@]}" python3 "$TESTS_DIR/fixtures/acceptq.py" "${@:2}" &&
		fix_expect "$1" "@(listening|ready) *" 10
}

never_case() {
	local m=$1 J p0 p1 pa pb ca cb
	shift
	fx_netns "nacc$m"
	FX_WRAP=(ip netns exec "$NS")
	CS_WRAP=(ip netns exec "$NS")
	acq "a$m" server || { fail "$m/start" "server a"; return; }
	read -r _ pa _ <<<"$FIX_LINE"
	acq "b$m" server || { fail "$m/start" "server b"; return; }
	read -r _ pb _ <<<"$FIX_LINE"
	acq "ca$m" client "$pa" && acq "cb$m" client "$pb" || { fail "$m/start" clients; return; }
	local sa=a${m}_PID sb=b${m}_PID
	J=$TMP/nacc_$m.json
	cs_attach "$J" "$TMP/nacc_$m.err" -p "${!sa},${!sb}" -j -i 0.2 "$@" ||
		{ fail "$m/attach" "$(cat "$TMP/nacc_$m.err")"; return; }
	p0=$(snmp_tcp PassiveOpens)
	fix_cmd "ca$m" "connect $N" "connected*" 20 && fix_cmd "cb$m" "connect $N" "connected*" 20 ||
		{ fail "$m/connect" "$FIX_LINE"; return; }
	fix_cmd "b$m" "accept $K" "accepted*" 10 || { fail "$m/accept" "$FIX_LINE"; return; }
	p1=$(snmp_tcp PassiveOpens)
	# The kernel's own count of what waits unaccepted.
	assert_eq "$(queue "$pa")" $N "$m/kernel_queue_never"
	assert_eq "$(queue "$pb")" $((N - K)) "$m/kernel_queue_some"
	assert_eq "$((p1 - p0))" $((2 * N)) "$m/kernel_passive_opens"
	fix_cmd "ca$m" reset "reset*" 10 && fix_cmd "cb$m" reset "reset*" 10 ||
		{ fail "$m/reset" "$FIX_LINE"; return; }
	wait_for "[ \$(inns ss -Htan state established '( sport = :$pa or sport = :$pb )' | wc -l) -eq 0 ]" 10 ||
		fail "$m/resets_done" "connections still established"
	fix_cmd "b$m" close "closed" 10
	cs_stop
	assert_eq "$?" 0 "$m/exit_status"
	tot() { jqn ".processes[] | select(.pid == $1) | .totals.$2" "$J"; }
	assert_eq "$(tot "${!sa}" connections_accepted)" 0 "$m/never/accepted"
	assert_eq "$(tot "${!sa}" connections_never_accepted)" $N "$m/never/never_accepted"
	assert_eq "$(tot "${!sb}" connections_accepted)" $K "$m/some/accepted"
	assert_eq "$(tot "${!sb}" connections_never_accepted)" $((N - K)) "$m/some/never_accepted"
	assert_eq "$(tot "${!sb}" connections_opened)" 0 "$m/some/opened"
	fx_stop "ca$m"; fx_stop "cb$m"; fx_stop "a$m"; fx_stop "b$m"
	FX_WRAP=() CS_WRAP=()
}

never_case sk
never_case pt --per-transition
