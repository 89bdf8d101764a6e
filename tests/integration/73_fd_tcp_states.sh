#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The fd part's TCP states come from sock_diag, not /proc/PID/net/tcp:
# that file prints every socket of the namespace as text, TIME_WAIT
# included, and read per process per interval at a load test's churn it
# kept the agent from its ring buffers (events lost). A target holding a
# known number of TCP fds per state (LISTEN, ESTABLISHED, CLOSE_WAIT,
# CLOSE) in a namespace that also holds thousands of TIME_WAIT sockets:
# attach and fdleak report exactly those counts, none unknown, and strace
# sees neither of them open net/tcp or net/tcp6.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root
command -v strace >/dev/null || { fail setup/strace "strace not installed (make test-deps)"; exit 0; }

TMP=$(lib_tmpdir)

NS=connscope-fdst-$$
new_netns "$NS" || { fail netns "ip netns add failed"; exit 0; }
inns() { ip netns exec "$NS" "$@"; }

# ---- thousands of TIME_WAIT in the target's namespace ----
TW=3000
# Loopback reuses a TIME_WAIT's port after a second (tcp_tw_reuse 2): not
# in this namespace, so every connection leaves one.
inns sysctl -qw net.ipv4.tcp_tw_reuse=0
# Under load a resent FIN can meet a client's TIME_WAIT and its reset end
# it early (RFC 1337; CI once kept 2894 of 3000): kept here, as fx_twns does.
inns sysctl -qw net.ipv4.tcp_rfc1337=1
FX_WRAP=(ip netns exec "$NS")
fx_start twsrv server -p 9091 || { fail setup/tw_server "no server"; exit 0; }
fx_start twcli client -p 9091 || { fail setup/tw_client "no client"; exit 0; }
assert_eq "$(fx_cmd twcli "churn $TW" 120)" "churned $TW" setup/churned
# The last closes can still be on their way when churn returns.
wait_for "[ \$(inns ss -Htan state time-wait | wc -l) -ge $TW ]" 20
tw=$(inns ss -Htan state time-wait | wc -l)
assert_eq "$((tw >= TW))" 1 "setup/time_wait_in_ns ($tw)"

# ---- the target: 1 listener, 2 pairs, 3 CLOSE_WAIT, 2 never connected ----
fix_start st ip netns exec "$NS" "$FIXTURES/fdfix" -s 5 -w 3 -c 2
fix_expect st 'ready *' 20 || { fail setup/fdfix "no ready line"; exit 0; }
pid=$st_PID
FX_WRAP=()
# The kernel's own word on the fixture's sockets, for the record.
assert_eq "$(inns ss -Htanp state close-wait | grep -c "pid=$pid,")" 3 setup/close_wait_in_ss

# state_counts JSON PROC_SELECTOR: "listen established close_wait close unknown tcp"
state_counts() {
	jqn "$2 | .fds.tcp as \$t | [\$t.listen, \$t.established, \$t.close_wait, \$t.close,
	     \$t.unknown, .fds.by_type.tcp] | map(tostring) | join(\" \")" "$1"
}
WANT="1 4 3 2 0 10"
# net/tcp or net/tcp6 opened by the traced agent (strace -o file).
net_tcp_opens() {
	grep -cE '"(/proc/[0-9a-z]+/)?net/tcp6?"' "$1"
}

# ---- attach: states from its reconcile's dump ----
cs_attach "$TMP/a.json" "$TMP/a.err" -p "$pid" -i 0.2 -j --report "$TMP/a.html" ||
	{ fail attach/start "$(cat "$TMP/a.err")"; exit 0; }
spawn_bg strace -f -o "$TMP/a.strace" -e trace=openat,open -p "$CS_PID" 2>"$TMP/a.strace.err"
st_pid=$BG_PID
wait_for "grep -q 'attached' '$TMP/a.strace.err'" 10 ||
	fail attach/strace "$(cat "$TMP/a.strace.err")"
# An interval's fd listing under strace (its open of /proc/PID/fd), then
# the final one at the stop.
wait_for "[ \$(grep -c '\"fd\", ' '$TMP/a.strace' 2>/dev/null) -ge 1 ]" 20 ||
	fail attach/listing_seen "no fd listing under strace"
cs_stop
assert_eq "$?" 0 attach/exit_status
wait "$st_pid" 2>/dev/null
P=".processes[] | select(.pid == $pid)"
assert_eq "$(state_counts "$TMP/a.json" "$P.fds")" "$WANT" attach/tcp_states_exact
assert_eq "$(net_tcp_opens "$TMP/a.strace")" 0 attach/no_net_tcp_read
assert_eq "$(($(grep -c '"fd", ' "$TMP/a.strace") >= 2))" 1 attach/strace_saw_listings
for s in "listen 1" "established 4" "close_wait 3" "close 2"; do
	assert_eq "$(grep -c "<span class=\"chip\">${s% *} <b>${s#* }</b></span>" "$TMP/a.html")" 1 \
		"attach/html_${s% *}"
done
assert_eq "$(grep -c 'state unknown' "$TMP/a.html")" 0 attach/html_none_unknown

# The text report's line.
"$CONNSCOPE" attach -p "$pid" -d 0.6 -i 0.2 >"$TMP/t.txt" 2>"$TMP/t.err"
assert_eq "$?" 0 text/exit_status
assert_eq "$(grep -cE '^ +tcp states +established 4 close 2 close_wait 3 listen 1$' "$TMP/t.txt")" 1 \
	text/tcp_states_line

# ---- fdleak: no snapshot, a dump of its own in the target's namespace ----
strace -f -o "$TMP/f.strace" -e trace=openat,open \
	"$CONNSCOPE" fdleak -p "$pid" -d 0.6 -i 0.2 -j >"$TMP/f.json" 2>"$TMP/f.err"
assert_eq "$?" 0 fdleak/exit_status
assert_eq "$(state_counts "$TMP/f.json" ".processes[] | select(.pid == $pid)")" "$WANT" \
	fdleak/tcp_states_exact
assert_eq "$(net_tcp_opens "$TMP/f.strace")" 0 fdleak/no_net_tcp_read
assert_eq "$(($(grep -c '"fd", ' "$TMP/f.strace") >= 2))" 1 fdleak/strace_saw_listings

fix_eof st
fx_stop twcli
fx_stop twsrv
