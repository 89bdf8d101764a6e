#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Orphans per process and state: FIN_WAIT1 orphans (closed with unsent data
# towards a peer that does not read) and FIN_WAIT2 orphans (the peer never
# closes; tcp_fin_timeout above 60 s in our own netns keeps them full
# sockets). Counts must equal sock_diag's and sockstat's.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
NS=connscope-orph-$$
new_netns "$NS" || { fail netns "ip netns add"; exit 0; }
# Orphans pin the namespace until they die: kill them before it is deleted.
on_exit "ip netns exec $NS ss -K state fin-wait-1 state fin-wait-2 >/dev/null 2>&1"
ip netns exec "$NS" sysctl -qw net.ipv4.tcp_fin_timeout=120
inns() { ip netns exec "$NS" "$@"; }

fix_start srv ip netns exec "$NS" "$FIXTURES/orphanfix" server -p 8080
fix_expect srv "listening *" 10 || fail server_start "no listening line"
fix_start w1 ip netns exec "$NS" "$FIXTURES/orphanfix" client -p 8080 -n 3 -w
fix_expect w1 "ready *" 10 || fail w1_start "no ready"
fix_start w2 ip netns exec "$NS" "$FIXTURES/orphanfix" client -p 8080 -n 4
fix_expect w2 "ready *" 10 || fail w2_start "no ready"

CS_WRAP=(ip netns exec "$NS")
cs_attach "$TMP/o.json" "$TMP/o.err" -p "$w1_PID,$w2_PID" -j -i 0.3 || fail attach "$(cat "$TMP/o.err")"
fix_send w1 go; fix_expect w1 "closed *" 30; assert_eq "$FIX_LINE" "closed 3" w1_closed
fix_send w2 go; fix_expect w2 "closed *" 30; assert_eq "$FIX_LINE" "closed 4" w2_closed
wait_for "[ \$(inns ss -Htan state fin-wait-1 | wc -l) -eq 3 ] && [ \$(inns ss -Htan state fin-wait-2 | wc -l) -eq 4 ]" 20 ||
	fail orphans_exist "$(inns ss -tan)"
cs_stop
A=".processes[] | select(.pid == $w1_PID)" B=".processes[] | select(.pid == $w2_PID)"
assert_eq "$(jq -r "$A | [.orphans.now, .orphans.fin_wait1, .orphans.fin_wait2] | @tsv" "$TMP/o.json")" \
	"$(printf '3\t3\t0')" fin_wait1_orphans
assert_eq "$(jq -r "$B | [.orphans.now, .orphans.fin_wait1, .orphans.fin_wait2] | @tsv" "$TMP/o.json")" \
	"$(printf '4\t0\t4')" fin_wait2_orphans
assert_eq "$(jq -r "[($A), ($B) | .tcp.orphan] | add" "$TMP/o.json")" 7 tcp_orphan_total
# sock_diag: orphans are the sockets without an inode in those states.
assert_eq "$(inns ss -Htane state fin-wait-1 state fin-wait-2 | grep -c ' ino:0 ')" 7 sock_diag_agrees
# sockstat's orphan count is host-wide: equal at a quiet moment.
host_orphans() { awk '/^TCP:/ {for (i = 2; i < NF; i++) if ($i == "orphan") print $(i + 1)}' /proc/net/sockstat; }
wait_for '[ "$(host_orphans)" = 7 ]' 5
assert_eq "$(host_orphans)" 7 sockstat_orphan_agrees
assert_eq "$(jq -r "$A | .heatmaps.orphan.cells[0] | max" "$TMP/o.json")" 3 heatmap_fin_wait1_row
assert_eq "$(jq -r "$B | .heatmaps.orphan.cells[1] | max" "$TMP/o.json")" 4 heatmap_fin_wait2_row
assert_eq "$(jq -r '.limits.orphans_host_peak >= 7' "$TMP/o.json")" true limits_orphans_seen
