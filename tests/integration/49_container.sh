#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# --container NAME on real podman containers (tests/podman.sh: runc,
# cgroupfs, a store of the test's own, root filesystems made here): a
# server in one container and a client in another sharing its loopback
# (--network container:NAME), traced from the host by name: attach on the
# server's (accepted), the exporter on the client's (opened, TIME_WAIT,
# series labelled container="NAME"), exact against the fixtures' own
# counts; doctor, fdleak and run by the server's name; summary --prom's
# container label; a container restarted under attach, followed; bad
# names.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
source "$TESTS_DIR/podman.sh"
require_root

for t in podman runc busybox; do
	command -v "$t" >/dev/null || { fail "tools/$t" "$t missing: apt-get install podman runc busybox-static"; exit 0; }
done
TMP=$(lib_tmpdir)
N=200 K=15
pm_setup "$TMP/pm" || { fail setup "podman store in $TMP/pm"; exit 0; }
# The same store for connscope's own `podman inspect` (names): podman reads
# where it is from these files, as it would from /etc/containers.
cat >>"$CONTAINERS_CONF" <<CONF
tmp_dir = "$TMP/pm/tmp"
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
cat >"$TMP/pm/storage.conf" <<CONF
[storage]
driver = "vfs"
graphroot = "$TMP/pm/store"
runroot = "$TMP/pm/run"
CONF
export CONTAINERS_STORAGE_CONF=$TMP/pm/storage.conf

# A root filesystem: static busybox, tcpfix and the libraries it needs.
ROOT=$TMP/rootfs
mkdir -p "$ROOT"/{bin,proc,sys,dev,tmp,etc,www}
cp "$(command -v busybox)" "$ROOT/bin/busybox"
ln -s busybox "$ROOT/bin/sh"
cp "$FIXTURES/tcpfix" "$ROOT/bin/tcpfix"
ldd "$FIXTURES/tcpfix" | awk '/=> \// {print $3} /^\t\/[^ ]*ld-linux/ {print $1}' |
	while read -r lib; do mkdir -p "$ROOT$(dirname "$lib")"; cp -L "$lib" "$ROOT$lib"; done
echo hello >"$ROOT/www/index.html"

srv=cs-srv-$$ cli=cs-cli-$$ rs=cs-rs-$$
port=8080

# ---- server and client containers, one loopback ----
# The containers' network namespace (the server's, the client joins it)
# has tcp_rfc1337=1 (tests/fixture.sh's fx_twns says why):
# kernel/time_wait_in_the_containers_netns wants all N TIME_WAIT live.
fix_start srv podman run -i --rm --name "$srv" --network none --sysctl net.ipv4.tcp_rfc1337=1 \
	--rootfs "$ROOT" /bin/tcpfix server -p "$port" || fail start/server "podman run $srv"
fix_expect srv "listening *" 60 || fail start/server_listening "$FIX_LINE"
fix_start cli podman run -i --rm --name "$cli" --network "container:$srv" --rootfs "$ROOT" \
	/bin/tcpfix client -p "$port" || fail start/client "podman run $cli"
fix_expect cli "ready *" 60 || fail start/client_ready "$FIX_LINE"
spid=$(pm inspect --format '{{.State.Pid}}' "$srv")
# summary --prom labels the server's sockets with its container's name, as
# the exporter's series are.
"$CONNSCOPE" summary --prom -p "$spid" >"$TMP/sum.prom"
assert_eq "$?:$(grep -c "^connscope_process_tcp_sockets{pid=\"$spid\",comm=\"tcpfix\",container=\"$srv\",state=\"listen\"} 1\$" "$TMP/sum.prom")" \
	0:1 summary_prom/container_label

cs_attach "$TMP/srv.json" "$TMP/srv.err" --container "$srv" -i 0.5 -j ||
	fail attach/started "$(cat "$TMP/srv.err")"
eport=$(free_port)
spawn_bg "$CONNSCOPE" exporter --container "$cli" --listen "127.0.0.1:$eport" -i 0.5 2>"$TMP/exp.err"
EXP_PID=$BG_PID
wait_for "curl -sf http://127.0.0.1:$eport/metrics >/dev/null" 30 || fail exporter/serving "no /metrics: $(cat "$TMP/exp.err")"
# The exporter has its targets once the client's process is in its books.
wait_for "curl -sf http://127.0.0.1:$eport/metrics | grep -q 'connscope_process_connections_opened_total{.*container=\"$cli\"'" 30 ||
	fail exporter/client_seen "no series for the client"
assert_eq "$(fx_cmd cli "churn $N")" "churned $N" churned
wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted $N closed $N open 0' ]" 30
assert_eq "$(nsenter -t "$spid" -n sysctl -n net.ipv4.tcp_rfc1337)" 1 kernel/rfc1337_in_the_containers_netns
# The kernel's closes over in the containers' namespace, not only close().
FX_WRAP=(nsenter -t "$spid" -n)
wait_for "[ \$(tw_on_port $port) -ge $N ] && closes_done $port" 20 ||
	fail kernel_closed "kernel: $(tw_on_port "$port") TIME_WAIT in $srv"
FX_WRAP=()
tw=$(nsenter -t "$spid" -n ss -Htan state time-wait | wc -l)
sleep 1.2	# two exporter intervals: its series are made each interval
curl -sf "http://127.0.0.1:$eport/metrics" >"$TMP/metrics.txt"
cs_stop
assert_eq "$?" 0 attach/exit_status
kill -INT "$EXP_PID"; wait "$EXP_PID"

J=$TMP/srv.json
assert_eq "$(jqn '[.processes[].totals.connections_accepted] | add' "$J")" "$N" attach/server_accepted
assert_eq "$(jqn '[.processes[].totals.connections_opened] | add' "$J")" 0 attach/server_opened_none
assert_eq "$(jqn '.run.container.name' "$J")" "$srv" attach/run_container_name
assert_eq "$(jqn '[.processes[].container] | unique | join(",")' "$J")" "$srv" attach/process_container_label
m() { awk -v n="$1" -v c="container=\"$cli\"" 'index($0, n "{") == 1 && index($0, c) {s += $NF} END {print s + 0}' "$TMP/metrics.txt"; }
assert_eq "$(m connscope_process_connections_opened_total)" "$N" exporter/client_opened
assert_eq "$(m connscope_process_time_wait_entered_total)" "$N" exporter/client_time_wait_entered
assert_eq "$tw" "$N" kernel/time_wait_in_the_containers_netns
assert_eq "$(grep -c "container=\"$srv\"" "$TMP/metrics.txt")" 0 exporter/only_its_container

# doctor, fdleak and run take --container too: the server's container by
# name, its one process labelled with it; run's load generator churns
# RN connections into the container's namespace from the host side.
"$CONNSCOPE" fdleak --container "$srv" -j -i 0.5 -d 1 >"$TMP/fd.json" 2>"$TMP/fd.err"
assert_eq "$?:$(jqn '[.processes[] | "\(.pid) \(.container)"] | join(",")' "$TMP/fd.json")" "0:$spid $srv" \
	fdleak/container_by_name
"$CONNSCOPE" doctor --container "$srv" -j -i 0.5 -d 1 >"$TMP/dr.json" 2>"$TMP/dr.err"
assert_eq "$?:$(jqn '.run.container.name' "$TMP/dr.json")" "0:$srv" doctor/container_by_name
RN=20
# --cooldown: the server's last accept may come after the client exits.
"$CONNSCOPE" run --container "$srv" -j -i 0.5 --cooldown 1 -- \
	sh -c "echo 'churn $RN' | nsenter -t $spid -n '$FIXTURES/tcpfix' client -p $port" \
	>"$TMP/run.json" 2>"$TMP/run.err"
assert_eq "$?:$(jqn "[.processes[] | select(.pid == $spid) | .totals.connections_accepted] | add" "$TMP/run.json")" \
	"0:$RN" run/container_server_accepted
assert_eq "$(jqn "[.processes[] | select(.pid == $spid) | .container] | join(\",\")" "$TMP/run.json")" "$srv" \
	run/container_label
wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted $((N + RN)) closed $((N + RN)) open 0' ]" 10
assert_eq "$(fx_cmd srv stats)" "stats accepted $((N + RN)) closed $((N + RN)) open 0" run/server_own_count
fix_send cli exit; fix_send srv exit

# ---- a container restarted under attach: followed ----
pm run -d --name "$rs" --network none --rootfs "$ROOT" /bin/busybox httpd -f -p "$port" -h /www >/dev/null ||
	fail restart/start "podman run $rs"
wget_in() { pm exec "$rs" /bin/busybox sh -c "for i in \$(seq $1); do wget -q -O /dev/null http://127.0.0.1:$port/ || exit 1; done"; }
wait_for "wget_in 1" 30 || fail restart/httpd_up "httpd in $rs does not answer"
# A long interval, and the agent stopped across the restart: it finds the
# new cgroup only once the new httpd already listens (as a loaded agent
# would), and the next interval is seconds away.
cs_attach "$TMP/rs.json" "$TMP/rs.err" --container "$rs" -i 5 -j ||
	fail restart/attach "$(cat "$TMP/rs.err")"
wget_in "$K" || fail restart/before "wget before the restart"
kill -STOP "$CS_PID"
pm restart -t 0 "$rs" >/dev/null || fail restart/restart "podman restart"
npid=$(pm inspect --format '{{.State.Pid}}' "$rs")
wait_for "nsenter -t $npid -n ss -Hltn | grep -q ':$port '" 30 || fail restart/listening "no listener"
kill -CONT "$CS_PID"
wait_for "grep -q 're-created' '$TMP/rs.err'" 30 || fail restart/said "$(cat "$TMP/rs.err")"
wait_for "wget_in 1" 30 || fail restart/httpd_up_again "httpd does not answer after the restart"
wget_in "$K" || fail restart/after "wget after the restart"
cs_stop
J=$TMP/rs.json
# K each side of the restart, and the probe that found the new httpd up:
# 2K + 1 exactly. The probe comes after the agent said it follows the new
# cgroup, which it says once what the new httpd holds is seeded: its
# listener, made before the agent looked, has no socket storage until
# then, and its accepts are not counted. (Seeded at the next interval, as
# before, this run counted K: every accept after the restart was lost.)
acc=$(jqn '[.processes[].totals.connections_accepted] | add' "$J")
assert_eq "$acc" $((2 * K + 1)) restart/accepted_both_sides_and_the_probe
assert_eq "$(jqn "[.processes[] | select(.joined_s != null) | .totals.connections_accepted] | add >= $K" "$J")" \
	true restart/new_httpd_joined_and_counted
assert_eq "$(jqn '.run.cgroup_recreated >= 1' "$J")" true restart/followed
pm rm -f -t 0 "$rs" >/dev/null

# ---- bad input: one message, the fix, exit 2 ----
"$CONNSCOPE" attach --container "no-such-$$" -d 1 >/dev/null 2>"$TMP/bad.err"
assert_eq "$? $(msg_join "$TMP/bad.err" | wc -l)" "2 1" bad/unknown_one_message
fits80 bad/unknown "$TMP/bad.err"
msg_join "$TMP/bad.err" | grep -q "no running container has that name or id" && ok bad/unknown_said ||
	fail bad/unknown_said "$(cat "$TMP/bad.err")"
"$CONNSCOPE" attach --container 'a b' -d 1 >/dev/null 2>"$TMP/bad2.err"
assert_eq "$?" 2 bad/not_a_name
