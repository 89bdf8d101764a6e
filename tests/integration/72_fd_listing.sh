#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# attach counts fds from /proc listings by default: none of the fd syscall
# tracepoints is attached (they put every task on the machine on the slow
# syscall path); they are with --fd-sites. The counts are exact against a
# fixture that opens a known number of fds, and every output says which
# fd mode ran and that leak sites need --fd-sites.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
K=7

# syscall_links PID: the agent's BPF links on syscall tracepoints
# (sys_enter_* / sys_exit_*, classic or raw), read from its own fdinfo,
# accept's left out: the TCP owner logic's, not the fd tracking's.
syscall_links() {
	local f n=0
	for f in /proc/"$1"/fdinfo/*; do
		grep -Eq '^tp_name:[[:space:]]+sys_(enter|exit)(_|$)' "$f" 2>/dev/null || continue
		grep -Eq '^tp_name:[[:space:]]+sys_exit_accept4?$' "$f" && continue
		n=$((n + 1))
	done
	echo "$n"
}
# bpf_links PID: all of the agent's BPF links (to know the check saw some).
bpf_links() {
	grep -l '^link_type:' /proc/"$1"/fdinfo/* 2>/dev/null | wc -l
}

fix_start lf "$FIXTURES/leakfix_nofp"
fix_expect lf 'ready *' 10 || { fail setup/leakfix "no ready line"; exit 1; }
pid=$lf_PID

# ---- default: /proc listings only ----
cs_attach "$TMP/d.json" "$TMP/d.err" -p "$pid" -j -i 0.2 --prom "$TMP/d.prom" --report "$TMP/d.html" ||
	{ fail default/attach "$(cat "$TMP/d.err")"; exit 1; }
assert_eq "$(($(bpf_links "$CS_PID") > 0))" 1 default/agent_has_links
assert_eq "$(syscall_links "$CS_PID")" 0 default/no_syscall_tracepoint
assert_eq "$(fx_cmd lf "leak $K")" "leaked $K" default/leaked
# fds opened and closed between listings: in no listing's difference.
assert_eq "$(fx_cmd lf "churn 20")" "churned 20" default/churned
want=$(fx_cmd lf count)
want=${want#fds }
cs_stop
assert_eq "$?" 0 default/exit_status
P='.processes[0].fds'
assert_eq "$(jqn .run.fd_mode "$TMP/d.json")" listing default/run_fd_mode
assert_eq "$(jqn "$P.mode" "$TMP/d.json")" listing default/proc_fd_mode
assert_eq "$(jqn "$P.fds.total" "$TMP/d.json")" "$want" default/total_exact
assert_eq "$(jqn "$P.fds.total" "$TMP/d.json")" "$(ls /proc/"$pid"/fd | wc -l)" default/total_eq_proc
assert_eq "$(jqn "$P.fds.by_type.tcp" "$TMP/d.json")" "$K" default/tcp_exact
assert_eq "$(jqn "$P.listing.appeared - $P.listing.disappeared" "$TMP/d.json")" "$K" \
	default/net_appeared
assert_eq "$(jqn "$P.listing.held_at_start + $K" "$TMP/d.json")" "$want" default/held_plus_leaked
assert_eq "$(jqn "$P.listing.listings >= 2" "$TMP/d.json")" true default/listings
assert_eq "$(jqn "$P.leak_sites == null and $P.leak_sites_need == \"--fd-sites\"" "$TMP/d.json")" \
	true default/no_sites_said
assert_eq "$(jqn "$P.heatmaps.fd_type.rows | index(\"tcp\") != null" "$TMP/d.json")" true \
	default/type_heatmap
assert_eq "$(jqn '.sources.fds | test("leak sites need attach --fd-sites")' "$TMP/d.json")" true \
	default/json_source
assert_eq "$(grep -c '^connscope_fd_source{mode="listing"} 1$' "$TMP/d.prom")" 1 default/prom_mode
assert_eq "$(grep -c "id=\"fdsites-$pid-off\">Leak sites need <code>attach --fd-sites</code>" "$TMP/d.html")" 1 \
	default/html_sites_need
assert_eq "$(grep -c 'data-k="fd_mode">listing: ' "$TMP/d.html")" 1 default/html_run_mode
assert_eq "$(grep -o '<span data-k="fds_appeared">[0-9]*' "$TMP/d.html" | grep -o '[0-9]*$')" \
	"$(jqn "$P.listing.appeared" "$TMP/d.json")" default/html_appeared_eq_json

# The text report says it too.
"$CONNSCOPE" attach -p "$pid" -d 0.5 -i 0.2 >"$TMP/t.txt" 2>"$TMP/t.err"
assert_eq "$?" 0 text/exit_status
assert_eq "$(grep -c '^fds (listing): .*listings' "$TMP/t.txt")" 1 text/mode_line
assert_eq "$(grep -c 'leak sites need attach --fd-sites' "$TMP/t.txt")" 1 text/sites_need
assert_eq "$(grep -c 'sites need$' "$TMP/t.txt")" 1 text/proc_part_says_so

# ---- --fd-sites: the syscall programs, the sites ----
cs_attach "$TMP/s.json" "$TMP/s.err" -p "$pid" -j -i 0.2 --fd-sites ||
	{ fail sites/attach "$(cat "$TMP/s.err")"; exit 1; }
assert_eq "$(($(syscall_links "$CS_PID") >= 20))" 1 sites/syscall_tracepoints
assert_eq "$(fx_cmd lf "leak 2")" "leaked 2" sites/leaked
cs_stop
assert_eq "$?" 0 sites/exit_status
assert_eq "$(jqn .run.fd_mode "$TMP/s.json")" sites sites/run_fd_mode
assert_eq "$(jqn "$P.mode" "$TMP/s.json")" sites sites/proc_fd_mode
assert_eq "$(jqn "$P.events.created_by.socket" "$TMP/s.json")" 2 sites/socket_events
assert_eq "$(jqn "$P.fds.total" "$TMP/s.json")" "$(ls /proc/"$pid"/fd | wc -l)" sites/total_eq_proc
fix_send lf exit
