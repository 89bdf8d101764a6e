#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# connscope doctor on workloads that each trip one rule, and on ones that
# must not: the first finding is the right rule with the right severity,
# names the right process, and carries the numbers the workload knows
# (exactly where it knows them). A healthy workload gets no finding and
# the healthy verdict. Namespaces where a host-wide counter would mix in
# other tests' traffic (ListenOverflows, a narrowed port range, orphans).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

for f in poolfix tcpfix doctorfix leakfix orphanfix; do
	if [[ ! -x $FIXTURES/$f ]]; then
		fail "${f}_built" "$FIXTURES/$f missing (make .output/fixtures/$f)"
		exit 1
	fi
done
TMP=$(lib_tmpdir)


# dr_start OUT ERR ARGS...: connscope doctor in the background (a long -d,
# stopped by dr_stop once the workload is done); returns once attached.
DR_WRAP=()
dr_start() {
	local out=$1 err=$2
	shift 2
	spawn_bg "${DR_WRAP[@]}" "$CONNSCOPE" doctor -d 120 -i 0.3 -j "$@" >"$out" 2>"$err"
	DR_PID=$BG_PID
	wait_for "grep -q '^connscope: tracing' '$err' || ! kill -0 $DR_PID 2>/dev/null" 30
	grep -q '^connscope: tracing' "$err"
}

# Ctrl-C as a user would; its exit status.
dr_stop() {
	kill -INT "$DR_PID" 2>/dev/null
	wait "$DR_PID"
}

# F RULE PID: the jq array of findings of RULE about PID.
F() { echo "[.findings[] | select(.rule == \"$1\" and .pid == $2)]"; }
# EV NAME: the value of evidence NAME of the finding in scope.
EV() { echo "(.evidence[] | select(.name == \"$1\") | .value)"; }

# ---- healthy: a pool as large as the concurrency --------------------------

fix_start hsrv "$FIXTURES/poolfix" server && fix_expect hsrv "listening *" 10 ||
	fail healthy/start "server"
read -r _ HPORT HSPID <<<"$FIX_LINE"
fix_start hcli "$FIXTURES/poolfix" client -p "$HPORT" -w 8 -n 800 -P 8 &&
	fix_expect hcli "ready *" 10 || fail healthy/start "client"
HCPID=${FIX_LINE#ready }
J=$TMP/healthy.json
if dr_start "$J" "$TMP/healthy.err" -p "$HCPID,$HSPID"; then
	fix_cmd hcli go '@(done|error) *' 120
	read -r _ _ r _ c _ _ _ k <<<"$FIX_LINE"
	assert_eq "$r $c $k" "800 8 8" healthy/fixture_one_connection_per_worker
	wait_for "fix_cmd hsrv stats 'stats *' 5 && [[ \$FIX_LINE == *' open 0' ]]" 20
	dr_stop
	assert_eq "$?" 0 healthy/exit_status
	assert_eq "$(jqn '.run.command' "$J")" doctor healthy/command
	assert_eq "$(jqn '.findings | length' "$J")" 0 healthy/no_finding
	assert_eq "$(jqn '.doctor.healthy' "$J")" true healthy/verdict_healthy
	assert_eq "$(jqn ".doctor.verdict | test(\"PID $HCPID \\\\(poolfix\\\\): 8 connections opened and 0 accepted for 800 requests \\\\(100.0 per connection\\\\)\")" "$J")" \
		true healthy/verdict_states_numbers
	# Cheap by default: fds from /proc listings, no fd syscall tracepoint,
	# so no EMFILE counts (--fd-sites turns both on).
	assert_eq "$(jqn '[.doctor.fd_errors_counted, .run.fd_mode] | @tsv' "$J")" \
		"$(printf 'false\tlisting')" healthy/cheap_by_default
	assert_eq "$(grep -c '^  agent cost: ' "$J")" 0 healthy/json_has_no_text_footer
	assert_eq "$(jqn '.doctor.agent_cost.distorts' "$J")" false healthy/cost_does_not_distort
	# Its listener was sampled, and never near full.
	assert_eq "$(jqn "[.doctor.listeners[] | select(.pid == $HSPID and .port == $HPORT)] | length" "$J")" \
		1 healthy/listener_sampled
else
	fail healthy/attach "$(cat "$TMP/healthy.err")"
fi
fix_send hcli exit

# ---- churn: pool 2 for 8 workers in rounds (602 connections, known) -----

fix_start csrv "$FIXTURES/poolfix" server && fix_expect csrv "listening *" 10 ||
	fail churn/start "server"
read -r _ CPORT CSPID <<<"$FIX_LINE"
fix_start ccli "$FIXTURES/poolfix" client -p "$CPORT" -w 8 -n 800 -P 2 -b &&
	fix_expect ccli "ready *" 10 || fail churn/start "client"
CCPID=${FIX_LINE#ready }
J=$TMP/churn.json
if dr_start "$J" "$TMP/churn.err" -p "$CCPID,$CSPID" --prom "$TMP/churn.prom" \
		--report "$TMP/churn.html"; then
	fix_cmd ccli go '@(done|error) *' 120
	read -r _ _ r _ c _ _ _ k <<<"$FIX_LINE"
	assert_eq "$r $c $k" "800 602 8" churn/fixture_counts
	wait_for "fix_cmd csrv stats 'stats *' 5 && [[ \$FIX_LINE == *' open 0' ]]" 20
	dr_stop
	assert_eq "$(jqn '.findings[0] | [.rule, .severity, .pid, .endpoint] | @tsv' "$J")" \
		"$(printf 'churn\twarning\t%s\t127.0.0.1:%s' "$CCPID" "$CPORT")" churn/first_finding
	f="$(F churn "$CCPID")[0]"
	assert_eq "$(jqn "$f | [$(EV connections_opened), $(EV requests), $(EV peak_concurrent), $(EV right_sized_pool_would_open)] | @tsv" "$J")" \
		"$(printf '602\t800\t8\t8')" churn/evidence_exact
	# poolfix is no software the doctor knows: the generic fix, sized to
	# the pool it needs (97_vocabulary has each program's own words).
	assert_eq "$(jqn "$f | .fix | startswith(\"keep at least 8 idle connections to 127.0.0.1:$CPORT\")" "$J")" \
		true churn/fix_sized_to_the_pool
	assert_eq "$(jqn "$(F churn "$CSPID") | length" "$J")" 0 churn/server_not_blamed
	# The same finding in the HTML report (first, with its evidence) and
	# as a Prometheus gauge.
	H=$TMP/churn.html
	assert_eq "$(grep -c "^<div class=\"finding\" id=\"finding-1\" data-kind=\"churn\" data-pid=\"$CCPID\" data-endpoint=\"127.0.0.1:$CPORT\">\$" "$H")" \
		1 churn/html_box_first
	assert_eq "$(grep -o 'data-ev="connections_opened">[0-9]*<' "$H")" 'data-ev="connections_opened">602<' \
		churn/html_evidence
	fline=$(grep -n -m1 '<section id="findings"' "$H" | cut -d: -f1)
	sline=$(grep -n -m1 'id="summary"' "$H" | cut -d: -f1)
	assert_eq "$((${fline:-999999} < ${sline:-0}))" 1 churn/html_findings_before_numbers
	assert_eq "$(grep '^connscope_finding{' "$TMP/churn.prom")" \
		"connscope_finding{pid=\"$CCPID\",rule=\"churn\",severity=\"warning\"} 1" churn/prom_gauge
else
	fail churn/attach "$(cat "$TMP/churn.err")"
fi
fix_send ccli exit

# ---- TIME_WAIT: the side that closes first holds it ----------------------

# tw_case NAME MODE N: a tcpfix pair, the client runs MODE (churn: the client
# closes first; churn-passive: the server does) N times.
tw_case() {
	local name=$1 mode=$2 n=$3 flag=
	[[ $mode == churn-passive ]] && flag=--close-first
	fx_start "${name}s" server $flag || { fail "$name/start" server; return 1; }
	read -r _ TPORT _ <<<"$FIX_LINE"
	TSPID=$(eval echo "\$FX_PID_${name}s")
	fx_start "${name}c" client -p "$TPORT" || { fail "$name/start" client; return 1; }
	TCPID=$(eval echo "\$FX_PID_${name}c")
	dr_start "$TMP/$name.json" "$TMP/$name.err" -p "$TCPID,$TSPID" ||
		{ fail "$name/attach" "$(cat "$TMP/$name.err")"; return 1; }
	assert_eq "$(fx_cmd "${name}c" "$mode $n" 120)" "churned $n" "$name/fixture"
	# The other side's FIN comes after the reply: wait until every
	# connection is past its close (TIME_WAIT or gone) before stopping.
	wait_for "[ \$(${FX_WRAP[*]} ss -Htan state fin-wait-1 state fin-wait-2 state closing state last-ack state close-wait '( sport = :$TPORT or dport = :$TPORT )' | wc -l) -eq 0 ]" 20 ||
		fail "$name/closes_done" "connections on :$TPORT still closing"
	dr_stop
	fx_stop "${name}c"
	fx_stop "${name}s"
}

# ---- port exhaustion: 1200 TIME_WAIT in a 2000-port range of our netns -----

NS=connscope-doctor-$$
if new_netns "$NS"; then
	# tcp_tw_reuse 0 in our netns: a port in TIME_WAIT stays taken (the
	# default 2 lets loopback connects take over TIME_WAIT older than 1 s,
	# so on a slow machine the population would depend on the pace).
	ip netns exec "$NS" sysctl -qw net.ipv4.tcp_tw_reuse=0
	FX_WRAP=(ip netns exec "$NS")
	DR_WRAP=(ip netns exec "$NS")
	if tw_case twc churn 1500; then
		J=$TMP/twc.json
		# The rule is time_wait, or port_exhaustion when the rate would run
		# the ports out within the threshold: either way about the client.
		f="[.findings[] | select((.rule == \"time_wait\" or .rule == \"port_exhaustion\") and .pid == $TCPID)]"
		assert_eq "$(jqn "$f | length" "$J")" 1 tw_client/finding_names_client
		assert_eq "$(jqn "$f[0] | [$(EV time_wait_entered), $(EV closed_first_by_this_side), $(EV closed_first_by_peer)] | @tsv" "$J")" \
			"$(printf '1500\t1500\t0')" tw_client/evidence_exact
		assert_eq "$(jqn "$f[0] | $(EV time_wait_peak) >= 1000" "$J")" true tw_client/peak_over_threshold
		assert_eq "$(jqn "$f[0].verdict | test(\"PID $TCPID \\\\(tcpfix\\\\) holds [0-9]+ TIME_WAIT sockets at the peak because it closes first\")" "$J")" \
			true tw_client/verdict
		assert_eq "$(jqn "$f[0].fix | test(\"ip_local_port_range\") and test(\"tcp_tw_reuse\") and test(\"timestamps\")" "$J")" \
			true tw_client/fix_settings
		assert_eq "$(jqn "[.findings[] | select(.pid == $TSPID)] | length" "$J")" 0 tw_client/server_not_blamed
	fi

	if tw_case tws churn-passive 1500; then
		J=$TMP/tws.json
		f=$(F time_wait "$TSPID")
		assert_eq "$(jqn "$f | length" "$J")" 1 tw_server/finding_names_server
		assert_eq "$(jqn "$f[0] | [.severity, .endpoint, $(EV time_wait_entered), $(EV closed_first_by_this_side)] | @tsv" "$J")" \
			"$(printf 'warning\tlisten 127.0.0.1:%s\t1500\t1500' "$TPORT")" tw_server/evidence_exact
		assert_eq "$(jqn "[.findings[] | select((.rule == \"time_wait\" or .rule == \"port_exhaustion\") and .pid == $TCPID)] | length" "$J")" \
			0 tw_server/client_not_blamed
	fi

	ip netns exec "$NS" sysctl -qw net.ipv4.ip_local_port_range="40000 41999"
	if tw_case ports churn 1200; then
		J=$TMP/ports.json
		assert_eq "$(jqn '.findings[0] | [.rule, .severity, .pid] | @tsv' "$J")" \
			"$(printf 'port_exhaustion\tcritical\t%s' "$TCPID")" ports/first_finding
		assert_eq "$(jqn ".findings[0] | [$(EV ephemeral_ports), $(EV time_wait_entered), $(EV ports_in_use_peak), $(EV time_wait_peak)] | @tsv" "$J")" \
			"$(printf '2000\t1200\t1200\t1200')" ports/evidence_exact
		assert_eq "$(jqn ".findings[0] | $(EV port_share_peak)" "$J")" 60 ports/share_60pct
	fi

	# ---- listen backlog: a listener of backlog 4 that never accepts ----
	fix_start bl "${FX_WRAP[@]}" "$FIXTURES/doctorfix" && fix_expect bl "ready *" 10 ||
		fail backlog/start doctorfix
	BPID=${FIX_LINE#ready }
	J=$TMP/backlog.json
	if dr_start "$J" "$TMP/backlog.err" -p "$BPID"; then
		fix_cmd bl "backlog 20 4" '@(backlog|error) *' 30
		read -r _ BPORT QUEUED <<<"$FIX_LINE"
		assert_eq "$QUEUED" 5 backlog/fixture_queue_full
		# SYNs beyond the queue are dropped and counted in this netns.
		wait_for "[ \$(netstat_field ListenOverflows) -gt 0 ]" 10
		dr_stop
		assert_eq "$(jqn '.findings[0] | [.rule, .severity, .pid, .endpoint] | @tsv' "$J")" \
			"$(printf 'listen_backlog\tcritical\t%s\tlisten 127.0.0.1:%s' "$BPID" "$BPORT")" backlog/first_finding
		assert_eq "$(jqn ".findings[0] | [$(EV backlog), $(EV accept_queue_peak)] | @tsv" "$J")" \
			"$(printf '4\t5')" backlog/evidence_queue_exact
		assert_eq "$(jqn ".findings[0] | $(EV listen_overflows) > 0" "$J")" true backlog/overflows_counted
		assert_eq "$(jqn ".findings[0].evidence | map(select(.name == \"listen_overflows\")) | .[0].source" "$J")" \
			/proc/net/netstat backlog/overflow_source
	else
		fail backlog/attach "$(cat "$TMP/backlog.err")"
	fi
	fix_send bl exit

	# ---- orphans: 70 closed sockets the peer never reads (FIN_WAIT1) ----
	on_exit "ip netns exec $NS ss -K state fin-wait-1 state fin-wait-2 >/dev/null 2>&1"
	fix_start osrv ip netns exec "$NS" "$FIXTURES/orphanfix" server -p 8080 &&
		fix_expect osrv "listening *" 10 || fail orphans/start server
	fix_start ocli ip netns exec "$NS" "$FIXTURES/orphanfix" client -p 8080 -n 70 -w &&
		fix_expect ocli "ready *" 10 || fail orphans/start client
	OPID=${FIX_LINE#ready }
	J=$TMP/orphans.json
	if dr_start "$J" "$TMP/orphans.err" -p "$OPID"; then
		fix_send ocli go
		fix_expect ocli "closed *" 60
		assert_eq "$FIX_LINE" "closed 70" orphans/fixture
		wait_for "[ \$(ip netns exec $NS ss -Htan state fin-wait-1 | wc -l) -eq 70 ]" 20
		dr_stop
		f="$(F orphans "$OPID")[0]"
		assert_eq "$(jqn "$f | [.severity, $(EV orphans_peak), $(EV orphans_now)] | @tsv" "$J")" \
			"$(printf 'warning\t70\t70')" orphans/evidence_exact
	else
		fail orphans/attach "$(cat "$TMP/orphans.err")"
	fi
	fix_send ocli exit
	FX_WRAP=()
	DR_WRAP=()
else
	fail netns "ip netns add $NS"
fi
# The healthy pool passed through orphan states on every active close:
# never a finding (checked above: no finding at all).

# ---- connect failures, resets, fd limit, agent cost: doctorfix ------------

# df_case NAME CMD PATTERN [DOCTOR ARGS...]: one doctorfix command traced;
# the reply in FIX_LINE, the report in $TMP/NAME.json.
df_case() {
	local name=$1 cmd=$2 pat=$3
	shift 3
	fix_start "$name" "$FIXTURES/doctorfix" && fix_expect "$name" "ready *" 10 ||
		{ fail "$name/start" doctorfix; return 1; }
	DPID=${FIX_LINE#ready }
	dr_start "$TMP/$name.json" "$TMP/$name.err" -p "$DPID" "$@" ||
		{ fail "$name/attach" "$(cat "$TMP/$name.err")"; return 1; }
	fix_cmd "$name" "$cmd" "$pat" 60 || { fail "$name/fixture" "$FIX_LINE"; dr_stop; return 1; }
	DREPLY=$FIX_LINE
	dr_stop
	fix_send "$name" exit
}

if df_case refuse "refuse 20" '@(refused|error) *'; then
	read -r _ n port <<<"$DREPLY"
	J=$TMP/refuse.json
	assert_eq "$n" 20 refuse/fixture
	assert_eq "$(jqn '.findings[0] | [.rule, .severity, .pid, .endpoint] | @tsv' "$J")" \
		"$(printf 'connect_failures\tcritical\t%s\t127.0.0.1:%s' "$DPID" "$port")" refuse/first_finding
	assert_eq "$(jqn ".findings[0] | [$(EV connects), $(EV refused), $(EV timed_out)] | @tsv" "$J")" \
		"$(printf '20\t20\t0')" refuse/evidence_exact
	assert_eq "$(jqn "$(F churn "$DPID") | length" "$J")" 0 refuse/not_churn
fi

if df_case reset "reset 20" '@(reset|error) *'; then
	read -r _ n port <<<"$DREPLY"
	J=$TMP/reset.json
	assert_eq "$n" 20 reset/fixture_read_20_resets
	f="[.findings[] | select(.rule == \"resets\" and .endpoint == \"listen 127.0.0.1:$port\")][0]"
	assert_eq "$(jqn "$f | [.severity, .pid, $(EV resets_sent), $(EV resets_received)] | @tsv" "$J")" \
		"$(printf 'critical\t%s\t20\t0' "$DPID")" reset/sent_by_server_side
	f="[.findings[] | select(.rule == \"resets\" and .endpoint == \"127.0.0.1:$port\")][0]"
	assert_eq "$(jqn "$f | [$(EV resets_sent), $(EV resets_received)] | @tsv" "$J")" \
		"$(printf '0\t20')" reset/received_by_client_side
fi

if df_case emfile "emfile 10" '@(emfile|error) *' --fd-sites; then
	read -r _ e fds <<<"$DREPLY"
	J=$TMP/emfile.json
	assert_eq "$(jqn '.findings[0] | [.rule, .severity, .pid] | @tsv' "$J")" \
		"$(printf 'fd_limit\tcritical\t%s' "$DPID")" emfile/first_finding
	assert_eq "$(jqn ".findings[0] | [$(EV emfile), $(EV enfile), $(EV fd_limit)] | @tsv" "$J")" \
		"$(printf '%s\t0\t64' "$e")" emfile/evidence_exact
	assert_eq "$e" 11 emfile/fixture_failures
	assert_eq "$(jqn ".findings[0].fix | test(\"ulimit -n\") and test(\"LimitNOFILE=\")" "$J")" true emfile/fix_settings
fi
# attach counts no EMFILE (doctor mode only): the same workload, no error count.
fix_start emfa "$FIXTURES/doctorfix" && fix_expect emfa "ready *" 10
EAPID=${FIX_LINE#ready }
cs_attach "$TMP/emfa.json" "$TMP/emfa.err" -p "$EAPID" -j -i 0.3 || fail emfile_attach/attach "$(cat "$TMP/emfa.err")"
fix_cmd emfa "emfile 10" '@(emfile|error) *' 60
cs_stop
assert_eq "$(jqn '.doctor.fd_errors_counted' "$TMP/emfa.json")" false emfile_attach/not_counted
assert_eq "$(jqn ".findings[0] | [.rule, ([.evidence[].name] | index(\"emfile\"))] | @tsv" "$TMP/emfa.json")" \
	"$(printf 'fd_limit\t')" emfile_attach/limit_seen_without_error_counts
fix_send emfa exit

# ---- fd leak: leakfix leaks 10 sockets per step from one function ----------

fix_start lk "$FIXTURES/leakfix" && fix_expect lk "ready *" 10 || fail leak/start leakfix
read -r _ LPID LLINE <<<"$FIX_LINE"
J=$TMP/leak.json
if dr_start "$J" "$TMP/leak.err" -p "$LPID" --fd-sites --leak-age 0.5; then
	# A steady leak: 10 sockets, 12 times, 0.25 s apart (the pace of the
	# workload, not a wait for anything).
	for i in $(seq 12); do
		fix_cmd lk "leak 10" "leaked *" 10 || fail leak/fixture "$FIX_LINE"
		sleep 0.25
	done
	# Past the leak age of the last ones, so every leaked fd is old.
	sleep 0.6
	dr_stop
	f="$(F fd_leak "$LPID")[0]"
	assert_eq "$(jqn "$f | .rule" "$J")" fd_leak leak/finding
	assert_eq "$(jqn "$f | $(EV old_fds_at_top_site)" "$J")" 120 leak/old_fds_exact
	assert_eq "$(jqn "$f | $(EV fds_now) - $(EV fds_at_start)" "$J")" 120 leak/growth_exact
	assert_eq "$(jqn "$f.verdict | test(\"leak_sockets \\\\(([^ ]*/)?leakfix.c:$LLINE\\\\)\")" "$J")" true leak/site_named
else
	fail leak/attach "$(cat "$TMP/leak.err")"
fi
fix_send lk exit

# The same leak under the default (no fd syscall tracepoint): the listings
# show the growth, the finding has no site and asks for --fd-sites.
fix_start lk2 "$FIXTURES/leakfix" && fix_expect lk2 "ready *" 10 || fail leak_listing/start leakfix
read -r _ LPID _ <<<"$FIX_LINE"
J=$TMP/leak_listing.json
if dr_start "$J" "$TMP/leak_listing.err" -p "$LPID"; then
	for i in $(seq 12); do
		fix_cmd lk2 "leak 10" "leaked *" 10 || fail leak_listing/fixture "$FIX_LINE"
		sleep 0.25
	done
	dr_stop
	f="$(F fd_leak "$LPID")[0]"
	assert_eq "$(jqn "$f | [.rule, $(EV fds_now) - $(EV fds_at_start)] | @tsv" "$J")" \
		"$(printf 'fd_leak\t120')" leak_listing/finding_growth_exact
	assert_eq "$(jqn "$f | (.fix | test(\"doctor -p $LPID --fd-sites\")) and ([.evidence[].name] | index(\"old_fds_at_top_site\") == null)" "$J")" \
		true leak_listing/asks_for_sites
	assert_eq "$(jqn '.run.fd_mode' "$J")" listing leak_listing/no_syscall_tracepoints
else
	fail leak_listing/attach "$(cat "$TMP/leak_listing.err")"
fi
fix_send lk2 exit
# Opening and closing many fds is no leak.
fix_start lc "$FIXTURES/leakfix" && fix_expect lc "ready *" 10
LCPID=${FIX_LINE#ready }
LCPID=${LCPID%% *}
J=$TMP/leakchurn.json
if dr_start "$J" "$TMP/leakchurn.err" -p "$LCPID" --fd-sites --leak-age 0.5; then
	for i in $(seq 6); do fix_cmd lc "churn 50" "churned *" 10; sleep 0.25; done
	dr_stop
	assert_eq "$(jqn "$(F fd_leak "$LCPID") | length" "$J")" 0 leak/churn_is_no_leak
fi
fix_send lc exit

# ---- agent cost: a workload made of fd syscalls, traced with fds -------
# (--cost-every 1: the BPF run time measured in every interval, as the
# burn may start late in the first one, the only one measured by default)

if df_case cost "burn 1.5" '@(burned|error) *' --cost-every 1 --fd-sites; then
	J=$TMP/cost.json
	assert_eq "$(jqn '.findings[0] | [.rule, .severity, .pid] | @tsv' "$J")" \
		"$(printf 'agent_cost\twarning\t0')" cost/first_finding
	assert_eq "$(jqn ".findings[0] | $(EV targets_cpu_s) >= 1.4 and $(EV bpf_run_time_s) > 0" "$J")" \
		true cost/cpu_measured
fi
# A workload that spends its CPU without system calls: connscope's programs
# hardly run for it, so no finding.
if df_case spin "spin 3" '@(spun|error*)'; then
	J=$TMP/spin.json
	assert_eq "$(jqn '[.findings[] | select(.rule == "agent_cost")] | length' "$J")" 0 spin/no_cost_finding
	assert_eq "$(jqn '.doctor.agent_cost.targets_cpu_s >= 2.9' "$J")" true spin/cpu_measured
fi

# ---- text report: findings first, then sources ----------------------------

fix_start tx "$FIXTURES/doctorfix" && fix_expect tx "ready *" 10
TXPID=${FIX_LINE#ready }
spawn_bg "$CONNSCOPE" doctor -p "$TXPID" -d 120 -i 0.3 >"$TMP/text.out" 2>"$TMP/text.err"
DR_PID=$BG_PID
wait_for "grep -q '^connscope: tracing' '$TMP/text.err'" 30
fix_cmd tx "refuse 10" '@(refused|error) *' 30
dr_stop
assert_eq "$(sed -n 2,4p "$TMP/text.out" | tr '\n' '|')" \
	"|Findings (1, worst first)||" text/findings_heading
assert_eq "$(grep -c '^  1\. \[critical\] connect_failures PID '"$TXPID"' (doctorfix) 127\.0\.0\.1:' "$TMP/text.out")" 1 text/first_line
assert_eq "$(awk 'length > 80' "$TMP/text.out" | wc -l)" 0 text/fits_80_columns
assert_eq "$(grep -c '^       refused  *10 connections (BPF events)$' "$TMP/text.out")" 1 text/evidence_with_source
assert_eq "$(grep -c '^     fix: refused means nothing listens' "$TMP/text.out")" 1 text/fix
# The doctor's own cost: a footer after the findings, not a finding.
assert_eq "$(grep -c '^  agent cost: ' "$TMP/text.out")" 1 text/cost_footer
fix_send tx exit
