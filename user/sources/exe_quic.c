// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The QUIC stack compiled into an executable (exe_quic.h). libelf reads
 * the section headers and maps only the sections looked at: the build
 * info (~200 bytes), Go's function name table, the symbol tables. */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elf_section.h"
#include "exe_quic.h"

/* The module paths quic-go was published under (renamed in 2022). */
static const char *const quic_go_mods[] = {
	"github.com/quic-go/quic-go", "github.com/lucas-clemente/quic-go",
};
/* Their Debian source packages, as Built-Using names them. */
static const char *const quic_go_debs[] = {
	"golang-github-quic-go-quic-go", "golang-github-lucas-clemente-quic-go",
};

/* C stacks by a function each defines (a defined symbol, so an import of
 * the shared library's is not taken for a static copy), and the Debian
 * source package a binary built with it names in its (Static-)Built-Using. */
static const struct {
	const char *sym, *name, *deb;
} c_stacks[] = {
	{ "ngtcp2_conn_client_new_versioned", "ngtcp2", "ngtcp2" },
	{ "ngtcp2_conn_client_new", "ngtcp2", "ngtcp2" },
	{ "ngtcp2_conn_server_new_versioned", "ngtcp2", "ngtcp2" },
	{ "quiche_conn_new_with_tls", "quiche", "rust-quiche" },
	{ "quiche_connect", "quiche", "rust-quiche" },
	{ "MsQuicOpenVersion", "msquic", "msquic" },
	{ "lsquic_engine_new", "lsquic", "lsquic" },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool uvarint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	uint64_t x = 0;

	for (int s = 0; *p < end && s < 64; s += 7) {
		unsigned char c = *(*p)++;

		x |= (uint64_t)(c & 0x7f) << s;
		if (c < 0x80) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* One tab-separated field of line (ending at '\n' or end), or NULL. */
static const char *field(const char *line, const char *end, int n, size_t *flen)
{
	const char *p = line, *q;

	for (int i = 0; i < n; i++) {
		p = memchr(p, '\t', (size_t)(end - p));
		if (!p)
			return NULL;
		p++;
	}
	for (q = p; q < end && *q != '\t' && *q != '\n'; q++)
		;
	*flen = (size_t)(q - p);
	return p;
}

static bool field_is(const char *line, const char *end, int n, const char *want)
{
	size_t len;
	const char *f = field(line, end, n, &len);

	return f && len == strlen(want) && !memcmp(f, want, len);
}

static void copy_field(const char *f, size_t flen, char *out, size_t olen)
{
	snprintf(out, olen, "%.*s", (int)flen, f);
}

int go_buildinfo_quic(const unsigned char *sec, size_t len, char *ver, size_t vlen)
{
	static const char magic[] = "\xff Go buildinf:";
	const unsigned char *p = sec + 32, *end = sec + len;
	const char *mod, *mend, *line;
	uint64_t n;

	/* 14 bytes of magic, pointer size, flags (2: strings inline), then
	 * at 32 the Go version and the module list, each length-prefixed. */
	if (len < 32 || memcmp(sec, magic, 14) || !(sec[15] & 2))
		return -EINVAL;
	if (!uvarint(&p, end, &n) || n > (uint64_t)(end - p))
		return -EINVAL;
	p += n;
	if (!uvarint(&p, end, &n) || n > (uint64_t)(end - p))
		return -EINVAL;
	mod = (const char *)p;
	mend = mod + n;
	for (line = mod; line < mend;) {
		const char *eol = memchr(line, '\n', (size_t)(mend - line));
		const char *next = eol ? eol + 1 : mend, *f;
		size_t flen;

		eol = eol ? eol : mend;
		for (size_t i = 0; i < N(quic_go_mods); i++) {
			if (!field_is(line, eol, 0, "dep") || !field_is(line, eol, 1, quic_go_mods[i]))
				continue;
			f = field(line, eol, 2, &flen);
			copy_field(f ? f : "", f ? flen : 0, ver, vlen);
			/* A replacement on the next line: "=>\tPATH\tVERSION\tSUM";
			 * a local directory has no version. */
			if (next < mend && !strncmp(next, "=>\t", 3)) {
				const char *nend = memchr(next, '\n', (size_t)(mend - next));

				nend = nend ? nend : mend;
				f = field(next, nend, 2, &flen);
				if (f && flen && f[0] == 'v')
					copy_field(f, flen, ver, vlen);
			}
			return 1;
		}
		line = next;
	}
	return 0;
}

/* A package's Built-Using or Static-Built-Using ("src (= ver), ..."):
 * the version of the first of srcs it names. */
static int built_using(const char *status, const char *pkg, const char *const *srcs,
		       size_t nsrcs, char *ver, size_t vlen)
{
	char line[8192];
	bool ours = false;
	FILE *f = fopen(status, "re");
	int found = 0;

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *v;

		if (!strncmp(line, "Package: ", 9)) {
			line[strcspn(line, "\n")] = 0;
			ours = !strcmp(line + 9, pkg);
			continue;
		}
		if (!ours)
			continue;
		if (!strncmp(line, "Built-Using: ", 13))
			v = line + 13;
		else if (!strncmp(line, "Static-Built-Using: ", 20))
			v = line + 20;
		else
			continue;
		for (size_t i = 0; i < nsrcs; i++) {
			char want[96];
			const char *at;

			snprintf(want, sizeof(want), "%s (= ", srcs[i]);
			/* A whole name: at the start or after ", ". */
			for (at = strstr(v, want); at && at != v && at[-1] != ' ';
			     at = strstr(at + 1, want))
				;
			if (!at)
				continue;
			at += strlen(want);
			snprintf(ver, vlen, "%.*s", (int)strcspn(at, ")"), at);
			found = 1;
			break;
		}
	}
	fclose(f);
	return found;
}

int dpkg_built_using_quic(const char *status, const char *pkg, char *ver, size_t vlen)
{
	return built_using(status, pkg, quic_go_debs, N(quic_go_debs), ver, vlen);
}

int dpkg_owner(const char *infodir, const char *path, char *pkg, size_t len)
{
	char file[PATH_MAX], line[PATH_MAX + 2];
	struct dirent *d;
	int err = -ENOENT;
	DIR *dir = opendir(infodir);

	if (!dir)
		return -ENOENT;
	while (err && (d = readdir(dir))) {
		size_t n = strlen(d->d_name);
		FILE *f;

		if (n < 6 || strcmp(d->d_name + n - 5, ".list"))
			continue;
		snprintf(file, sizeof(file), "%s/%s", infodir, d->d_name);
		f = fopen(file, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (!strcmp(line, path)) {
				/* "caddy.list", "libfoo1:amd64.list": the package. */
				snprintf(pkg, len, "%.*s", (int)strcspn(d->d_name, ":."), d->d_name);
				err = 0;
				break;
			}
		}
		fclose(f);
	}
	closedir(dir);
	return err;
}

/* A C stack's function defined in the symbol table of type t: its index
 * in c_stacks, or -1. */
static int c_stack(Elf *elf, Elf64_Word t)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != t || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			for (size_t k = 0; name && k < N(c_stacks); k++)
				if (!strcmp(name, c_stacks[k].sym))
					return (int)k;
		}
	}
	return -1;
}

/* quic-go in a Go binary whose module list does not say: its package
 * path in the function name table. */
static bool go_functions_name_quic_go(Elf *elf, size_t shstrndx)
{
	GElf_Shdr sh;
	Elf_Data *d = elf_section_data(elf, shstrndx, ".gopclntab", &sh);

	for (size_t i = 0; d && i < N(quic_go_mods); i++) {
		char pkg[64];

		snprintf(pkg, sizeof(pkg), "%s.", quic_go_mods[i]);
		if (memmem(d->d_buf, d->d_size, pkg, strlen(pkg)))
			return true;
	}
	return false;
}

static void go_stack(Elf *elf, size_t shstrndx, const char *path, const char *dpkg,
		     char *name, size_t len, bool *found)
{
	char info[PATH_MAX], status[PATH_MAX];
	char ver[64] = "", pkg[128];
	GElf_Shdr sh;
	Elf_Data *d = elf_section_data(elf, shstrndx, ".go.buildinfo", &sh);
	int r = d ? go_buildinfo_quic(d->d_buf, d->d_size, ver, sizeof(ver)) : -EINVAL;

	if (r == 1) {
		snprintf(name, len, "quic-go %s (statically linked)", ver);
		*found = true;
		return;
	}
	if (!go_functions_name_quic_go(elf, shstrndx))
		return;
	*found = true;
	/* Debian builds Go in GOPATH mode: no module list, but the package
	 * records the quic-go it was built with in its Built-Using. Kept short:
	 * summary's UDP table fits 80 columns. */
	snprintf(info, sizeof(info), "%s/info", dpkg);
	snprintf(status, sizeof(status), "%s/status", dpkg);
	if (path && !dpkg_owner(info, path, pkg, sizeof(pkg)) &&
	    dpkg_built_using_quic(status, pkg, ver, sizeof(ver)) == 1)
		snprintf(name, len, "quic-go %s (statically linked; Debian)", ver);
	else
		snprintf(name, len, "quic-go (statically linked, version not recorded)");
}

/* A C stack linked in: its version where the package that installed the
 * executable records the stack's source in its (Static-)Built-Using. */
static void c_stack_name(int k, const char *path, const char *dpkg, char *name, size_t len)
{
	char info[PATH_MAX], status[PATH_MAX], pkg[128], ver[64];
	const char *src = c_stacks[k].deb;

	snprintf(info, sizeof(info), "%s/info", dpkg);
	snprintf(status, sizeof(status), "%s/status", dpkg);
	if (path && !dpkg_owner(info, path, pkg, sizeof(pkg)) &&
	    built_using(status, pkg, &src, 1, ver, sizeof(ver)) == 1)
		snprintf(name, len, "%s %s (statically linked; Debian)", c_stacks[k].name, ver);
	else
		snprintf(name, len, "%s (statically linked)", c_stacks[k].name);
}

int exe_quic_stack_db(int fd, const char *path, const char *dpkg, char *name, size_t len)
{
	bool found = false;
	size_t shstrndx;
	int k;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOENT;
	if (elf_kind(elf) == ELF_K_ELF && !elf_getshdrstrndx(elf, &shstrndx)) {
		go_stack(elf, shstrndx, path, dpkg, name, len, &found);
		if (!found && ((k = c_stack(elf, SHT_SYMTAB)) >= 0 ||
			       (k = c_stack(elf, SHT_DYNSYM)) >= 0)) {
			c_stack_name(k, path, dpkg, name, len);
			found = true;
		}
	}
	elf_end(elf);
	return found ? 0 : -ENOENT;
}

int exe_quic_stack(int fd, const char *path, char *name, size_t len)
{
	return exe_quic_stack_db(fd, path, "/var/lib/dpkg", name, len);
}
