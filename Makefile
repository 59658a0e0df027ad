# SPDX-License-Identifier: GPL-2.0-only
#
# make help: the targets, each with its "## " line (on the target's
# line or just above it; make lint fails on a .PHONY target without one).
# The variables they take:
#   KVER=VERSION    the kernel to build and test for, /lib/modules/VERSION/build
#                   (default: the running kernel if its headers are here,
#                   else the one linux-headers-amd64 points at, else the
#                   newest installed headers; make print-kver)
#   KDIR=DIR        a kernel build tree instead
#   DM_CORE=stock|nofix|patched   make check, bench-cost*: that dm core only
#   TESTS="group/name ..."        make check, check-host: those tests only
#   DEBUG_KERNEL=1  make check on a 6.1 kernel with KASAN, lockdep, kmemleak
#                   and DEBUG_ATOMIC_SLEEP, built from Debian's source first
#                   (rig/build-kernel.sh debug; 28 min on 2 CPUs), on
#                   its own dm core only
#   KERNELS="V ..." make check-kernels: those kernels of the matrix
#   FULL=1          make check-kernels: the full matrix (the tests that
#                   declare KERNELS="all" or "matrix"), not CI's part
#   BENCH_ARGS="--reps 5 ..."     make bench, bench-short: for bench/run
#   COST_ARGS="--reps 5 ..."      make bench-cost*: for bench/cost
#   DESTDIR=DIR     make install, uninstall, dm-core-install, dm-core-uninstall:
#                   a staging tree (no depmod)
#   DIET=N|all      make dm-core-install: the first N (all) patches of the
#                   diet series too (upstream/diet/)
#   WERROR=0|1      -Werror, see below

# Default kernel: the running one if its headers are here, else the one
# Debian's linux-headers-amd64 points at (the test kernel), else the newest.
KVER ?= $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then uname -r; \
	else v=$$(dpkg-query -W -f='$${Depends}' linux-headers-amd64 2>/dev/null | \
	sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p'); \
	if [ -n "$$v" ] && [ -d /lib/modules/$$v/build ]; then echo $$v; \
	else ls -1 /lib/modules | sort -V | while read v; do \
	[ -d /lib/modules/$$v/build ] && echo $$v; done | tail -1; fi; fi)
ifeq ($(DEBUG_KERNEL),1)
KVER := $(shell rig/build-kernel.sh debug --kver)
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
# VERSION: MODULE_VERSION of dm-fastlinear.c, its one source
include version.mk
# -Werror (module: FASTLINEAR_WERROR for Kbuild; tools: WERROR): off in
# what users build (make, make install, make tools, DKMS, make demo), on in
# the test, CI and lint targets (WERROR=0 on the command line turns it off)
WERROR ?= 0
check check-host check-lvm-long check-kernels check-patched check-cgroup-kernel bench-short \
	bench-cost-short bench-cost-gate check-diet-core lint: export WERROR = 1
# (not exported: the installs it checks are a user's)
check-install: WERROR = 1
CHECKPATCH ?= $(firstword $(wildcard /usr/src/linux-source-*/scripts/checkpatch.pl))
SRCS := dm-fastlinear.c fastlinear-compat.h

## the module against KVER's headers, here (the default target)
all: modules

## the same as all
modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) FASTLINEAR_WERROR=$(WERROR) modules

# A copy of the sources per kernel, so that builds for several kernels do
# not share objects (6.1's kbuild has no separate output directory for
# external modules).  Kernels whose headers live in the sid chroot of
# scripts/setup-kernels.sh build there.
# The suite's own test module (tests/lib/fl-test-bio.c: a bio no ioctl
# sends) beside it, in build/KVER/test/; never installed.
# One build of a copy at a time (BUILD_DIR.lock, held by the shell of
# the one recipe line): CI's diet stage and cost gate both build 7.2's.
## the module for KVER in build/KVER/ (make check, tests/vm-run use it)
kmod: $(if $(filter 1,$(DEBUG_KERNEL)),debug-kernel)
	mkdir -p $(BUILD_DIR)/test
	{ flock 9 && \
	cp -p Kbuild $(SRCS) $(BUILD_DIR)/ && \
	cp -p tests/lib/fl-test-bio.c $(BUILD_DIR)/test/ && \
	cp -p tests/lib/fl-test-bio.Kbuild $(BUILD_DIR)/test/Kbuild && \
	$(if $(SYSROOT),scripts/chroot-make $(SYSROOT) $(CURDIR),$(MAKE)) \
		-C $(KDIR) M=$(CURDIR)/$(BUILD_DIR) FASTLINEAR_WERROR=$(WERROR) modules && \
	$(if $(SYSROOT),scripts/chroot-make $(SYSROOT) $(CURDIR),$(MAKE)) \
		-C $(KDIR) M=$(CURDIR)/$(BUILD_DIR)/test modules; } 9>$(BUILD_DIR).lock

## tools/fastlinearctl (libdevmapper)
tools:
	$(MAKE) -C tools WERROR=$(WERROR)

## fastlinearctl's unit tests (config, tables, JSON, names), on this host
check-unit:
	$(MAKE) -C tools WERROR=1 check-unit

## the kernel of DEBUG_KERNEL=1, built if need be
debug-kernel:
	rig/build-kernel.sh debug

## remove what the builds made, build/ and tests/out
clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools clean
	rm -rf tests/out build

# make help's list: "## TEXT" above a target's line, or "TARGET: ... ## TEXT"
# (list=1: the targets alone, one a line)
HELP_AWK = /^\#\# / { d = substr($$0, 4); next } \
	/^[a-zA-Z0-9][a-zA-Z0-9_.-]*( [a-zA-Z0-9][a-zA-Z0-9_.-]*)*:([^=]|$$)/ { \
		t = $$0; sub(/:.*/, "", t); \
		if (match($$0, / \#\# /)) d = substr($$0, RSTART + 4); \
		if (d != "" && list) { gsub(/ /, "\n", t); print t } \
		else if (d != "") printf "  %-20s %s\n", t, d } \
	{ d = "" }

## this list of the targets
help:
	@echo "make [VARIABLE=VALUE ...] TARGET (the variables: the top of the Makefile)"
	@awk '$(HELP_AWK)' $(MAKEFILE_LIST)

## checkpatch, sparse, -Werror builds, lint-version, lint-scripts, README.md's length
lint: lint-version lint-scripts
	@n=$$(wc -l <README.md); test "$$n" -le 200 || \
		{ echo "README.md: $$n lines, more than 200: it is for users; detail goes to the man pages, tests/README.md or upstream/"; exit 1; }
	@phony=$$(sed -n '/^\.PHONY:/{:a;/\\$$/{N;ba};s/\\\n//g;s/^\.PHONY://;p}' Makefile); \
	have=$$(awk -v list=1 '$(HELP_AWK)' $(MAKEFILE_LIST)); \
	for t in $$phony; do printf '%s\n' "$$have" | grep -qxF "$$t" || \
		{ echo "Makefile: .PHONY target $$t has no ## line for make help"; bad=1; }; done; \
	exit $${bad:-0}
	@test -n "$(CHECKPATCH)" || { echo "checkpatch.pl not found: run scripts/setup.sh"; exit 1; }
	$(CHECKPATCH) --strict --no-tree --show-types -f $(SRCS) tests/lib/fl-test-bio.c
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 CF="-Wsparse-error" FASTLINEAR_WERROR=1 modules
	$(MAKE) -C tools WERROR=1
	@tools/fastlinearctl --version | grep -qx 'fastlinearctl $(VERSION)' || \
		{ echo "tools/fastlinearctl --version is not MODULE_VERSION $(VERSION)"; exit 1; }

# the copies of the version that cannot be derived from MODULE_VERSION
# (version.mk): the target's .version, dkms.conf's PACKAGE_VERSION, the
# upstream part of debian/changelog's version (dpkg reads it there; the
# Debian revision after it has no other home), and
# /usr/src/dm-fastlinear-X.Y.Z in the documentation
VERSION_DOCS = $(wildcard *.md */*.md dkms.conf tools/*.[0-9])
## MODULE_VERSION's copies in dm-fastlinear.c, dkms.conf, debian/changelog and the docs
lint-version:
	@echo '$(VERSION)' | grep -qxE '[0-9]+\.[0-9]+\.[0-9]+' || \
		{ echo "dm-fastlinear.c: MODULE_VERSION is not one X.Y.Z: '$(VERSION)'"; exit 1; }
	@test "$$(grep -c '\.version = {' dm-fastlinear.c)" = 1 && \
		grep -qx '	\.version = {$(subst .,$(comma) ,$(VERSION))},' dm-fastlinear.c || \
		{ echo "dm-fastlinear.c: target .version is not MODULE_VERSION $(VERSION)"; exit 1; }
	@grep -qx 'PACKAGE_VERSION="$(VERSION)"' dkms.conf || \
		{ echo "dkms.conf: PACKAGE_VERSION is not MODULE_VERSION $(VERSION)"; exit 1; }
	@test "$$(sed -n '1s/^dm-fastlinear (\(.*\)-[^-]*) .*/\1/p' debian/changelog)" = '$(VERSION)' || \
		{ echo "debian/changelog: its first version is not MODULE_VERSION $(VERSION)-REVISION"; exit 1; }
	@! grep -noE 'dm-fastlinear-[0-9]+\.[0-9]+\.[0-9]+' $(VERSION_DOCS) | \
		grep -vE ':dm-fastlinear-$(subst .,\.,$(VERSION))$$' || \
		{ echo "these name another version than MODULE_VERSION $(VERSION)"; exit 1; }
	@echo "lint-version: $(VERSION) (MODULE_VERSION) in dm-fastlinear.c, dkms.conf, debian/changelog, $(words $(VERSION_DOCS)) docs"

## shellcheck on every shell script, Python compiled (scripts/lint-scripts)
lint-scripts:
	scripts/lint-scripts

# on the kernel's own dm core (stock) and on one without upstream
# 2df8b310bcfe (nofix); DM_CORE=stock|nofix: one; TESTS="group/name ..."
## the test suite in QEMU guests (virtme-ng), stock and nofix dm core
check: check-unit kmod tools
	mkdir -p tests/out
	$(if $(DM_CORE),DM_CORES="$(DM_CORE)") FL_SHARDS=$${FL_SHARDS:-auto} \
		./tests/check --kver $(KVER) $(if $(TESTS),-- $(TESTS))

# No per-test watchdog here: its limit comes from the short mode's time in
# tests/durations; the guest's own timeout bounds the run.
# (tests/run --list --suite long: lvm/signals, lvm/fault-injection)
## the tests declaring SUITE="long", not in check nor CI, at full length (FL_LVM_LONG=1)
check-lvm-long: kmod tools
	tests=$$(tests/run --list --suite long) && [ -n "$$tests" ] || \
		{ echo "check-lvm-long: no tests (tests/run --list --suite long)"; exit 1; }; \
	FL_LVM_LONG=1 FL_TEST_TIMEOUT=0 ./tests/vm-run --kver $(KVER) --timeout 21600 --out tests/out/$(KVER)-lvm-long \
		-- $$tests

## the test suite on this host (root, real kernel)
check-host: modules
	./tests/run $(TESTS)

## build and blkcg tests on each kernel scripts/setup-kernels.sh installed (FULL=1: all)
check-kernels:
	FL_KERNEL_SET=$(if $(filter 1,$(FULL)),full,all) ./tests/check-kernels $(KERNELS)

# the in-tree targets on dm-mod rebuilt with upstream/'s series, on 6.1 and
# 7.2: association counts and a blkcg subset through linear and striped,
# the tests that declare KERNELS="patched[@TARGET]" (tests/run --list
# --kernels patched; make check DM_CORE=patched runs the whole patched
# list on one kernel)
PATCHED_KERNELS ?= $(KVER) $(shell awk '$$1 ~ /^7\./ { print $$1 }' /var/lib/dm-fastlinear/kernels 2>/dev/null)
PATCHED_TESTS ?= $(shell tests/run --list --kernels patched)
## dm-linear, dm-stripe on dm-mod with upstream/'s series (6.1, 7.2)
check-patched:
	@test -n "$(strip $(PATCHED_TESTS))" || \
		{ echo "check-patched: no tests (tests/run --list --kernels patched)"; exit 1; }
	DM_CORES=patched FL_KERNEL_TESTS="$(PATCHED_TESTS)" ./tests/check-kernels $(PATCHED_KERNELS)

# (upstream/README.md; signed off with your git identity, refused if it
# cannot receive mail; build/ is not tracked)
## the upstream series as mail, from upstream/series/v7.2: build/upstream-series/v7.2/
upstream-series:
	upstream/make-series --base 7.2 build/upstream-series/v7.2

## the diet series as mail, its three postings (upstream/diet/v7.2/postings): build/upstream-diet/v7.2/NAME/
diet-series:
	upstream/make-series --base 7.2 --diet build/upstream-diet/v7.2

# (checkpatch.pl --strict of each base on every patch and the cover
# letter, then the patches one at a time with dm-mod, dm-crypt, dm-switch
# and dm-unstripe built after each; no guest)
## the series for every base in upstream/series/ checked: checkpatch, a build after each patch
check-series:
	nice -n 19 upstream/check-series

# (upstream/diet/: on top of the association series, each diet patch
# checkpatched and built after the ones before it; no guest)
## the diet series for every base in upstream/diet/ checked: checkpatch, a build after each patch
check-diet:
	set -e; for d in upstream/diet/v*/; do d=$${d%/}; nice -n 19 upstream/check-diet $${d##*/v}; done

# (upstream/lvm2/build-lvm2: Debian's lvm2 source via apt-get source,
# which needs a deb-src list: LVM2_ARGS=--add-deb-src writes one from
# this machine's apt sources; build/lvm2/ is not tracked; no guest)
## lvm2 with upstream/lvm2/'s linear_target series, built and checked
lvm2:
	upstream/lvm2/build-lvm2 $(LVM2_ARGS)

# (upstream/lvm2/run-suite --parallel: lvm2's own test/shell tests, the
# list in upstream/lvm2/suite/tests, in three guests side by side, one per
# configuration: linear_target unset, fastlinear with the module loaded,
# fastlinear with the module absent; KVER: the test kernel (Debian's 6.1);
# long, not in CI; SUITE_ARGS: more options, or test names)
## lvm2's own tests on the patched lvm2 (make lvm2 first): linear, fastlinear, fallback
lvm2-suite: kmod
	upstream/lvm2/run-suite --parallel --kver $(KVER) $(SUITE_ARGS)

# (tests/check-diet-core: bench/diet-gate's icount cells and the tests
# that declare KERNELS="diet", two guests side by side; CI runs it)
## the diet core in guests: its cost against the patched core's, a test subset
check-diet-core:
	./tests/check-diet-core $(DIET_KVER)

# (tests/check-diet-debug: rig/build-kernel.sh debug --series 7.2 first,
# 10 min on 2 CPUs, 15 with other work; not in CI; DEBUG_TESTS="T...":
# those tests only)
## the diet core on a 7.2 debug kernel (KASAN, lockdep, kmemleak): its tests and the robust group
check-diet-debug:
	./tests/check-diet-debug $(DEBUG_TESTS)

## the installs (make install, DKMS, dm-core-install), each loaded by modprobe in a guest
check-install: kmod
	./tests/check-install --kver $(KVER)

# Debian's kernels leave out CONFIG_BLK_CGROUP_IOLATENCY and
# CONFIG_BLK_CGROUP_IOPRIO (tests/blkcg/io-latency and io-prio skip
# there): the blkcg group on the suite's cgroup kernel, which has them,
# with the module built for it in build/KVER/, on both dm cores: the
# tests that declare KERNELS="cgroup" (tests/run --list --kernels cgroup;
# build-kernel.sh prints the release it built or found on stdout)
## the blkcg tests on a 6.1 kernel with every blk-cgroup policy, both dm cores
check-cgroup-kernel:
	tests=$$(tests/run --list --kernels cgroup) && [ -n "$$tests" ] || \
		{ echo "check-cgroup-kernel: no tests (tests/run --list --kernels cgroup)"; exit 1; }; \
	kver=$$(rig/build-kernel.sh cgroup) && \
	$(MAKE) kmod KVER=$$kver WERROR=$(WERROR) && \
	DM_CORES="stock nofix" ./tests/check --kver $$kver -- $$tests

# (the longest time of each test, and as CORE:TEST on a rebuilt dm core,
# the longest there: how make check deals the tests out to its guests and
# tests/run's watchdog).  LOGS: the run logs to read, e.g. a CI run's
# (default: the guests' logs in tests/out); a test in none keeps its line.
LOGS ?= tests/out/check-*.txt
## tests/durations from the test logs in tests/out (or LOGS=...)
durations:
	{ sed '/^[^#]/,$$d' tests/durations; \
	  awk 'FNR == NR { if ($$1 !~ /^#/) old[$$1] = $$2; next } \
		FNR == 1 { c = "" } \
		/^=== dm core: / { c = $$4; sub(/,$$/, "", c) } \
		/^[a-z]+\/[^ ]+ .*\[(passed|failed|not run[^]]*)\] [0-9.]+s$$/ { \
			t = $$NF; sub(/s$$/, "", t); t += 0; \
			if (t > d[$$1]) d[$$1] = t; \
			if (c != "" && c != "stock" && t > d[c ":" $$1]) d[c ":" $$1] = t } \
		END { for (k in old) if (!(k in d)) d[k] = old[k]; \
			for (k in d) printf "%s %d\n", k, d[k] + 0.5 }' \
		tests/durations $(LOGS) | sort; } >tests/durations.new
	mv tests/durations.new tests/durations

# the tools: tools/Makefile (fastlinearctl, its config, udev rule and
# systemd unit).  DESTDIR=DIR: everything under DIR (a package's staging
# tree; no depmod)
## the module to /lib/modules/KVER/updates, depmod, the tools
install: modules tools
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C tools install

## remove what make install installed
uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/dm-fastlinear.ko*
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C tools uninstall

# The patched dm core (rig/build-dm-patched.sh into build/) installed for
# KVER, in place of its own: rig/dm-core-install, "The patched dm core on
# a host" in upstream/README.md.  It prints a warning first; it replaces
# every dm device's core on KVER from the next load of dm-mod on.
## REPLACES KVER's dm core: upstream/'s patched dm-mod to updates/dm-core, depmod
dm-core-install:
	DESTDIR="$(DESTDIR)" rig/dm-core-install install $(KVER) $(DIET)

## remove what dm-core-install installed, depmod (KVER's own dm core again)
dm-core-uninstall:
	DESTDIR="$(DESTDIR)" rig/dm-core-install uninstall $(KVER)

# DKMS builds from its own copy in /usr/src/dm-fastlinear-VERSION.
## add, build and install with DKMS for KVER
dkms-install:
	mkdir -p /usr/src/dm-fastlinear-$(VERSION)
	cp -p Kbuild dkms.conf $(SRCS) /usr/src/dm-fastlinear-$(VERSION)/
	dkms status -m dm-fastlinear -v $(VERSION) | grep -q . || \
		dkms add -m dm-fastlinear -v $(VERSION)
	dkms build -m dm-fastlinear -v $(VERSION) -k $(KVER)
	dkms install -m dm-fastlinear -v $(VERSION) -k $(KVER)

## remove it from DKMS
dkms-uninstall:
	dkms remove -m dm-fastlinear -v $(VERSION) --all
	rm -rf /usr/src/dm-fastlinear-$(VERSION)

# Debian packages (debian/): scripts/build-deb builds them in a copy of
# the tree, build/deb/dm-fastlinear-VERSION, and leaves them in build/deb/
## Debian packages dm-fastlinear-dkms and fastlinear-tools in build/deb/
deb:
	scripts/build-deb build/deb

# (tests/check-deb: lintian, then the packages in a throwaway bookworm
# chroot; no guest, nothing installed on this host)
## make deb, lintian, install, upgrade, remove and purge in a bookworm chroot
check-deb:
	./tests/check-deb --kver $(KVER)

# (tests/check-boot: the packages installed in a Debian image booted with
# systemd as PID 1 in QEMU, four boots; the image's base is cached in
# /var/cache/dm-fastlinear-boot, FL_BOOT_CACHE=DIR)
## the packages in a bookworm image booted with systemd in QEMU: boot, reload, reboot, purge
check-boot:
	./tests/check-boot --kver $(KVER)

## raw vs dm-linear vs fastlinear in a guest (bench/vm-bench), bench-cgroup
bench: kmod bench-cgroup
	./bench/vm-bench --kver $(KVER) -- $(BENCH_ARGS)

# the shipped cgroup experiments in one guest; the files are named in the
# order they run (the CI one, ci-iomax, runs in make check instead)
CGROUP_EXPS ?= iomax-dm-vs-lower iocost-weights writeback-wbps
# (their plots, summaries and CSVs to CGROUP_RESULTS, not tracked)
CGROUP_RESULTS ?= bench/out/cgroup-exp-results
## bench/experiments/ in a guest, to bench/out/cgroup-exp-results/
bench-cgroup: kmod
	./bench/vm-cgroup-exp --kver $(KVER) --results $(CGROUP_RESULTS) -- \
		$(patsubst %,bench/experiments/%.exp,$(CGROUP_EXPS))

# (bench/demo: builds, then runs bench/demo-run here as root if modules
# load, else in a guest under QEMU's instruction counter)
## what the project does, in one command
demo: kmod
	./bench/demo --kver $(KVER)

# a stalled guest must not eat the CI run: 20 minutes at most
## bench's short mode: a few cells, fails on wrong blkg counts
bench-short: kmod
	./bench/vm-bench --kver $(KVER) --timeout 1200 -- --short $(BENCH_ARGS)

# cost per I/O under QEMU icount, 1 ns per guest instruction (bench/vm-cost,
# bench/cost); the short mode fails when fastlinear does not cost less
# than dm-linear
## cost per I/O in virtual ns under QEMU icount (bench/vm-cost)
bench-cost: kmod
	./bench/vm-cost --kver $(KVER) --dm-core $(or $(DM_CORE),stock) -- $(COST_ARGS)

## bench-cost's 2-cell gate: fastlinear must cost less than dm-linear
bench-cost-short: kmod
	./bench/vm-cost --kver $(KVER) --dm-core $(or $(DM_CORE),stock) --timeout 1200 -- --short $(COST_ARGS)

# The dm diet series step by step (bench/diet-steps): stock, patched, then
# each diet patch, the same icount cells each time, a table and a plot;
# DIET_KVER: a 7.2 kernel (the series' base: Debian's, not one of
# rig/build-kernel.sh's, which make check-diet-debug takes), DIET_STEPS="stock 2 3":
# some steps only, STUDY=NAME: kept in bench/results/NAME/ (clean tree)
DIET_KVER ?= $(lastword $(sort $(filter 7.2.%-amd64,$(notdir $(wildcard /lib/modules/*)))))
## each step of the dm diet series under icount, a table and a plot
bench-diet:
	$(MAKE) kmod KVER=$(DIET_KVER)
	./bench/diet-steps --kver $(DIET_KVER) $(if $(DIET_STEPS),--steps "$(DIET_STEPS)") \
		$(if $(STUDY),--save $(STUDY)) $(if $(COST_ARGS),-- $(COST_ARGS))

# CI's gate: the short mode on every kernel of the matrix, side by side
COST_KERNELS ?= $(KVER) $(shell awk '{ print $$1 }' /var/lib/dm-fastlinear/kernels 2>/dev/null)
## bench-cost-short on every kernel of the matrix, side by side (CI)
bench-cost-gate:
	./bench/cost-gate $(COST_KERNELS)

## print KVER, the kernel the targets build for
print-kver:
	@echo $(KVER)

## print VERSION, the module's (MODULE_VERSION of dm-fastlinear.c)
print-version:
	@echo $(VERSION)

.PHONY: help lint-version lint-scripts print-kver print-version all modules kmod tools check-unit debug-kernel clean lint check check-host check-lvm-long check-kernels check-patched \
	upstream-series diet-series check-series check-diet check-diet-core check-diet-debug lvm2 lvm2-suite \
	check-install check-cgroup-kernel durations \
	install uninstall dkms-install dkms-uninstall deb check-deb check-boot dm-core-install dm-core-uninstall bench bench-short bench-cost bench-cost-short bench-cost-gate \
	bench-diet bench-cgroup demo
