#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A server's TIME_WAIT judged by its listener, not one process at a time
# (#26): pre-forked workers share one listener and each holds a share of
# its TIME_WAIT (Apache prefork spread 3,000 over 4-6 children and got no
# finding). tcpfix --workers 4 --close-first in a network namespace of its
# own, 1,600 connections each closed first by the worker that accepted it:
# one time_wait finding for the listener, naming the service (comm and
# listen address) and every worker that accepted, with the pooled counts;
# no finding names one worker. Before: one finding per worker over 1,000
# TIME_WAIT, or none.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=1600
NS=connscope-dlis-$$
new_netns "$NS" || { fail netns "ip netns add $NS"; exit 1; }
FX_WRAP=(ip netns exec "$NS")

fx_start srv server --close-first --workers 4 || { fail start server; exit 1; }
# "listening PORT PID workers W1 W2 W3 W4"
read -r _ PORT PARENT _ W1 W2 W3 W4 <<<"$FIX_LINE"
fx_start cli client -p "$PORT" || { fail start client; exit 1; }

J=$TMP/doctor.json
spawn_bg ip netns exec "$NS" "$CONNSCOPE" doctor -d 120 -i 0.3 -j -p "$PARENT" --children \
	>"$J" 2>"$TMP/doctor.err"
DR_PID=$BG_PID
wait_for "grep -q '^connscope: tracing' '$TMP/doctor.err' || ! kill -0 $DR_PID 2>/dev/null" 30
if ! grep -q '^connscope: tracing' "$TMP/doctor.err"; then
	fail attach "$(cat "$TMP/doctor.err")"
	exit 1
fi

assert_eq "$(fx_cmd cli "churn-passive $N" 120)" "churned $N" fixture/churned
# Every connection past its close (the worker's TIME_WAIT made) before
# the doctor stops.
wait_for "[ \$(ip netns exec $NS ss -Htan state fin-wait-1 state fin-wait-2 state closing state last-ack state close-wait | wc -l) -eq 0 ]" 20 ||
	fail closes_done "connections still closing"
# "stats accepted A closed C open O worker W1 A1 C1 worker W2 A2 C2 .."
st=$(fx_cmd srv stats)
read -r _ _ acc _ _ _ _ _ _ a1 _ _ _ a2 _ _ _ a3 _ _ _ a4 _ <<<"$st"
assert_eq "$acc" "$N" fixture/accepted
echo "# accepted per worker: $a1 $a2 $a3 $a4"
acceptors=$(for w in "$W1:$a1" "$W2:$a2" "$W3:$a3" "$W4:$a4"; do
	((${w#*:} > 0)) && echo "${w%:*}"; done | sort -n | paste -sd, -)
tw_now=$(ip netns exec "$NS" ss -Htan state time-wait | wc -l)
kill -INT "$DR_PID"
wait "$DR_PID"
assert_eq "$?" 0 doctor/exit_status

F='[.findings[] | select(.rule == "time_wait")]'
EV() { echo "(.evidence[] | select(.name == \"$1\") | .value)"; }
assert_eq "$(jqn "$F | length" "$J")" 1 listener/one_finding
assert_eq "$(jqn "$F[0] | [.endpoint, .pid, .comm, .severity] | @tsv" "$J")" \
	"$(printf 'listen 127.0.0.1:%s\t0\ttcpfix\twarning' "$PORT")" listener/names_the_service
assert_eq "$(jqn "$F[0] | (.pids | sort | map(tostring) | join(\",\"))" "$J")" "$acceptors" \
	listener/every_acceptor_named
assert_eq "$(jqn "$F[0] | [.processes, $(EV processes)] | @tsv" "$J")" \
	"$(printf '%s\t%s' "$(tr , '\n' <<<"$acceptors" | wc -l)" "$(tr , '\n' <<<"$acceptors" | wc -l)")" \
	listener/processes
# On 6.18 the kernel now and then runs no program for a FIN_WAIT2->CLOSE
# (docs/reliability.md, sk_books.h): that connection's one record never
# comes, so it is in neither count (1599 1599 of 1600, once in a loaded
# run). The agent counts it from the storages' books, in the acceptor's
# accepted and apart as an end not run. So each count is N less exactly
# the ends the report names lost, over the acceptors and in the losses
# alike; a connection missing with no loss named still fails here.
UNRUN=$(jqn "[.processes[] | select(.pid == $W1 or .pid == $W2 or .pid == $W3 or .pid == $W4) | .totals.connections_end_not_run] | add" "$J")
[[ $UNRUN =~ ^[0-9]+$ ]] || UNRUN=unparsable
echo "# ends not run (named lost): $UNRUN"
assert_eq "$(jqn '.agent.losses.tcp_ends_not_run' "$J")" "$UNRUN" listener/ends_lost_named
assert_eq "$(jqn "[.processes[] | select(.pid == $W1 or .pid == $W2 or .pid == $W3 or .pid == $W4) | .totals.connections_accepted] | add" "$J")" \
	"$N" listener/accepted_exact
# Rare: 0-3 of ~2,400 in pgbench -C; more is the books' fault, not the kernel's.
assert_eq "$((${UNRUN//[^0-9]/0} <= N / 100))" 1 "listener/ends_lost_rare ($UNRUN of $N)"
SEEN=$((N - ${UNRUN//[^0-9]/0}))
assert_eq "$(jqn "$F[0] | [$(EV time_wait_entered), $(EV closed_first_by_this_side), $(EV closed_first_by_peer)] | @tsv" "$J")" \
	"$(printf '%s\t%s\t0' "$SEEN" "$SEEN")" listener/pooled_counts_exact
# Its peak: the most held at one moment, at least what the namespace held
# when the run ended (none expired yet unless the churn took 60 s), less
# the TIME_WAIT of an end not run: with no record the books cannot charge
# it to the listener (a repro at N=8000: 6416 held, 6417 in the kernel,
# 1 end not run).
peak=$(jqn "$F[0] | $(EV time_wait_peak)" "$J")
[[ $peak =~ ^[0-9]+$ ]] || peak=0
assert_eq "$((peak >= tw_now - (N - SEEN) && peak <= N && peak >= 1000))" 1 \
	"listener/peak_between_kernel_count_and_total ($tw_now - $((N - SEEN)) <= $peak <= $N)"
assert_eq "$(jqn "$F[0].verdict | test(\"^tcpfix on 127.0.0.1:$PORT \\\\([0-9] processes accepting on it\\\\) holds [0-9]+ TIME_WAIT sockets at the peak because it closes first \\\\($SEEN of $SEEN closes\\\\)\")" "$J")" \
	true listener/verdict
assert_eq "$(jqn "[.findings[] | select(.pid == $W1 or .pid == $W2 or .pid == $W3 or .pid == $W4 or .pid == $PARENT)] | length" "$J")" \
	0 listener/no_one_worker_blamed

fx_stop cli
fx_stop srv

# ---- a server that also connects out ----
# nginx as a reverse proxy in front of an upstream it serves itself, the
# upstream block without keepalive (docs/doctor.md's case): each worker
# accepts on the proxy port (ab -k keeps those), opens a connection to the
# upstream port for every request and, as the upstream, accepts it and
# closes it first. The upstream listener's finding quotes its own closes:
# about N, not the worker's over both ports (about 2N: it said "(20019 of
# 40023 closes)" in docs/doctor.md's run, its outgoing connections' peer
# closes counted in).
if ! command -v nginx >/dev/null || ! command -v ab >/dev/null; then
	fail proxy/installed "needs nginx and ab (Debian: nginx, apache2-utils; make test-deps)"
	exit 0
fi
NP=2000
NGX=$TMP/nginx
mkdir -p "$NGX"
cat >"$NGX/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 1;
pid $NGX/nginx.pid;
error_log $NGX/error.log notice;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $NGX/body;
	proxy_temp_path $NGX/proxy;
	fastcgi_temp_path $NGX/fastcgi;
	uwsgi_temp_path $NGX/uwsgi;
	scgi_temp_path $NGX/scgi;
	upstream app { server 127.0.0.1:8081; }
	server {
		listen 127.0.0.1:8080;
		location / { proxy_pass http://app; }
	}
	server {
		listen 127.0.0.1:8081;
		location / { return 200 "ok\n"; }
	}
}
CONF
spawn_bg ip netns exec "$NS" nginx -p "$NGX" -e "$NGX/error.log" -c "$NGX/nginx.conf"
wait_for "[ -s '$NGX/nginx.pid' ] && pgrep -P \$(cat '$NGX/nginx.pid') >/dev/null" 20 ||
	{ fail proxy/nginx_start "$(tail -3 "$NGX/error.log" 2>/dev/null)"; exit 0; }
WORKER=$(pgrep -P "$(cat "$NGX/nginx.pid")")
J=$TMP/proxy.json
spawn_bg ip netns exec "$NS" "$CONNSCOPE" doctor -d 120 -i 0.3 -j -p "$WORKER" >"$J" 2>"$TMP/proxy.err"
DR_PID=$BG_PID
wait_for "grep -q '^connscope: tracing' '$TMP/proxy.err' || ! kill -0 $DR_PID 2>/dev/null" 30 ||
	fail proxy/attach "$(cat "$TMP/proxy.err")"
ip netns exec "$NS" timeout 120 ab -q -k -c 4 -n "$NP" http://127.0.0.1:8080/ >"$TMP/ab.txt" 2>&1
assert_eq "$(awk '/^Complete requests:/ {print $3}' "$TMP/ab.txt")" "$NP" proxy/ab_complete
kill -INT "$DR_PID"
wait "$DR_PID"
assert_eq "$?" 0 proxy/doctor_exit_status
kill -QUIT "$(cat "$NGX/nginx.pid")" 2>/dev/null
P=".processes[] | select(.pid == $WORKER) | .totals"
F='[.findings[] | select(.rule == "time_wait" and .endpoint == "listen 127.0.0.1:8081")]'
own=$(jqn "$F[0] | [$(EV closed_first_by_this_side), $(EV closed_first_by_peer)] | add" "$J")
all=$(jqn "$P | .closed_by_this_side + .closed_by_peer" "$J")
acc=$(jqn "$F[0] | $(EV time_wait_entered)" "$J")
echo "# proxy: the worker closed $all connections, the upstream listener's finding quotes $own ($acc TIME_WAIT entered)"
assert_eq "$(jqn "$F | length" "$J")" 1 proxy/upstream_listener_finding
[[ $own =~ ^[0-9]+$ && $all =~ ^[0-9]+$ && $acc =~ ^[0-9]+$ ]] || own=0 all=0 acc=1
# The listener's own closes are at least its TIME_WAIT entered and at
# most the requests proxied; the worker's are both ports', its outgoing
# ones (the upstream closing first) about as many again: quoting the
# worker's, the finding said about twice as many.
assert_eq "$((own >= acc && own <= NP))" 1 "proxy/listener_quotes_its_own_closes ($acc <= $own <= $NP)"
assert_eq "$((all - own >= acc / 2))" 1 "proxy/not_the_workers_closes ($all - $own >= $acc / 2)"
assert_eq "$(jqn "$F[0].verdict | test(\" because it closes first \\\\([0-9]+ of $own closes\\\\)\")" "$J")" \
	true proxy/verdict_quotes_them
