#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The held-out figure of issue #14, not part of make bench (it needs nginx
# and apache2-utils): ab -n N -c 32 without keep-alive against nginx (2
# workers, "return 200") in a network namespace made here (tcp_tw_reuse=1
# inside it), rounds of none / connscope attach / tcplife in rotated order;
# prints req/s per run and the ratios of each round. Needs root.
#	[N=20000] [ROUNDS=5] tests/bench/nginx_ab.sh
set -u
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CS=${CS:-$REPO_ROOT/.output/connscope}
N=${N:-20000} ROUNDS=${ROUNDS:-5}
for t in nginx ab tcplife jq; do
	command -v "$t" >/dev/null || { echo "nginx_ab: $t missing (apt-get install nginx apache2-utils bpfcc-tools jq)" >&2; exit 1; }
done
D=$(mktemp -d) NS=csngx-$$
trap 'kill $(cat "$D/nginx.pid" 2>/dev/null) 2>/dev/null; ip netns del "$NS" 2>/dev/null; rm -rf "$D"' EXIT
ip netns add $NS; ip -n $NS link set lo up
ip netns exec $NS sysctl -qw net.ipv4.ip_local_port_range="1024 65535"
ip netns exec $NS sysctl -qw net.ipv4.tcp_tw_reuse=1
cat > $D/nginx.conf <<C
worker_processes 2;
pid $D/nginx.pid;
error_log $D/error.log;
events { worker_connections 4096; }
http { access_log off; server { listen 127.0.0.1:8088 backlog=4096; location / { return 200 "ok\n"; } } }
C
ip netns exec $NS nginx -c $D/nginx.conf -p $D
# Its workers up: the pid file written and the port answering.
for ((w = 0; w < 100; w++)); do
	[[ -s $D/nginx.pid ]] && ip netns exec $NS bash -c 'exec 3<>/dev/tcp/127.0.0.1/8088' 2>/dev/null && break
	sleep 0.05
done
MASTER=$(cat $D/nginx.pid); PIDS=$(echo $MASTER $(pgrep -P $MASTER) | tr ' ' ',')
declare -A R
run() {
	local cfg=$1 tool=
	case $cfg in
	connscope) rm -f $D/att.err	# the last round's says "tracing" until truncated
		ip netns exec $NS $CS attach -p $PIDS -d 600 -i 1 -j ${CSARGS:-} > $D/att.json 2>$D/att.err & tool=$!
		for ((w = 0; w < 600; w++)); do grep -qs 'connscope: tracing' $D/att.err && break; kill -0 $tool 2>/dev/null || break; sleep 0.05; done ;;
	tcplife) tcplife >/dev/null 2>&1 & tool=$!
		# On once it holds its perf event (as make bench waits for it).
		for ((w = 0; w < 600; w++)); do ls -l /proc/$tool/fd 2>/dev/null | grep -q perf_event && break
			kill -0 $tool 2>/dev/null || break; sleep 0.05; done ;;
	esac
	local r=$(ip netns exec $NS ab -q -n $N -c 32 http://127.0.0.1:8088/ 2>/dev/null | awk '/Requests per second/ {print $4}')
	[[ -n $tool ]] && { kill -INT $tool; wait $tool 2>/dev/null; }
	echo $r
}
cfgs=(none connscope tcplife)
for ((i = 0; i < ROUNDS; i++)); do
	for ((k = 0; k < 3; k++)); do
		c=${cfgs[(k + i) % 3]}
		R[$c]+="$(run $c) "
	done
done
for c in none connscope tcplife; do echo "$c: ${R[$c]}"; done
paste <(tr ' ' '\n' <<<"${R[connscope]}") <(tr ' ' '\n' <<<"${R[none]}") | awk 'NF==2 {printf "%.3f ", $1/$2} END {print " connscope/none"}'
paste <(tr ' ' '\n' <<<"${R[tcplife]}") <(tr ' ' '\n' <<<"${R[none]}") | awk 'NF==2 {printf "%.3f ", $1/$2} END {print " tcplife/none"}'
jq -c '{records: .agent.events, lost: .agent.events_lost, mode: .run.records}' $D/att.json
