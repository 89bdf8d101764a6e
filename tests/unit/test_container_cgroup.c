/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* container_cgroup: the container id, its runtime and the pod UID, from
 * cgroup paths as /proc/PID/cgroup shows them on real hosts: Kubernetes
 * with the cgroupfs and the systemd drivers (containerd, CRI-O), Docker's
 * two drivers, podman's (rootful, rootless, cgroupfs), and paths that
 * name no container (a service, conmon, a pod's own slice). */
#include <string.h>

#include "unit.h"
#include "container_cgroup.h"

#define ID "7f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
#define UID "0b5e5c8a-3e3f-4f5e-9a2b-1c2d3e4f5a6b"
#define UID_ "0b5e5c8a_3e3f_4f5e_9a2b_1c2d3e4f5a6b"

static const struct {
	const char *path, *runtime, *id, *pod;
} cases[] = {
	/* Kubernetes, cgroupfs driver: QoS class, pod, container. */
	{ "/kubepods/burstable/pod" UID "/" ID, "kubernetes", ID, UID },
	{ "/kubepods/besteffort/pod" UID "/" ID, "kubernetes", ID, UID },
	{ "/kubepods/pod" UID "/" ID, "kubernetes", ID, UID },	/* Guaranteed */
	/* Kubernetes, systemd driver: escaped UID in the pod's slice. */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice/cri-containerd-" ID ".scope", "containerd", ID, UID },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-" ID ".scope", "cri-o", ID, UID },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope",
	  "containerd", ID, UID },
	/* kind / k3s nest a node's hierarchy under its own container's. */
	{ "/system.slice/docker-" ID ".scope/kubelet.slice/kubelet-kubepods.slice/"
	  "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" UID_
	  ".slice/cri-containerd-" ID ".scope", "containerd", ID, UID },
	/* Docker: systemd and cgroupfs drivers. */
	{ "/system.slice/docker-" ID ".scope", "docker", ID, "" },
	{ "/docker/" ID, "docker", ID, "" },
	/* podman: rootful systemd, rootless (runc's "container" child),
	 * cgroupfs manager (as the tests here run it). */
	{ "/machine.slice/libpod-" ID ".scope", "podman", ID, "" },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
	  ".scope/container", "podman", ID, "" },
	{ "/libpod_parent/libpod-" ID, "podman", ID, "" },
	/* No container. */
	{ "/system.slice/nginx.service", NULL, "", "" },
	{ "/machine.slice/libpod-conmon-" ID ".scope", NULL, "", "" },
	{ "/system.slice/crio-conmon-" ID ".scope", NULL, "", "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice",
	  NULL, "", UID },
	{ "/", NULL, "", "" },
	{ "", NULL, "", "" },
	/* Near misses: a short id, upper case, a bare id outside docker/kubepods. */
	{ "/system.slice/docker-7f1e2d3c4b5a.scope", NULL, "", "" },
	{ "/machine.slice/libpod-7F1E2D3C4B5A69788796A5B4C3D2E1F00F1E2D3C4B5A69788796A5B4C3D2E1F0.scope",
	  NULL, "", "" },
	{ "/user.slice/" ID, NULL, "", "" },
	{ "/kubepods/burstable/pod0b5e5c8a-3e3f-4f5e-9a2b/" ID, "kubernetes", ID, "" },
};

TEST(realistic_paths)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cgroup_container c;
		bool found = container_from_cgroup(cases[i].path, &c);
		char label[64];

		snprintf(label, sizeof(label), "case %zu found", i);
		ASSERT_EQ(found, cases[i].runtime != NULL, label);
		snprintf(label, sizeof(label), "case %zu runtime", i);
		ASSERT_STREQ(c.runtime ? c.runtime : "", cases[i].runtime ? cases[i].runtime : "",
			     label);
		snprintf(label, sizeof(label), "case %zu id", i);
		ASSERT_STREQ(c.id, cases[i].id, label);
		snprintf(label, sizeof(label), "case %zu pod_uid", i);
		ASSERT_STREQ(c.pod_uid, cases[i].pod, label);
	}
}

TEST(pod_uid_alone)
{
	char uid[POD_UID_LEN + 1];

	ASSERT_TRUE(pod_uid_from_cgroup("/kubepods/burstable/pod" UID, uid), "cgroupfs pod level");
	ASSERT_STREQ(uid, UID, "cgroupfs uid");
	ASSERT_TRUE(!pod_uid_from_cgroup("/system.slice/pod" UID, uid), "not under kubepods");
	ASSERT_STREQ(uid, "", "none");
}

UNIT_MAIN()
