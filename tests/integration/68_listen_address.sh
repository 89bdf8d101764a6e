#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A listener's endpoint names its bound address. One process listens on
# 127.0.0.1 and [::1] at one port, on the IPv4 wildcard at another and on
# the IPv6 wildcard at a third, in a network namespace of the test's own;
# clients connect 2, 3, 4 and 5 times. Each listener is its own endpoint:
# "listen 127.0.0.1:P", "listen [::1]:P", "listen *:P", "listen [::]:P" in
# JSON (with listen_address), the text report and Prometheus. Before, all
# printed "listen :PORT" and the first two looked alike. Both modes.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)

conn() {	# conn HOST PORT N: N connections, each closed by the client
	inns python3 -c '
import socket, sys
h, p, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for _ in range(n):
    socket.create_connection((h, p)).close()
' "$@"
}

addr_case() {
	local m=$1 J pid
	shift
	fx_netns "laddr$m"
	fix_start "l$m" ip netns exec "$NS" python3 "$TESTS_DIR/fixtures/listen_addrs.py" \
		127.0.0.1:8080 "[::1]:8080" 0.0.0.0:8081 "[::]:8082" &&
		fix_expect "l$m" "listening *" 10 || { fail "$m/start" listeners; return; }
	read -r _ pid <<<"$FIX_LINE"
	J=$TMP/laddr_$m.json
	CS_WRAP=(ip netns exec "$NS")
	cs_attach "$J" "$TMP/laddr_$m.err" -p "$pid" -j -i 0.2 --prom "$TMP/laddr_$m.prom" "$@" ||
		{ fail "$m/attach" "$(cat "$TMP/laddr_$m.err")"; return; }
	conn 127.0.0.1 8080 2 && conn ::1 8080 3 && conn 127.0.0.1 8081 4 && conn ::1 8082 5 ||
		fail "$m/connect" "a client failed"
	wait_for "[ \$(inns ss -Htan state established '( sport >= :8080 and sport <= :8082 )' | wc -l) -eq 0 ]" 10
	cs_stop
	assert_eq "$?" 0 "$m/exit_status"
	local p=".processes[] | select(.pid == $pid)"
	assert_eq "$(jqn "[$p | .reuse.endpoints[] | select(.side == \"listen\") | \"\(.endpoint)=\(.listen_address)=\(.accepted)\"] | sort | join(\" \")" "$J")" \
		"listen *:8081=*=4 listen 127.0.0.1:8080=127.0.0.1=2 listen [::1]:8080=::1=3 listen [::]:8082=::=5" \
		"$m/json_endpoints"
	assert_eq "$(jqn "$p | .totals.connections_accepted" "$J")" 14 "$m/accepted"
	for ep in 'listen 127.0.0.1:8080' 'listen [::1]:8080' 'listen *:8081' 'listen [::]:8082'; do
		assert_eq "$(grep -qF "endpoint=\"$ep\"" "$TMP/laddr_$m.prom" && echo found)" found \
			"$m/prom_label/$ep"
	done
	fix_eof "l$m"
	CS_WRAP=()
}

addr_case sk
addr_case pt --per-transition
