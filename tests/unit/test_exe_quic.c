/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The QUIC stack compiled into an executable: a Go binary's build info
 * (quic-go in its module list, a replacement, GOPATH mode's list without
 * modules as Debian builds it), Debian's Built-Using and file lists, and a
 * C stack found among the functions this test binary defines. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "exe_quic.h"
#include "unit.h"

/* A C stack linked in: this binary defines one of ngtcp2's functions. */
__attribute__((used, noinline)) int ngtcp2_conn_client_new_versioned(void)
{
	return 0;
}

/* .go.buildinfo in Go 1.18's layout: magic, pointer size 8, flags 2
 * (strings inline), padding to 32, then the version and the module list
 * (16-byte sentinels around it), each after its length (a varint). */
static size_t buildinfo(unsigned char *out, const char *mods)
{
	static const char sentinel[17] = "0123456789abcdef";
	const char *ver = "go1.21.5";
	size_t n = 0, mlen = strlen(mods) + 32;

	memset(out, 0, 32);
	memcpy(out, "\xff Go buildinf:", 14);
	out[14] = 8;
	out[15] = 2;
	n = 32;
	out[n++] = (unsigned char)strlen(ver);
	memcpy(out + n, ver, strlen(ver));
	n += strlen(ver);
	/* The length as a varint: 7 bits a byte, the high bit for more. */
	for (size_t v = mlen; ; v >>= 7) {
		out[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		if (v <= 0x7f)
			break;
	}
	memcpy(out + n, sentinel, 16);
	memcpy(out + n + 16, mods, strlen(mods));
	memcpy(out + n + 16 + strlen(mods), sentinel, 16);
	return n + mlen;
}

TEST(go_module_list_names_quic_go)
{
	unsigned char sec[512];
	char ver[64];
	size_t n;

	n = buildinfo(sec, "path\texample.com/gw\nmod\texample.com/gw\t(devel)\t\n"
			   "dep\tgithub.com/quic-go/qpack\tv0.4.0\th1:x=\n"
			   "dep\tgithub.com/quic-go/quic-go\tv0.40.1\th1:y=\n");
	ASSERT_EQ(go_buildinfo_quic(sec, n, ver, sizeof(ver)), 1, "found");
	ASSERT_STREQ(ver, "v0.40.1", "version");
	/* The module's old path, replaced by a fork with a version. */
	n = buildinfo(sec, "path\tx\ndep\tgithub.com/lucas-clemente/quic-go\tv0.29.0\th1:z=\n"
			   "=>\tgithub.com/fork/quic-go\tv0.29.1-fix\th1:w=\n");
	ASSERT_EQ(go_buildinfo_quic(sec, n, ver, sizeof(ver)), 1, "old_path");
	ASSERT_STREQ(ver, "v0.29.1-fix", "replacement_version");
}

TEST(go_without_quic_go_or_module_list)
{
	unsigned char sec[512];
	char ver[64] = "";
	size_t n;

	n = buildinfo(sec, "path\texample.com/x\ndep\tgithub.com/quic-go/qpack\tv0.4.0\th1:x=\n");
	ASSERT_EQ(go_buildinfo_quic(sec, n, ver, sizeof(ver)), 0, "qpack_is_not_quic_go");
	/* Debian's caddy: GOPATH mode, no dep lines at all. */
	n = buildinfo(sec, "path\tgithub.com/caddyserver/caddy/v2/cmd/caddy\n"
			   "build\t-compiler=gc\nbuild\tCGO_ENABLED=1\n");
	ASSERT_EQ(go_buildinfo_quic(sec, n, ver, sizeof(ver)), 0, "gopath_mode");
	ASSERT_EQ(go_buildinfo_quic(sec, 20, ver, sizeof(ver)), -EINVAL, "short");
	sec[1] = 'X';
	ASSERT_EQ(go_buildinfo_quic(sec, n, ver, sizeof(ver)), -EINVAL, "bad_magic");
	sec[1] = ' ';
	sec[32 + 9] = 0xff;	/* the module list longer than the section */
	sec[32 + 10] = 0x7f;
	ASSERT_EQ(go_buildinfo_quic(sec, n, ver, sizeof(ver)), -EINVAL, "truncated");
}

TEST(debian_built_using_names_quic_go)
{
	char dir[4200], status[4300], info[4300], pkg[64], ver[64];

	snprintf(dir, sizeof(dir), "%s/dpkg", unit_data_dir("dpkg/status"));
	snprintf(status, sizeof(status), "%s/status", dir);
	snprintf(info, sizeof(info), "%s/info", dir);
	ASSERT_EQ(dpkg_owner(info, "/usr/bin/caddy", pkg, sizeof(pkg)), 0, "owner");
	ASSERT_STREQ(pkg, "caddy", "owner_name");
	ASSERT_EQ(dpkg_owner(info, "/usr/bin/curl", pkg, sizeof(pkg)), 0, "owner_with_arch");
	ASSERT_STREQ(pkg, "curl", "arch_dropped");
	ASSERT_EQ(dpkg_owner(info, "/usr/bin", pkg, sizeof(pkg)) == 0, 1, "dirs_listed_too");
	ASSERT_EQ(dpkg_owner(info, "/opt/gw", pkg, sizeof(pkg)), -ENOENT, "not_packaged");
	ASSERT_EQ(dpkg_built_using_quic(status, "caddy", ver, sizeof(ver)), 1, "caddy");
	ASSERT_STREQ(ver, "0.29.0-1", "caddy_version");
	ASSERT_EQ(dpkg_built_using_quic(status, "other", ver, sizeof(ver)), 1, "new_path");
	ASSERT_STREQ(ver, "0.40.1-1", "new_path_version");
	ASSERT_EQ(dpkg_built_using_quic(status, "curl", ver, sizeof(ver)), 0, "none");
	ASSERT_EQ(dpkg_built_using_quic("/nonexistent/status", "caddy", ver, sizeof(ver)),
		  -ENOENT, "no_database");
}

TEST(c_stack_linked_in_is_named)
{
	char name[64] = "", dir[4200];
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	ASSERT_TRUE(fd >= 0, "open_self");
	ASSERT_EQ(exe_quic_stack(fd, NULL, name, sizeof(name)), 0, "found");
	ASSERT_STREQ(name, "ngtcp2 (statically linked)", "named");
	close(fd);
	ASSERT_EQ(ngtcp2_conn_client_new_versioned(), 0, "defined");
	/* Installed by a package whose Static-Built-Using names ngtcp2's
	 * source (after libngtcp2, a name that ends the same): its version. */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	snprintf(dir, sizeof(dir), "%s/dpkg", unit_data_dir("dpkg/status"));
	ASSERT_EQ(exe_quic_stack_db(fd, "/usr/bin/quicgw", dir, name, sizeof(name)), 0,
		  "found_with_dpkg");
	ASSERT_STREQ(name, "ngtcp2 1.2.0-1 (statically linked; Debian)", "debian_version");
	ASSERT_EQ(exe_quic_stack_db(fd, "/opt/gw", dir, name, sizeof(name)), 0, "not_packaged");
	ASSERT_STREQ(name, "ngtcp2 (statically linked)", "no_version");
	close(fd);
	/* Not ELF: nothing. */
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ASSERT_EQ(exe_quic_stack(fd, NULL, name, sizeof(name)), -ENOENT, "not_elf");
	close(fd);
}

UNIT_MAIN()
