#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# One agent per node (deploy/kubernetes/, docs/fleet.md): the manifests pass
# an offline schema check against the Kubernetes API's own types (npm
# kubernetes-models under tsc --strict: unknown fields, types, required
# fields; then its validators); the DaemonSet's pod template runs for real
# with `podman kube play` (a Pod made from it) on the image make image
# builds, with exactly the capabilities and memory limit it asks for; its
# exporter, scraped from the host, counts a server and a client in another
# container's network namespace, both there before the agent, exactly
# against the fixtures' own counts and that namespace's ss (opened,
# accepted, TIME_WAIT, established, listen); and the Prometheus
# config's relabelling, run by a real Prometheus on that exporter, keeps the
# annotated pod, scrapes the annotated port and adds `node`.
# The pod's exporter traces --all, counting exactly: tests/run.sh runs
# nothing in the background beside it.
# quiet: yes
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=20 H=5 H2=3
DEPLOY=$REPO_ROOT/deploy/kubernetes
for b in podman runc catatonit node npm python3 promtool prometheus curl; do
	command -v "$b" >/dev/null || { fail "tools/$b" "$b missing (make test-deps installs it)"; exit 1; }
done
python3 -c 'import yaml' 2>/dev/null || { fail tools/python3-yaml "python3-yaml missing"; exit 1; }

# ---- schema ----
# The checker's npm packages, pinned by tests/k8s/package-lock.json, kept
# in .output/k8s-schema between runs (npm ci again when the lock changes).
SCHEMA=$REPO_ROOT/.output/k8s-schema
if ! cmp -s "$REPO_ROOT/tests/k8s/package-lock.json" "$SCHEMA/package-lock.json" ||
	[[ ! -x $SCHEMA/node_modules/.bin/tsc ]]; then
	rm -rf "$SCHEMA" && mkdir -p "$SCHEMA" &&
		cp "$REPO_ROOT/tests/k8s/package.json" "$REPO_ROOT/tests/k8s/package-lock.json" "$SCHEMA/" &&
		(cd "$SCHEMA" && npm ci --no-audit --no-fund >"$TMP/npm.out" 2>&1) ||
		{ fail schema/npm_ci "$(tail -c 300 "$TMP/npm.out" 2>/dev/null)"; exit 1; }
fi
schema() { python3 "$REPO_ROOT/tests/k8s/check.py" "$SCHEMA" "$@"; }
out=$(schema "$DEPLOY"/*.yaml 2>&1)
assert_eq "$?:$out" "0:" schema/deploy_manifests
# The check can fail: a misspelt field and a value of the wrong type.
sed 's/hostPID: true/hostPid: true/' "$DEPLOY/daemonset.yaml" >"$TMP/typo.yaml"
sed 's/readOnlyRootFilesystem: true/readOnlyRootFilesystem: "yes"/' "$DEPLOY/daemonset.yaml" >"$TMP/type.yaml"
out=$(schema "$TMP/typo.yaml" 2>&1)
[[ $out == *"'\"hostPid\"' does not exist in type 'IPodSpec'"* ]] && ok schema/unknown_field_found ||
	fail schema/unknown_field_found "got: ${out:0:300}"
out=$(schema "$TMP/type.yaml" 2>&1)
[[ $out == *"DaemonSet connscope"*"not assignable to type 'boolean"* ]] && ok schema/wrong_type_found ||
	fail schema/wrong_type_found "got: ${out:0:300}"

# ---- the image ----
source "$TESTS_DIR/podman.sh"
pm_setup "$TMP/podman"
make --no-print-directory -C "$REPO_ROOT" image >"$TMP/make.out" 2>&1 ||
	{ fail image "make image: $(tail -c 300 "$TMP/make.out")"; exit 1; }
version=$("$CONNSCOPE" --version | awk '{print $2}')
IMG=localhost/connscope:$version
pm load -q -i "$REPO_ROOT/.output/connscope-image.oci.tar" >/dev/null || { fail image/load "podman load"; exit 1; }

# ---- a target in other containers, there before the agent ----
# A server and a client in one network namespace of their own (as a pod's
# containers share one), started and holding H connections before the
# agent's pod: the listener is known to the agent only from a dump made in
# that namespace (setns, hence CAP_SYS_ADMIN in the template). The image
# has the loader and libc the fixture needs.
fix_start srv podman "${PM_ARGS[@]}" run -i --rm --name "cs-srv-$$" --network none \
	-v "$FIXTURES/tcpfix:/tcpfix:ro" --entrypoint /tcpfix "$IMG" server -p 8080
fix_expect srv "listening*" 30 || fail target/server "did not start"
fix_start cli podman "${PM_ARGS[@]}" run -i --rm --name "cs-cli-$$" --network "container:cs-srv-$$" \
	-v "$FIXTURES/tcpfix:/tcpfix:ro" --entrypoint /tcpfix "$IMG" client -p 8080
fix_expect cli "ready*" 30 || fail target/client "did not start"
S=$(pm inspect --format '{{.State.Pid}}' "cs-srv-$$")
C=$(pm inspect --format '{{.State.Pid}}' "cs-cli-$$")
[[ $(readlink "/proc/$C/ns/net") != "$(readlink /proc/self/ns/net)" ]] && ok target/own_netns ||
	fail target/own_netns "the client is in the host's network namespace"
assert_eq "$(fx_cmd cli "open $H")" "opened $H" target/held_before_the_agent
accepted0=$(fx_cmd srv stats | awk '{print $3}')
assert_eq "$accepted0" "$H" target/server_accepted_before

# ---- the pod template, for real ----
# A Pod of the DaemonSet's template (what the DaemonSet controller makes on
# each node), changed only where podman kube play differs from a kubelet
# or this machine requires:
# - port 9477 -> a free port (another exporter may hold 9477 here);
# - image: the one just loaded (its tag is connscope --version's);
# - no `ports:` (podman 4.3: "PortMappings can only be used with Bridge or
#   slirp4netns networking"; under hostNetwork a kubelet needs none either);
# - securityContext.seccompProfile as podman reads it: the annotation
#   seccomp.security.alpha.kubernetes.io/pod;
# - --top-processes 4096 added: series for every process, as the first 20
#   to show activity may be others on a shared machine (each scrape's curl
#   is one).
EP=$(free_port)
python3 - "$DEPLOY/daemonset.yaml" "$TMP/pod.yaml" "$EP" "$IMG" <<'PY' || { fail pod_from_template "transform failed"; exit 1; }
import sys, yaml
src, dst, port, image = sys.argv[1:]
docs = list(yaml.safe_load_all(open(src).read().replace("9477", port)))
ds = next(d for d in docs if d["kind"] == "DaemonSet")
t = ds["spec"]["template"]
meta = {"name": "connscope-node", "namespace": ds["metadata"]["namespace"],
        "labels": t["metadata"]["labels"], "annotations": dict(t["metadata"]["annotations"])}
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": t["spec"]}
for c in pod["spec"]["containers"]:
    c["image"] = image
    c["args"] += ["--top-processes", "4096"]
    c.pop("ports", None)
    sp = c.get("securityContext", {}).pop("seccompProfile", None)
    if sp:
        meta["annotations"]["seccomp.security.alpha.kubernetes.io/pod"] = (
            {"Unconfined": "unconfined", "RuntimeDefault": "runtime/default"}.get(sp["type"])
            or "localhost/" + sp.get("localhostProfile", ""))
yaml.safe_dump(pod, open(dst, "w"), sort_keys=False)
PY
out=$(schema "$TMP/pod.yaml" 2>&1)
assert_eq "$?:$out" "0:" schema/pod_from_template
# From the scratch directory: kube play builds an image from ./NAME/Containerfile
# when such a directory exists (the repository has ./connscope).
# podman 4.3's kube play ignores hostPID (its containers get a pid
# namespace of their own; hostNetwork it applies): for this one command
# containers.conf gives containers the host's, which is what hostPID asks.
python3 -c 'import sys, yaml; sys.exit(0 if yaml.safe_load(open(sys.argv[1]))["spec"]["hostPID"] else 1)' \
	"$TMP/pod.yaml" || fail pod/template_has_host_pid "hostPID is not true"
sed 's/^\[containers\]$/[containers]\npidns = "host"/' "$CONTAINERS_CONF" >"$TMP/podman/hostpid.conf"
(cd "$TMP" && CONTAINERS_CONF=$TMP/podman/hostpid.conf pm kube play "$TMP/pod.yaml") >"$TMP/play.out" 2>&1 ||
	{ fail kube_play "$(head -c 400 "$TMP/play.out")"; exit 1; }
pm_track_pods
on_exit "pm kube down '$TMP/pod.yaml' >/dev/null 2>&1"
CTR=connscope-node-connscope
if wait_for "pm logs $CTR 2>&1 | grep -q 'exporter serving http://0.0.0.0:$EP/metrics'" 30; then
	ok pod/serving
else
	fail pod/serving "$(pm logs "$CTR" 2>&1 | head -c 400)"
fi
APID=$(pm inspect --format '{{.State.Pid}}' "$CTR")
# Exactly the capabilities the template adds (bit numbers of capability.h).
want=$(python3 - "$DEPLOY/daemonset.yaml" <<'PY'
import sys, yaml
bits = {"DAC_READ_SEARCH": 2, "SETGID": 6, "SETUID": 7, "NET_ADMIN": 12, "SYS_PTRACE": 19,
        "SYS_ADMIN": 21, "SYSLOG": 34, "PERFMON": 38, "BPF": 39}
ds = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d["kind"] == "DaemonSet")
caps = ds["spec"]["template"]["spec"]["containers"][0]["securityContext"]["capabilities"]["add"]
print("%016x" % sum(1 << bits[c] for c in caps))
PY
)
assert_eq "$(awk '/^CapEff:/ {print $2}' "/proc/$APID/status")" "$want" pod/capabilities_exactly_the_templates
assert_eq "$(readlink "/proc/$APID/ns/pid")" "$(readlink /proc/self/ns/pid)" pod/host_pid
assert_eq "$(readlink "/proc/$APID/ns/net")" "$(readlink /proc/self/ns/net)" pod/host_network
# The runtime's default seccomp filter is in force (RuntimeDefault: with
# SYS_ADMIN it lets bpf(), perf_event_open() and setns() through).
assert_eq "$(awk '/^Seccomp:/ {print $2}' "/proc/$APID/status")" 2 pod/seccomp_filter_on
# The memory limit in force is the template's (256Mi), on the memory
# cgroup the agent and its BPF maps are charged to.
mcg=$(awk -F: '$2 == "memory" {print $3}' "/proc/$APID/cgroup")
lim=$(cat "/sys/fs/cgroup/memory$mcg/memory.limit_in_bytes" 2>/dev/null)
assert_eq "$lim" $((256 * 1024 * 1024)) pod/memory_limit
scrape() { curl -s --max-time 5 "http://127.0.0.1:$EP/metrics"; }
wait_for "scrape >'$TMP/first.prom' && grep -q '^connscope_build_info' '$TMP/first.prom'" 20
assert_eq "$(grep -c '^connscope_figure_available{.*} 0$' "$TMP/first.prom")" 0 \
	"pod/every_figure_available $(grep '^connscope_figure_available{.*} 0$' "$TMP/first.prom" | tr '\n' ' ')"
echo "89_daemonset: agent VmRSS $(awk '/^VmRSS:/ {print $2}' "/proc/$APID/status") kB, its memory cgroup $(($(cat "/sys/fs/cgroup/memory$mcg/memory.usage_in_bytes") / 1024)) KiB (BPF maps included) of $((lim / 1024))" >&2

# val NAME PID [STATE]: the process's sample (empty: no series).
val() {
	scrape | awk -v m="$1{pid=\"$2\"," -v st="state=\"${3:-}\"" \
		'index($0, m) == 1 && (st == "state=\"\"" || index($0, st)) {print $NF}' | head -1
}
# The listener is known only from the dump made inside its namespace.
wait_for "[ \"\$(val connscope_process_tcp_sockets $S listen)\" = 1 ]" 20
assert_eq "$(val connscope_process_tcp_sockets "$S" listen)" 1 exact/server_listener_read_in_its_namespace
assert_eq "$(fx_cmd cli "churn $N")" "churned $N" target/churned
assert_eq "$(fx_cmd cli "open $H2")" "opened $H2" target/held_after
# The fixtures' own counts: the client opened N + H2 since the agent
# started, the server accepted what its stats say less what it had before.
st=$(fx_cmd srv stats)
assert_eq "$st" "stats accepted $((H + N + H2)) closed $N open $((H + H2))" target/server_stats
accepted=$(($(awk '{print $3}' <<<"$st") - accepted0))
wait_for "[ \"\$(val connscope_process_time_wait_entered_total $C)\" = $N ]" 20
assert_eq "$(val connscope_process_connections_opened_total "$C")" "$((N + H2))" exact/client_opened
assert_eq "$(val connscope_process_time_wait_entered_total "$C")" "$N" exact/client_time_wait
wait_for "[ \"\$(val connscope_process_connections_accepted_total $S)\" = $accepted ]" 10
assert_eq "$(val connscope_process_connections_accepted_total "$S")" "$accepted" exact/server_accepted_eq_its_stats
# Live gauges against the namespace's own ss (made at each interval's
# reconcile: waited for, then read).
nss() { nsenter -t "$S" -n ss -Htan "$@" | wc -l; }
est_srv=$(nss state established "( sport = :8080 )")
est_cli=$(nss state established "( dport = :8080 )")
assert_eq "$est_srv $est_cli" "$((H + H2)) $((H + H2))" target/kernel_counts
wait_for "[ \"\$(val connscope_process_tcp_sockets $S established)\" = $est_srv ]" 10
assert_eq "$(val connscope_process_tcp_sockets "$S" established)" "$est_srv" exact/server_established_eq_ss
assert_eq "$(val connscope_process_tcp_sockets "$C" established)" "$est_cli" exact/client_established_eq_ss
wait_for "[ \"\$(val connscope_process_tcp_sockets $C time_wait)\" = \$(nss state time-wait) ]" 10
assert_eq "$(val connscope_process_tcp_sockets "$C" time_wait)" "$(nss state time-wait)" exact/client_time_wait_eq_ss
# The series name the server's container: by its short id, as the test's
# podman store (private, under $TMP) is not one the agent knows to read
# names from.
sid=$(pm inspect --format '{{.Id}}' "cs-srv-$$")
scrape | grep "^connscope_process_connections_accepted_total{pid=\"$S\"," | grep -q "container=\"${sid:0:12}\"" &&
	ok target/server_series_carry_container || fail target/server_series_carry_container \
	"$(scrape | grep "^connscope_process_connections_accepted_total{pid=\"$S\"," | head -c 300)"

# ---- the Prometheus config ----
PCONF=$DEPLOY/prometheus.yml
promtool check config "$PCONF" >"$TMP/check.out" 2>&1
rc=$?
# Debian's Prometheus (2.42+ds) is built without Kubernetes service
# discovery: then the same config with kubernetes_sd_configs swapped for a
# file_sd that gives the targets role pod would, with their
# __meta_kubernetes_pod_* labels.
if ((rc == 0)); then
	ok prometheus/check_config
elif grep -q 'field kubernetes_sd_configs not found' "$TMP/check.out"; then
	echo "89_daemonset: this promtool has no kubernetes_sd: checking the config with file_sd in its place" >&2
	ok prometheus/check_config_parts_this_build_knows
else
	fail prometheus/check_config "$(head -c 300 "$TMP/check.out")"
fi
python3 - "$PCONF" "$TMP/prom.yml" "$TMP/targets.json" <<'PY' || fail prometheus/swap "transform failed"
import sys, yaml
src, dst, targets = sys.argv[1:]
c = yaml.safe_load(open(src))
job = next(j for j in c["scrape_configs"] if j["job_name"] == "connscope")
sd = job.pop("kubernetes_sd_configs")
assert [s["role"] for s in sd] == ["pod"], sd
job["file_sd_configs"] = [{"files": [targets], "refresh_interval": "1s"}]
c["global"]["scrape_interval"] = "1s"
yaml.safe_dump(c, open(dst, "w"), sort_keys=False)
PY
# Two pods as role pod lists them: the agent (annotated, its declared port
# 9477 in __address__ as role pod gives it; the annotation's port is the
# free one), and another pod that does not ask to be scraped.
cat >"$TMP/targets.json" <<JSON
[{"targets": ["127.0.0.1:9477"], "labels": {
    "__meta_kubernetes_pod_name": "connscope-abcde", "__meta_kubernetes_pod_node_name": "node-a",
    "__meta_kubernetes_pod_annotation_prometheus_io_scrape": "true",
    "__meta_kubernetes_pod_annotation_prometheus_io_port": "$EP",
    "__meta_kubernetes_pod_annotation_prometheus_io_path": "/metrics"}},
 {"targets": ["127.0.0.2:9477"], "labels": {
    "__meta_kubernetes_pod_name": "other", "__meta_kubernetes_pod_node_name": "node-b"}}]
JSON
out=$(promtool check config "$TMP/prom.yml" 2>&1)
assert_eq "$?" 0 "prometheus/check_config_with_file_sd ${out:0:200}"
pport=$(free_port)
mkdir -p "$TMP/promdata"
spawn_bg prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/promdata" \
	--web.listen-address="127.0.0.1:$pport" >"$TMP/prom.log" 2>&1
promq() { http_get "$pport" "/api/v1/query?query=$(jq -rn --arg q "$1" '$q | @uri')" |
	jq -r '.data.result[0].value[1] // empty' 2>/dev/null; }
q="connscope_process_connections_opened_total{job=\"connscope\",node=\"node-a\",instance=\"127.0.0.1:$EP\",pid=\"$C\"}"
wait_for "[ \"\$(promq '$q')\" = $((N + H2)) ]" 40
assert_eq "$(promq "$q")" "$((N + H2))" prometheus/scraped_with_node_label
assert_eq "$(http_get "$pport" /api/v1/targets | jq -r '[.data.activeTargets[] | "\(.labels.instance) \(.labels.node) \(.health)"] | join(",")')" \
	"127.0.0.1:$EP node-a up" prometheus/only_the_annotated_pod

# ---- clean up ----
pm kube down "$TMP/pod.yaml" >/dev/null 2>&1
assert_eq "$(pm ps -aq --filter "name=$CTR" | wc -l)" 0 cleanup/pod_gone
assert_eq "$(pm_pod_cgroups_remove $_pm_pods)" "" cleanup/no_pod_cgroup
exit 0
