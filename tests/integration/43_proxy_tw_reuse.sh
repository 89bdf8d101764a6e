#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# TIME_WAIT books of real servers under port reuse (#22 item 3 and its
# Tests): Debian's HAProxy (`option http-server-close`) in front of
# Debian's nginx (`keepalive_timeout 0`: nginx closes every connection
# first, so it holds the TIME_WAIT), under `ab -k`, in a network namespace
# of the test's own whose ip_local_port_range holds 1,000 ports: HAProxy's
# 3,000 backend connects come from those ports again and again, and each
# new SYN on a 4-tuple that nginx still holds in TIME_WAIT takes that
# TIME_WAIT over (tcp_timewait_state_process -> TCP_TW_SYN). Before #22's
# fix ~6,900 of 17,431 such ends were counted nowhere. Truth: nginx's
# access log (one connection a request), the namespace's TcpExtTW (the
# TIME_WAIT sockets made) and sock_diag (the live ones). Each process's
# books must balance: entered = expired + ended early + end unseen + live.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=3000
NPORT=8080	# nginx, in the test's own namespace
HPORT=8081	# HAProxy

if ! command -v nginx >/dev/null || ! command -v haproxy >/dev/null || ! command -v ab >/dev/null; then
	fail installed "needs nginx, haproxy and ab (Debian: nginx, haproxy, apache2-utils; make test-deps)"
	exit 0
fi

proxy_case() {
	local m=$1 J NGX kept made ab_tw procs
	shift
	fx_netns "ptw$m"
	inns sysctl -qw net.ipv4.ip_local_port_range="40000 40999" || { fail "$m/sysctl" range; return; }
	NGX=$TMP/nginx-$m
	NGX_WRAP=(ip netns exec "$NS")
	nginx_start "$NGX" "$NPORT" close log ||
		{ fail "$m/nginx_start" "$(tail -3 "$NGX/error.log" 2>/dev/null)"; return; }
	local master=$NGX_MASTER worker=$NGX_WORKER
	cat >"$NGX/haproxy.cfg" <<EOF
global
    maxconn 256
defaults
    mode http
    option http-server-close
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend fe
    bind 127.0.0.1:$HPORT
    default_backend be
backend be
    server s1 127.0.0.1:$NPORT
EOF
	spawn_bg ip netns exec "$NS" haproxy -db -f "$NGX/haproxy.cfg"
	local hap=$BG_PID
	wait_for "inns ss -Htln sport = :$HPORT | grep -q ." 10 || { fail "$m/haproxy_start" haproxy; return; }
	J=$TMP/ptw_$m.json
	cs_attach "$J" "$TMP/ptw_$m.err" -p "$master,$worker,$hap" -j -i 0.5 "$@" ||
		{ fail "$m/attach" "$(cat "$TMP/ptw_$m.err")"; return; }
	inns ab -q -k -c 4 -n "$N" "http://127.0.0.1:$HPORT/" >"$TMP/ab_$m.out" 2>&1
	assert_eq "$(awk '/^Complete requests:/ {c = $3} /^Failed requests:/ {f = $3} END {print c, f}' "$TMP/ab_$m.out")" \
		"$N 0" "$m/ab_complete"
	closing() { inns ss -Htan state fin-wait-1 state fin-wait-2 state closing state last-ack state close-wait | wc -l; }
	wait_for '[ "$(closing)" -eq 0 ]' 30 || fail "$m/quiet" "$(closing) sockets still closing"
	cs_stop
	assert_eq "$?" 0 "$m/exit_status"
	# The kernel's account, read at once: well inside the 60 s a
	# TIME_WAIT lives, so none has expired yet.
	made=$(netstat_field TW)
	kept=$(inns ss -Htan state time-wait "( sport = :$NPORT or dport = :$NPORT )" | wc -l)
	ab_tw=$(inns ss -Htan state time-wait "( dport = :$HPORT )" | wc -l)
	local conns
	conns=$(awk '{print $1}' "$NGX/access.log" | sort -u | wc -l)
	echo "# $m: nginx saw $conns connections; kernel made $made TIME_WAIT, $kept live on :$NPORT, ab's $ab_tw"
	assert_eq "$conns" "$N" "$m/nginx_connection_a_request"
	procs=".processes[] | select(.pid == $master or .pid == $worker or .pid == $hap)"
	assert_eq "$(jqn "[.processes[] | select(.pid == $master or .pid == $worker) | .totals.connections_accepted] | add" "$J")" \
		"$conns" "$m/nginx_accepted"
	assert_eq "$(jqn "[$procs | .totals.connections_opened] | add" "$J")" "$conns" "$m/haproxy_opened"
	# Ports were reused: the kernel took TIME_WAITs over (made > live).
	assert_eq "$((made - ab_tw > kept))" 1 "$m/kernel_took_time_wait_over"
	# Every TIME_WAIT the servers made, and where each went.
	assert_eq "$(jqn "[$procs | .totals.time_wait_entered] | add" "$J")" "$((made - ab_tw))" \
		"$m/entered_eq_kernel_made"
	assert_eq "$(jqn "[$procs | .time_wait_in_books] | add" "$J")" "$kept" "$m/live_eq_sock_diag"
	assert_eq "$(jqn "[$procs | .totals.time_wait_ended_early] | add" "$J")" "$((made - ab_tw - kept))" \
		"$m/ended_early_eq_taken_over"
	assert_eq "$(jqn "[$procs | .totals.time_wait_end_unseen] | add" "$J")" 0 "$m/no_end_unseen"
	assert_eq "$(tw_unbalanced "$J")" "" "$m/tw_books_balance"
	assert_eq "$(jqn '.agent.events_lost' "$J")" 0 "$m/nothing_lost"
	kill "$hap" "$master" 2>/dev/null
	wait "$hap" "$master" 2>/dev/null
}

proxy_case sk
proxy_case pt --per-transition
