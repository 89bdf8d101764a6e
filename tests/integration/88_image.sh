#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The container image (make image, dist/container/): built from the tree
# with podman and no registry, its labels and default command; then run for
# real as the agent of the host (--pid=host --network host, as the
# DaemonSet's hostPID and hostNetwork) with the privileges docs/image.md
# lists. Its exporter, on 0.0.0.0 as the default command has it, is scraped
# from the host, and from a network namespace of the test's across a veth
# pair (another machine's view). A churn between two fixtures on the
# host's loopback is counted exactly. At the end no image, container,
# store, cgroup or namespace of the test is left.
# Its agent in a container traces --all, counting exactly: tests/run.sh
# runs nothing in the background beside it.
# quiet: yes
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=25
for b in podman runc curl promtool; do
	command -v "$b" >/dev/null || { fail "tools/$b" "$b missing (make test-deps installs it)"; exit 1; }
done

source "$TESTS_DIR/podman.sh"
pm_setup "$TMP/podman"

# ---- build ----
archive=$REPO_ROOT/.output/connscope-image.oci.tar
rm -f "$archive"
t0=$(_lib_now_us)
make --no-print-directory -C "$REPO_ROOT" image >"$TMP/make.out" 2>&1
rc=$?
build_ms=$((($(_lib_now_us) - t0) / 1000))
echo "88_image: make image took ${build_ms} ms" >&2
((rc == 0)) && ok build/make_image || { fail build/make_image "exit $rc: $(tail -c 300 "$TMP/make.out")"; exit 1; }
[[ -s $archive ]] && ok build/archive || { fail build/archive "$archive missing"; exit 1; }
# An OCI archive: a tar with oci-layout and index.json at its top.
assert_eq "$(tar -tf "$archive" | grep -cxE 'oci-layout|index.json')" 2 build/oci_layout

version=$("$CONNSCOPE" --version | awk '{print $2}')
out=$(pm load -q -i "$archive" 2>&1)
assert_eq "$out" "Loaded image: localhost/connscope:$version" load
IMG=localhost/connscope:$version
on_exit "pm rmi -f '$IMG' >/dev/null 2>&1"
label() { pm image inspect --format "{{index .Labels \"org.opencontainers.image.$1\"}}" "$IMG"; }
assert_eq "$(label version)" "$version" labels/version
rev=$(git -C "$REPO_ROOT" rev-parse HEAD)
[[ $(label revision) == "$rev"?(-dirty) ]] && ok labels/revision ||
	fail labels/revision "got '$(label revision)', want $rev"
[[ -n $(label source) ]] && ok labels/source || fail labels/source "empty"
assert_eq "$(pm image inspect --format '{{json .Config.Entrypoint}} {{json .Config.Cmd}}' "$IMG")" \
	'["/usr/sbin/connscope"] ["exporter","--all","--listen","0.0.0.0:9477"]' default_command
# The image holds the binary and what it loads, and nothing like a shell:
# the binary runs in it (every library found), /bin/sh does not exist.
assert_eq "$(pm run --rm --network none "$IMG" --version 2>&1)" "connscope $version" runs_inside
pm run --rm --network none --entrypoint /bin/sh "$IMG" -c true >/dev/null 2>&1
(($? != 0)) && ok no_shell || fail no_shell "/bin/sh ran in the image"
size=$(pm image inspect --format '{{.Size}}' "$IMG")
echo "88_image: image $((size / 1024)) KiB unpacked, archive $(($(stat -c %s "$archive") / 1024)) KiB" >&2
((size < 64 * 1024 * 1024)) && ok small || fail small "$size bytes"

# ---- run: the agent of the host ----
NSN=csimg-$$
HA=169.254.$((100 + $$ % 100)).1 CA=169.254.$((100 + $$ % 100)).2
new_netns "$NSN" || { fail netns "ip netns add $NSN"; exit 1; }
# The host end goes with the namespace's end when the namespace is deleted.
ip link add "ci$$h" type veth peer name "ci$$c" netns "$NSN" &&
	ip addr add "$HA/30" dev "ci$$h" && ip link set "ci$$h" up &&
	ip -n "$NSN" addr add "$CA/30" dev "ci$$c" && ip -n "$NSN" link set "ci$$c" up ||
	{ fail veth "veth pair not made"; exit 1; }
"$REPO_ROOT/dist/container/seccomp.sh" >"$TMP/seccomp.json" || fail seccomp_profile "seccomp.sh failed"

# Fixtures on the host's loopback, traced from the container.
port=$(free_port)
fx_start srv server -p "$port" && fx_start cli client -p "$port" || fail fixtures "tcpfix did not start"
H=10

NAME=csimg-agent-$$
# The privileges of docs/image.md, nothing more: no --privileged, the
# runtime's seccomp filter kept (plus bpf and perf_event_open). The default
# command (checked above) with every process's series (on a shared
# machine the fixtures need not be among the 20 busiest) and a free port.
EP=$(free_port)
pm run -d --name "$NAME" --pid=host --network host \
	--cap-drop all --cap-add "$PM_AGENT_CAPS" --security-opt "seccomp=$TMP/seccomp.json" \
	"${PM_AGENT_MOUNTS[@]}" "$IMG" exporter --all --top-processes 4096 --listen "0.0.0.0:$EP" \
	>"$TMP/run.out" 2>&1 ||
	{ fail run "$(head -c 300 "$TMP/run.out")"; exit 1; }
on_exit "pm rm -f -t 2 '$NAME' >/dev/null 2>&1"
CID=$(pm inspect --format '{{.Id}}' "$NAME")
if wait_for "pm logs '$NAME' 2>&1 | grep -q 'exporter serving http://0.0.0.0:$EP/metrics'" 30; then
	ok agent/serving
else
	fail agent/serving "$(pm logs "$NAME" 2>&1 | head -c 400)"
fi
pm logs "$NAME" >"$TMP/agent.log" 2>&1
assert_eq "$(grep -c '^connscope: tracing every process (--all)' "$TMP/agent.log")" 1 agent/tracing_all
# Every figure this kernel has is on in the container too (the agent's own
# cost needs CAP_SYS_ADMIN, and says so).
scrape() { curl -s --max-time 5 "http://127.0.0.1:$EP/metrics"; }
wait_for "scrape >'$TMP/first.prom' && grep -q '^connscope_build_info' '$TMP/first.prom'" 20
assert_eq "$(grep -c '^connscope_figure_available{.*} 0$' "$TMP/first.prom")" 0 \
	"agent/every_figure_available $(grep '^connscope_figure_available{.*} 0$' "$TMP/first.prom" | tr '\n' ' ')"
assert_eq "$(grep -v '^#' "$TMP/first.prom" | grep -c '^connscope_agent_losses_total{what="attach_failed"} 0$')" 1 \
	agent/nothing_failed_to_attach
# On every address: reached from the test's namespace across the veth.
ip netns exec "$NSN" curl -s --max-time 5 "http://$HA:$EP/metrics" >"$TMP/veth.prom"
assert_eq "$(grep -c '^connscope_build_info' "$TMP/veth.prom")" 1 agent/reached_across_veth

mval() {
	scrape | awk -v m="$1" -v p="{pid=\"$2\"," 'index($0, m p) == 1 {print $NF}' | head -1
}
assert_eq "$(fx_cmd cli "churn $N")" "churned $N" churned
assert_eq "$(fx_cmd cli "open $H")" "opened $H" held_open
wait_for "[ \"\$(mval connscope_process_connections_opened_total $FX_PID_cli)\" = $((H + N)) ]" 20
assert_eq "$(mval connscope_process_connections_opened_total "$FX_PID_cli")" "$((H + N))" exact/client_opened
wait_for "[ \"\$(mval connscope_process_time_wait_entered_total $FX_PID_cli)\" = $N ]" 10
assert_eq "$(mval connscope_process_time_wait_entered_total "$FX_PID_cli")" "$N" exact/client_time_wait
wait_for "[ \"\$(mval connscope_process_connections_accepted_total $FX_PID_srv)\" = $((H + N)) ]" 10
assert_eq "$(mval connscope_process_connections_accepted_total "$FX_PID_srv")" "$((H + N))" exact/server_accepted
scrape >"$TMP/scrape.prom"
promtool check metrics <"$TMP/scrape.prom" >"$TMP/lint.txt" 2>&1
assert_eq "$?:$(head -c 300 "$TMP/lint.txt")" 0: metrics/promtool_clean
assert_eq "$(grep -c '^connscope_events_lost_total 0$' "$TMP/scrape.prom")" 1 metrics/no_events_lost

# ---- stop and clean up ----
pm stop -t 10 "$NAME" >/dev/null 2>&1
assert_eq "$(pm inspect --format '{{.State.ExitCode}}' "$NAME")" 0 agent/clean_exit_on_sigterm
pm rm -f "$NAME" >/dev/null 2>&1
pm rmi -f "$IMG" >/dev/null 2>&1
assert_eq "$(pm ps -aq | wc -l):$(pm images -q | wc -l)" 0:0 cleanup/no_container_no_image
assert_eq "$(find /sys/fs/cgroup -maxdepth 4 -name "*$CID*" 2>/dev/null | head -3)" "" cleanup/no_cgroup
exit 0
