# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# connscope: one binary with its BPF objects embedded through bpftool skeletons.
#   make            build .output/connscope (and ./connscope, a link to it)
#   make demo       install what is missing, build, run the built-in workload attached
#   make test       install what is missing, build, run every test (unit tests
#                   also under ASan+UBSan, fuzz targets briefly)
#   make test-kernels  only the smoke tests inside Debian's kernels, in QEMU
#                   (KERNEL_CACHE=DIR: where the kernel packages are kept)
#   make test-asan  the sanitizer build of the unit tests alone
#   make fuzz       every libFuzzer target for FUZZ_SECONDS (600) each
#   make soak       an hour attached + an hour of exporter --all, RSS flat?
#   make vmlinux    regenerate vmlinux/$(ARCH)/vmlinux.h from this kernel's BTF
#   make install    PREFIX=/usr/local DESTDIR= (binary, man pages, systemd unit,
#                   bash completion, dashboards, docs); make uninstall
#   make image      the container image, built by podman without a registry, as
#                   an OCI archive: .output/connscope-image.oci.tar
OUTPUT   := .output
CLANG    ?= clang
BPFTOOL  ?= bpftool
CC       ?= cc
PREFIX   ?= /usr/local
ARCH     := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/;s/ppc64le/powerpc/;s/s390x/s390/')
VMLINUX_DIR := vmlinux/$(ARCH)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS   ?= -g -O2
CFLAGS   += -Wall -Wextra -Wno-unused-parameter -Werror -std=gnu11 -MMD -MP -I$(OUTPUT) $(USER_INC)
LDLIBS   := -lbpf -ldw -lelf -lz -lmicrohttpd -ljansson -lpthread
BPF_CFLAGS := -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUTPUT) -I$(VMLINUX_DIR) -Ibpf -Iinclude/abi

# Debian 12 packages: what the build needs, and what the tests drive.
BUILD_PKGS := clang llvm make gcc libc6-dev libbpf-dev bpftool libelf-dev libdw-dev libmicrohttpd-dev libjansson-dev zlib1g-dev pkg-config
TEST_PKGS  := python3 binutils iproute2 jq procps util-linux bsdutils lsof strace chromium nginx apache2-utils prometheus \
	      ngtcp2-server ngtcp2-client openssl libclang-rt-14-dev \
	      qemu-system-x86 busybox-static xz-utils curl systemd
# The doctor's vocabulary is checked against the real programs (97_vocabulary).
TEST_PKGS  += redis-server redis-tools postgresql postgresql-contrib
# A pre-forked server traced by its parent (41_prefork_children), and the
# doctor in its words, KeepAlive Off and On (97_apache).
TEST_PKGS  += apache2
# The container image and real containers (make image, 88_image): podman
# with runc (crun refuses this machine's hybrid cgroups).
IMAGE_PKGS := podman
TEST_PKGS  += $(IMAGE_PKGS) runc
# The DaemonSet's pod run by podman kube play (its infra container is
# catatonit's), made from the manifest with python3-yaml (89_daemonset); the
# schema check's npm packages run on the machine's Node.js and npm.
TEST_PKGS  += catatonit python3-yaml
# An HTTP/3 gateway on quic-go (Go, statically linked) under gtlsclient
# (82_caddy_http3).
TEST_PKGS  += caddy
# Real clients of two runtimes: Node.js's http.Agent and Python's requests
# (urllib3 underneath), churning and pooled (97_clients).
TEST_PKGS  += nodejs python3-requests python3-urllib3
# HAProxy in front of an HTTP/1.1 backend, its server side closed after
# every response or reused (97_haproxy).
TEST_PKGS  += haproxy
# A Java client run from source with the JDK's HttpURLConnection, churning
# (-Dhttp.keepAlive=false) and pooled (97_java).
TEST_PKGS  += openjdk-17-jdk-headless

BPF_UNITS  := tcpstate fdtrack quicwire ngtcp2
# One man page a command (the rule is beside install).
MAN_CMDS  := summary attach doctor run diff fdleak exporter demo
MAN_PAGES := $(patsubst %,$(OUTPUT)/man/connscope-%.8,$(MAN_CMDS))
BPF_OBJS   := $(patsubst %,$(OUTPUT)/bpf/%.bpf.o,$(BPF_UNITS))
SKELS      := $(patsubst %,$(OUTPUT)/%.skel.h,$(BPF_UNITS))
# One folder a layer (docs/how-it-works.md, "Architecture"): lib <- books <- sources, render <- cmd.
USER_LAYERS := lib books sources render render/html cmd
USER_INC   := $(patsubst %,-Iuser/%,$(USER_LAYERS)) -Iinclude/abi
USER_SRCS  := $(sort $(foreach d,$(USER_LAYERS),$(wildcard user/$(d)/*.c)))
USER_OBJS  := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
# Everything but main(): linked into the root-free unit tests too.
LIB_OBJS   := $(filter-out $(OUTPUT)/user/cmd/main.o,$(USER_OBJS))
UNIT_SRCS  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS  := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
FIXTURE_SRCS := $(sort $(wildcard tests/fixtures/*.c))
FIXTURE_BINS := $(patsubst tests/fixtures/%.c,$(OUTPUT)/fixtures/%,$(FIXTURE_SRCS))
# The unwinding fixture twice: as distributions build (no frame pointers,
# .eh_frame kept) and with frame pointers.
ifneq ($(wildcard tests/fixtures/unwindfix.c),)
FIXTURE_BINS += $(OUTPUT)/fixtures/unwindfix_nofp $(OUTPUT)/fixtures/unwindfix_fp \
		$(OUTPUT)/fixtures/unwindfix_stripped
endif
# libFuzzer targets (clang's runtime, libclang-rt-14-dev): tests/fuzz/*.c.
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
# The leaking fixture the same two ways.
ifneq ($(wildcard tests/fixtures/leakfix.c),)
FIXTURE_BINS += $(OUTPUT)/fixtures/leakfix_nofp $(OUTPUT)/fixtures/leakfix_fp
endif

# The unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer:
# every user object rebuilt instrumented in $(OUTPUT)/asan, run by
# tests/run.sh (as asan:test_*) after the plain ones.
SAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ASAN_OBJS  := $(patsubst $(OUTPUT)/user/%.o,$(OUTPUT)/asan/user/%.o,$(LIB_OBJS))
ASAN_BINS  := $(patsubst tests/unit/%.c,$(OUTPUT)/asan/tests/%,$(UNIT_SRCS))

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test-deps demo image test test-build test-kernels unit vmlinux install uninstall clean bench test-asan fuzz soak

all: $(OUTPUT)/connscope connscope $(MAN_PAGES)

connscope: $(OUTPUT)/connscope
	$(Q)ln -sf $(OUTPUT)/connscope $@

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/user $(OUTPUT)/tests $(OUTPUT)/fixtures:
	$(Q)mkdir -p $@

# BPF: clang -> bpftool gen object (static link, BTF dedup) -> skeleton.
# tcpstate uses atomics that return the old value (BPF ISA v3, Linux 5.12+;
# its oldest target, Debian 12's 6.1, has them): the socket's programs and
# the agent's birth pass race for one word of the socket's storage.
$(OUTPUT)/bpf/tcpstate.tmp.o: BPF_CPU := -mcpu=v3
$(OUTPUT)/bpf/%.tmp.o: bpf/%.bpf.c $(VMLINUX_DIR)/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_CPU) -MMD -MP -c $< -o $@

$(OUTPUT)/bpf/%.bpf.o: $(OUTPUT)/bpf/%.tmp.o
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

$(OUTPUT)/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# User objects include the skeletons, so build those first.
# Each layer sees only the headers of the layers below it, so a wrong-way
# include fails the build: books know nothing of where data comes from or how
# it is shown; renderers never reach a source (the kernel, /proc, /sys).
LAYER_INC_lib     := lib
LAYER_INC_books   := books lib
LAYER_INC_sources := sources books lib
LAYER_INC_render  := render render/html books lib
LAYER_INC_cmd     := $(USER_LAYERS)
layer_of = $(if $(filter user/render/html/%,$(1)),render,$(word 2,$(subst /, ,$(1))))
layer_inc = $(patsubst %,-Iuser/%,$(LAYER_INC_$(call layer_of,$(1)))) -Iinclude/abi

$(OUTPUT)/user/%.o: user/%.c $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(filter-out $(USER_INC),$(CFLAGS)) $(call layer_inc,$<) -c $< -o $@

$(OUTPUT)/connscope: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_OBJS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit $< $(LIB_OBJS) $(LDLIBS) -o $@

$(OUTPUT)/asan/user/%.o: user/%.c $(SKELS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(filter-out $(USER_INC),$(CFLAGS)) $(call layer_inc,$<) $(SAN_FLAGS) -c $< -o $@

$(OUTPUT)/asan/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(ASAN_OBJS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -Itests/unit $< $(ASAN_OBJS) $(LDLIBS) -o $@

$(OUTPUT)/fixtures/%: tests/fixtures/%.c | $(OUTPUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -lpthread -o $@

# tcpfix is built from its parts in tests/fixtures/tcpfix/.
$(OUTPUT)/fixtures/tcpfix: tests/fixtures/tcpfix.c $(wildcard tests/fixtures/tcpfix/*) | $(OUTPUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(wildcard tests/fixtures/tcpfix/*.c) -o $@

# btfhide edits BTF files through libbpf.
$(OUTPUT)/fixtures/btfhide: tests/fixtures/btfhide.c | $(OUTPUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -lbpf -o $@

$(OUTPUT)/fixtures/unwindfix_nofp: tests/fixtures/unwindfix.c | $(OUTPUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fomit-frame-pointer $< -o $@

$(OUTPUT)/fixtures/unwindfix_fp: tests/fixtures/unwindfix.c | $(OUTPUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fno-omit-frame-pointer $< -o $@

# unwindfix_nofp without .symtab or DWARF (.eh_frame and .dynsym stay): a
# distribution binary without its debug package.
$(OUTPUT)/fixtures/unwindfix_stripped: $(OUTPUT)/fixtures/unwindfix_nofp
	$(call msg,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<

$(OUTPUT)/fuzz/%: tests/fuzz/%.c include/abi/quic_parse.h
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(OUTPUT)/fuzz
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-Iinclude/abi $< -o $@

# Fuzz targets of user-space parsers link the files they test, built
# with the same sanitizers (clang, like the target).
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	       -Iuser/sources -Iuser/books -Iuser/lib -Iinclude/abi -Ibpf -I$(OUTPUT) -Itests/fuzz
FUZZ_FDINV_SRCS := user/sources/fdinv.c user/sources/fdinv_sockets.c user/sources/fdinv_limits.c \
		   user/sources/fdinv_classify.c user/sources/procfs.c user/books/inode_owners.c \
		   user/lib/hashmap.c user/lib/grow.c
# Every file it links is a prerequisite: netns.c's messages came to need
# text_wrap.c, and a link not redone where only netns.c changed hid it.
FUZZ_SOCKDIAG_SRCS := user/sources/sockdiag.c user/sources/netns.c user/sources/procfs.c \
		      user/books/inode_owners.c user/lib/hashmap.c user/lib/text_wrap.c
$(OUTPUT)/fuzz/fuzz_sockdiag: tests/fuzz/fuzz_sockdiag.c user/sources/sockdiag.h $(FUZZ_SOCKDIAG_SRCS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(OUTPUT)/fuzz
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(FUZZ_SOCKDIAG_SRCS) -o $@

$(OUTPUT)/fuzz/fuzz_procfs: tests/fuzz/fuzz_procfs.c tests/fuzz/fakeproc.h user/sources/netlimits.c $(FUZZ_FDINV_SRCS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(OUTPUT)/fuzz
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< user/sources/netlimits.c $(FUZZ_FDINV_SRCS) -o $@

$(OUTPUT)/fuzz/fuzz_fdinv: tests/fuzz/fuzz_fdinv.c tests/fuzz/fakeproc.h $(FUZZ_FDINV_SRCS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(OUTPUT)/fuzz
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(FUZZ_FDINV_SRCS) -o $@

$(OUTPUT)/fixtures/leakfix_nofp: tests/fixtures/leakfix.c | $(OUTPUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fomit-frame-pointer $< -o $@

$(OUTPUT)/fixtures/leakfix_fp: tests/fixtures/leakfix.c | $(OUTPUT)/fixtures
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fno-omit-frame-pointer $< -o $@

# Install only what is missing; refresh the package lists once if needed.
# A policy-rc.d that says no keeps packages like nginx from starting their
# system service: the tests start their own, on loopback.
deps:
	$(Q)missing=""; for p in $(BUILD_PKGS) $(EXTRA_PKGS); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		guard=; if [ ! -e /usr/sbin/policy-rc.d ]; then \
			printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; \
			chmod +x /usr/sbin/policy-rc.d; guard=1; fi; \
		apt-get install -y --no-install-recommends $$missing || \
		{ apt-get update && apt-get install -y --no-install-recommends $$missing; }; \
		rc=$$?; [ -n "$$guard" ] && rm -f /usr/sbin/policy-rc.d; exit $$rc; \
	fi

test-deps:
	$(Q)$(MAKE) --no-print-directory deps EXTRA_PKGS="$(TEST_PKGS)"

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(OUTPUT)/connscope demo

unit: $(UNIT_BINS)

# The container image (dist/container/: FROM scratch with the binary and
# the libraries it loads, staged from this machine; no registry), written
# as an OCI archive; `podman load -i` it. docs/image.md says how to run it.
IMAGE_ARCHIVE := $(OUTPUT)/connscope-image.oci.tar
image:
	$(Q)$(MAKE) --no-print-directory deps EXTRA_PKGS="$(IMAGE_PKGS)"
	$(Q)$(MAKE) --no-print-directory $(IMAGE_ARCHIVE)

$(IMAGE_ARCHIVE): $(OUTPUT)/connscope dist/container/Containerfile dist/container/mkimage.sh LICENSE
	$(call msg,IMAGE,$@)
	$(Q)dist/container/mkimage.sh $(OUTPUT)/connscope $@

# The build make test starts with runs on every core (-j$(TEST_JOBS)), unless
# make was given its own -j: a plain `make test` built one file at a time.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test: test-deps
	$(Q)$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(TEST_JOBS)) test-build
	$(Q)tests/run.sh

# Everything make test runs, built without installing or running anything.
# (A recipe, not prerequisites: INITRAMFS is defined further down.)
test-build:
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS) $(FIXTURE_BINS) $(FUZZ_BINS) $(INITRAMFS) \
		$(ASAN_BINS)

# Every libFuzzer target for FUZZ_SECONDS each (default 10 minutes):
# the QUIC parser, sock_diag replies, /proc files, fd tables.
FUZZ_SECONDS ?= 600
fuzz: $(FUZZ_BINS)
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=-1 TEST_TIMEOUT=$$(($(FUZZ_SECONDS) * 4 + 120)) \
		tests/run.sh _fuzz

# Not in make test: an hour attached to churn, an hour of exporter --all
# with processes coming and going, RSS/maps/series sampled every minute
# (SOAK_MINUTES, SOAK_SAMPLE_S to shorten). Result in .output/soak.json.
soak: test-deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/soak/run.sh

# The sanitizer build of the unit tests alone (make test runs them too).
test-asan: $(ASAN_BINS)
	$(Q)tests/run.sh asan:

# The kernel guests (tests/integration/95_kernels.sh, part of make test):
# Debian's kernel packages, fetched with apt-get into $(KERNEL_CACHE) once,
# booted in QEMU with this initramfs (tests/kernels/mkinitramfs.sh).
KERNEL_CACHE ?= $(OUTPUT)/kernels
export KERNEL_CACHE
INITRAMFS := $(OUTPUT)/initramfs.cpio.gz
$(INITRAMFS): $(OUTPUT)/connscope $(FIXTURE_BINS) tests/kernels/mkinitramfs.sh tests/kernels/init \
		tests/kernels/guest.sh tests/lib.sh tests/fixture.sh
	$(call msg,CPIO,$@)
	$(Q)tests/kernels/mkinitramfs.sh $@

test-kernels: test-deps
	$(Q)$(MAKE) --no-print-directory all $(FIXTURE_BINS) $(INITRAMFS)
	$(Q)tests/run.sh 95_kernels

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX_DIR)/vmlinux.h
	{ uname -r; echo "generated $$(date -u +%F) by: bpftool btf dump file /sys/kernel/btf/vmlinux format c"; } > $(VMLINUX_DIR)/KERNEL_VERSION

# One man page a command, made from its --help (dist/man/mkman.sh), so the
# synopsis, options and examples of both cannot disagree; connscope(8) is
# docs/connscope.8.
$(OUTPUT)/man/connscope-%.8: $(OUTPUT)/connscope dist/man/mkman.sh
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)dist/man/mkman.sh $(OUTPUT)/connscope $* "$$($(OUTPUT)/connscope --version | cut -d' ' -f2)" > $@

# The binary, its man pages, and the exporter's systemd unit (in the unit
# directory of PREFIX; systemd reads /usr/local/lib/systemd/system too).
UNITDIR ?= $(PREFIX)/lib/systemd/system
DATADIR ?= $(PREFIX)/share/connscope
DOCDIR  ?= $(PREFIX)/share/doc/connscope
install: $(OUTPUT)/connscope $(MAN_PAGES)
	install -D -m 0755 $(OUTPUT)/connscope $(DESTDIR)$(PREFIX)/sbin/connscope
	install -d $(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(UNITDIR)
	sed 's|@UNITDIR@|$(UNITDIR)|g' docs/connscope.8 > $(DESTDIR)$(PREFIX)/share/man/man8/connscope.8
	install -m 0644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man8/
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' dist/systemd/connscope-exporter.service.in \
		> $(DESTDIR)$(UNITDIR)/connscope-exporter.service
	chmod 0644 $(DESTDIR)$(PREFIX)/share/man/man8/connscope.8 $(DESTDIR)$(UNITDIR)/connscope-exporter.service
	install -D -m 0644 dist/bash-completion/connscope \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/connscope
	install -d $(DESTDIR)$(DATADIR)/dashboards $(DESTDIR)$(DOCDIR)
	install -m 0644 dashboards/*.json $(DESTDIR)$(DATADIR)/dashboards/
	install -m 0644 README.md LICENSE LICENSES/GPL-2.0 LICENSES/BSD-3-Clause docs/*.md \
		$(DESTDIR)$(DOCDIR)/

# Every file install puts in place, and the directories of connscope's own.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/sbin/connscope \
		$(DESTDIR)$(PREFIX)/share/man/man8/connscope.8 \
		$(patsubst %,$(DESTDIR)$(PREFIX)/share/man/man8/connscope-%.8,$(MAN_CMDS)) \
		$(DESTDIR)$(UNITDIR)/connscope-exporter.service \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/connscope
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)

clean:
	rm -rf $(OUTPUT) connscope

# Benchmarks, not part of `make test`: tests/bench/run.sh runs every
# comparison side by side, prints the ratio table and writes
# .output/bench.json. hyperfine, perf, valgrind (callgrind) and libbpf-tools
# (tcpstates, tcplife) are the tools it measures with or against.
BENCH_PKGS := hyperfine libbpf-tools linux-perf valgrind time lsof iproute2 jq procps uthash-dev
BENCH_BINS := $(OUTPUT)/bench/loadgen $(OUTPUT)/bench/aggbench $(OUTPUT)/bench/aggbench-uthash \
	      $(OUTPUT)/bench/hashbench $(OUTPUT)/bench/sockops_ab

$(OUTPUT)/bench:
	$(Q)mkdir -p $@

$(OUTPUT)/bench/loadgen: tests/bench/loadgen.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@

# aggbench's mem command, a file of its own (aggbench.c passed 800 lines).
$(OUTPUT)/bench/aggbench_mem.o: tests/bench/aggbench_mem.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUTPUT)/bench/aggbench: tests/bench/aggbench.c $(OUTPUT)/bench/aggbench_mem.o $(LIB_OBJS) \
		| $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(OUTPUT)/bench/aggbench_mem.o $(LIB_OBJS) $(LDLIBS) -o $@

# The same aggbench with the hmap API backed by uthash instead of
# user/lib/hashmap.o (only the benchmark: docs/how-it-works.md, "Architecture", says why).
$(OUTPUT)/bench/aggbench-uthash: tests/bench/aggbench.c tests/bench/hashmap_uthash.c \
		$(OUTPUT)/bench/aggbench_mem.o \
		$(filter-out $(OUTPUT)/user/lib/hashmap.o,$(LIB_OBJS)) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# Our hash table against uthash on one 4-tuple table alone (a microbenchmark).
$(OUTPUT)/bench/hashbench: tests/bench/hashbench.c $(OUTPUT)/user/lib/hashmap.o | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(OUTPUT)/user/lib/hashmap.o -o $@

# The cgroup-scoped design's experiment (tests/bench/sockops_ab.sh, issue
# #23): a BPF object of its own and its loader; not part of connscope.
$(OUTPUT)/bench/sockops_ab.tmp.o: tests/bench/sockops_ab.bpf.c $(VMLINUX_DIR)/vmlinux.h | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(OUTPUT)/bench/sockops_ab.bpf.o: $(OUTPUT)/bench/sockops_ab.tmp.o
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

$(OUTPUT)/bench/sockops_ab.skel.h: $(OUTPUT)/bench/sockops_ab.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sockops_ab_bpf > $@

$(OUTPUT)/bench/sockops_ab: tests/bench/sockops_ab.c $(OUTPUT)/bench/sockops_ab.skel.h | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(OUTPUT)/bench $< -lbpf -lelf -lz -o $@

bench:
	$(Q)$(MAKE) --no-print-directory deps EXTRA_PKGS="$(TEST_PKGS) $(BENCH_PKGS)"
	$(Q)$(MAKE) --no-print-directory all $(BENCH_BINS)
	$(Q)tests/bench/run.sh

-include $(wildcard $(OUTPUT)/bench/*.d)

-include $(wildcard $(OUTPUT)/bpf/*.d $(foreach d,$(USER_LAYERS),$(OUTPUT)/user/$(d)/*.d) $(OUTPUT)/tests/*.d $(OUTPUT)/fixtures/*.d)
-include $(wildcard $(foreach d,$(USER_LAYERS),$(OUTPUT)/asan/user/$(d)/*.d) $(OUTPUT)/asan/tests/*.d)
