# SPDX-License-Identifier: GPL-2.0-only
#
# make                  build against the running kernel (or, on a machine
#                       without its headers, the newest installed headers)
# make KVER=VERSION     build against /lib/modules/VERSION/build
# make KDIR=DIR         build against a kernel build tree
# make kmod KVER=V      build for kernel V in build/V/ (what make check and
#                       tests/vm-run use); kernels whose headers live in the
#                       sid chroot of scripts/setup-kernels.sh build there
# make lint             checkpatch.pl --strict and sparse (C=2), the
#                       module and tools/fastlinearctl with -Werror,
#                       shellcheck of tools/fastlinear-queue if installed
# make check            run the test suite in QEMU guests (virtme-ng), on the
#                       kernel's dm core and on a pre-2df8b310bcfe one
#                       (DM_CORE=stock|nofix for one, TESTS="group/name ...")
# make check DEBUG_KERNEL=1
#                       the same on a 6.1 kernel with KASAN, lockdep,
#                       kmemleak and DEBUG_ATOMIC_SLEEP, built from Debian's
#                       source first (tests/lib/build-kernel.sh debug; 28 min
#                       on 2 CPUs) and only on its own dm core
# make check-host       run the test suite on this host (root, real kernel)
# make check-lvm-long   fastlinearctl's randomized loops at full length
#                       (FL_LVM_LONG=1: tests/lvm/signals, fault-injection)
# make install          install to /lib/modules/KVER/updates and run depmod,
#                       and the tools (tools/Makefile: fastlinearctl, its
#                       config, udev rule and systemd unit)
# make uninstall        remove them again
# make tools            build tools/fastlinearctl (libdevmapper)
# make dkms-install     add, build and install with DKMS for KVER
# make dkms-uninstall   remove it from DKMS
# make check-patched    dm-linear and dm-stripe on dm-mod rebuilt with
#                       upstream/'s series (6.1 and 7.2): counts, blkcg subset
# make check-install    both installs, each loaded by modprobe in a guest
# make check-kernels    build and the blkcg tests on each kernel that
#                       scripts/setup-kernels.sh installed (KERNELS="V ...")
# make check-cgroup-kernel
#                       the blkcg tests (io.latency and io.prio.class too) on
#                       a 6.1 kernel with every blk-cgroup policy, built first
#                       if need be (tests/lib/build-kernel.sh cgroup), on its
#                       own and the nofix dm core
# make durations        tests/durations from the test logs in tests/out (the
#                       longest time of each test): how make check deals tests
#                       out to its guests
# make bench            raw vs dm-linear vs fastlinear in a guest (bench/vm-bench;
#                       BENCH_ARGS="--reps 5 ..." for bench/run), bench/out/
# make bench-short      its short mode: a few cells, fails on wrong blkg counts
# make bench-cgroup     the cgroup experiments of bench/experiments/ (bench/cgroup-exp
#                       in a guest: io.max, iocost weights, writeback under wbps),
#                       plots and CSVs to bench/cgroup-exp-results/; part of make bench
# make demo             what the project does, in one command (bench/demo: builds,
#                       then runs bench/demo-run here as root if modules load, else in
#                       a guest under QEMU's instruction counter)
# make bench-cost       cost per I/O in virtual ns (QEMU icount: 1 ns per guest instruction), bench/vm-cost;
#                       DM_CORE=stock|nofix|patched, COST_ARGS="--reps 5 ..."; bench-cost-short: its
#                       2-cell gate; bench-cost-gate: that on every kernel (CI)

# Default kernel: the running one if its headers are here, else the one
# Debian's linux-headers-amd64 points at (the test kernel), else the newest.
KVER ?= $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then uname -r; \
	else v=$$(dpkg-query -W -f='$${Depends}' linux-headers-amd64 2>/dev/null | \
	sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p'); \
	if [ -n "$$v" ] && [ -d /lib/modules/$$v/build ]; then echo $$v; \
	else ls -1 /lib/modules | sort -V | while read v; do \
	[ -d /lib/modules/$$v/build ] && echo $$v; done | tail -1; fi; fi)
ifeq ($(DEBUG_KERNEL),1)
KVER := $(shell tests/lib/build-kernel.sh debug --kver)
DM_CORE ?= stock
# KASAN and lockdep under emulation: several times slower
export FL_VM_TIMEOUT ?= 14400
export FL_TIMEOUT_SCALE ?= 5
# one guest per CPU, the tests dealt out among them
export FL_SHARDS ?= auto
endif
KDIR ?= /lib/modules/$(KVER)/build
comma := ,
# Headers that need a newer compiler than the host's (7.2) are only in
# the sid chroot: build there.
SID_ROOT ?= /var/lib/dm-fastlinear/sid
SYSROOT ?= $(if $(wildcard $(KDIR)/Makefile),,$(if $(wildcard $(SID_ROOT)$(KDIR)/Makefile),$(SID_ROOT)))
BUILD_DIR := build/$(KVER)
VERSION := $(shell sed -n 's/^MODULE_VERSION("\(.*\)");/\1/p' dm-fastlinear.c)
# -Werror (module: FASTLINEAR_WERROR for Kbuild; tools: WERROR): off in
# what users build (make, make install, make tools, DKMS, make demo), on in
# the test, CI and lint targets (WERROR=0 on the command line turns it off)
WERROR ?= 0
check check-host check-lvm-long check-kernels check-patched check-cgroup-kernel bench-short \
	bench-cost-short bench-cost-gate lint: export WERROR = 1
# (not exported: the installs it checks are a user's)
check-install: WERROR = 1
CHECKPATCH ?= $(firstword $(wildcard /usr/src/linux-source-*/scripts/checkpatch.pl))
SRCS := dm-fastlinear.c fastlinear-compat.h

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) FASTLINEAR_WERROR=$(WERROR) modules

# A copy of the sources per kernel, so that builds for several kernels do
# not share objects (6.1's kbuild has no separate output directory for
# external modules).
kmod: $(if $(filter 1,$(DEBUG_KERNEL)),debug-kernel)
	mkdir -p $(BUILD_DIR)
	cp -p Kbuild $(SRCS) $(BUILD_DIR)/
	$(if $(SYSROOT),scripts/chroot-make $(SYSROOT) $(CURDIR),$(MAKE)) \
		-C $(KDIR) M=$(CURDIR)/$(BUILD_DIR) FASTLINEAR_WERROR=$(WERROR) modules

tools:
	$(MAKE) -C tools WERROR=$(WERROR)

debug-kernel:
	tests/lib/build-kernel.sh debug

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools clean
	rm -rf tests/out build

lint:
	@test -n "$(CHECKPATCH)" || { echo "checkpatch.pl not found: run scripts/setup.sh"; exit 1; }
	$(CHECKPATCH) --strict --no-tree --show-types -f $(SRCS)
	@grep -q '^PACKAGE_VERSION="$(VERSION)"$$' dkms.conf || \
		{ echo "dkms.conf: PACKAGE_VERSION is not MODULE_VERSION $(VERSION)"; exit 1; }
	@grep -q '\.version = {$(subst .,$(comma) ,$(VERSION))},' dm-fastlinear.c || \
		{ echo "dm-fastlinear.c: target .version is not MODULE_VERSION $(VERSION)"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 CF="-Wsparse-error" FASTLINEAR_WERROR=1 modules
	$(MAKE) -C tools WERROR=1
	@if command -v shellcheck >/dev/null; then \
		echo "shellcheck tools/fastlinear-queue"; shellcheck -s sh tools/fastlinear-queue; \
	else echo "shellcheck not installed: tools/fastlinear-queue not checked"; fi

check: kmod tools
	mkdir -p tests/out
	$(if $(DM_CORE),DM_CORES="$(DM_CORE)") FL_SHARDS=$${FL_SHARDS:-auto} \
		./tests/check --kver $(KVER) $(if $(TESTS),-- $(TESTS))

check-lvm-long: kmod tools
	FL_LVM_LONG=1 ./tests/vm-run --kver $(KVER) --timeout 21600 --out tests/out/$(KVER)-lvm-long \
		-- lvm/signals lvm/fault-injection

check-host: modules
	./tests/run $(TESTS)

check-kernels:
	./tests/check-kernels $(KERNELS)

# the in-tree targets on dm-mod rebuilt with upstream/'s series, on 6.1 and
# 7.2: association counts and a blkcg subset through linear and striped
# (make check DM_CORE=patched runs the whole patched list on one kernel)
PATCHED_KERNELS ?= $(KVER) $(shell awk '$$1 ~ /^7\./ { print $$1 }' /var/lib/dm-fastlinear/kernels 2>/dev/null)
PATCHED_TESTS ?= blkcg/assoc-count blkcg/io-stat@linear blkcg/io-stat@striped blkcg/writeback@striped
check-patched:
	DM_CORES=patched FL_KERNEL_TESTS="$(PATCHED_TESTS)" ./tests/check-kernels $(PATCHED_KERNELS)

check-install: kmod
	./tests/check-install --kver $(KVER)

# Debian's kernels leave out CONFIG_BLK_CGROUP_IOLATENCY and
# CONFIG_BLK_CGROUP_IOPRIO (tests/blkcg/io-latency and io-prio skip
# there): the blkcg group on the suite's cgroup kernel, which has them,
# with the module built for it in build/KVER/, on both dm cores
# (build-kernel.sh prints the release it built or found on stdout)
check-cgroup-kernel:
	kver=$$(tests/lib/build-kernel.sh cgroup) && \
	$(MAKE) kmod KVER=$$kver WERROR=$(WERROR) && \
	DM_CORES="stock nofix" ./tests/check --kver $$kver -- $$(cd tests && ls -d blkcg/*)

durations:
	{ sed '/^[^#]/,$$d' tests/durations; \
	  cat tests/out/check-*.txt | \
	  awk '/^[a-z]+\/[^ ]+ .*\[(passed|failed|not run[^]]*)\] [0-9.]+s$$/ { \
		t = $$NF; sub(/s$$/, "", t); if (t + 0 > d[$$1]) d[$$1] = t + 0 } \
		END { for (k in d) printf "%s %d\n", k, d[k] + 0.5 }' | sort; } >tests/durations.new
	mv tests/durations.new tests/durations

# DESTDIR=DIR: everything under DIR (a package's staging tree; no depmod)
install: modules tools
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C tools install

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/dm-fastlinear.ko*
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C tools uninstall

# DKMS builds from its own copy in /usr/src/dm-fastlinear-VERSION.
dkms-install:
	mkdir -p /usr/src/dm-fastlinear-$(VERSION)
	cp -p Kbuild dkms.conf $(SRCS) /usr/src/dm-fastlinear-$(VERSION)/
	dkms status -m dm-fastlinear -v $(VERSION) | grep -q . || \
		dkms add -m dm-fastlinear -v $(VERSION)
	dkms build -m dm-fastlinear -v $(VERSION) -k $(KVER)
	dkms install -m dm-fastlinear -v $(VERSION) -k $(KVER)

dkms-uninstall:
	dkms remove -m dm-fastlinear -v $(VERSION) --all
	rm -rf /usr/src/dm-fastlinear-$(VERSION)

bench: kmod bench-cgroup
	./bench/vm-bench --kver $(KVER) -- $(BENCH_ARGS)

# the shipped cgroup experiments in one guest; the files are named in the
# order they run (the CI one, ci-iomax, runs in make check instead)
CGROUP_EXPS ?= iomax-dm-vs-lower iocost-weights writeback-wbps
bench-cgroup: kmod
	./bench/vm-cgroup-exp --kver $(KVER) --results bench/cgroup-exp-results -- \
		$(patsubst %,bench/experiments/%.exp,$(CGROUP_EXPS))

demo: kmod
	./bench/demo --kver $(KVER)

# a stalled guest must not eat the CI run: 20 minutes at most
bench-short: kmod
	./bench/vm-bench --kver $(KVER) --timeout 1200 -- --short $(BENCH_ARGS)

# cost per I/O under QEMU icount (bench/vm-cost, bench/cost); the short
# mode fails when fastlinear does not cost less than dm-linear
bench-cost: kmod
	./bench/vm-cost --kver $(KVER) --dm-core $(or $(DM_CORE),stock) -- $(COST_ARGS)

bench-cost-short: kmod
	./bench/vm-cost --kver $(KVER) --dm-core $(or $(DM_CORE),stock) --timeout 1200 -- --short $(COST_ARGS)

# CI's gate: the short mode on every kernel of the matrix, side by side
COST_KERNELS ?= $(KVER) $(shell awk '{ print $$1 }' /var/lib/dm-fastlinear/kernels 2>/dev/null)
bench-cost-gate:
	./bench/cost-gate $(COST_KERNELS)

print-kver:
	@echo $(KVER)

.PHONY: print-kver all modules kmod tools debug-kernel clean lint check check-host check-lvm-long check-kernels check-patched \
	check-install check-cgroup-kernel durations \
	install uninstall dkms-install dkms-uninstall bench bench-short bench-cost bench-cost-short bench-cost-gate \
	bench-cgroup demo
