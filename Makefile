# SPDX-License-Identifier: GPL-2.0-only
#
# make                  build against the running kernel (or, on a machine
#                       without its headers, the newest installed headers)
# make KVER=VERSION     build against /lib/modules/VERSION/build
# make KDIR=DIR         build against a kernel build tree
# make lint             checkpatch.pl --strict and sparse (C=2)
# make check            run the test suite in QEMU guests (virtme-ng), on the
#                       kernel's dm core and on a pre-2df8b310bcfe one
#                       (DM_CORE=stock|nofix for one, TESTS="group/name ...")
# make check-host       run the test suite on this host (root, real kernel)
# make install          install to /lib/modules/KVER/updates and run depmod
# make bench            raw vs dm-linear vs fastlinear in a guest (bench/vm-bench;
#                       BENCH_ARGS="--reps 5 ..." for bench/run), bench/out/
# make bench-short      its short mode: a few cells, fails on wrong blkg counts

# Default kernel: the running one if its headers are here, else the one
# Debian's linux-headers-amd64 points at (the test kernel), else the newest.
KVER ?= $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then uname -r; \
	else v=$$(dpkg-query -W -f='$${Depends}' linux-headers-amd64 2>/dev/null | \
	sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p'); \
	if [ -n "$$v" ] && [ -d /lib/modules/$$v/build ]; then echo $$v; \
	else ls -1 /lib/modules | sort -V | while read v; do \
	[ -d /lib/modules/$$v/build ] && echo $$v; done | tail -1; fi; fi)
KDIR ?= /lib/modules/$(KVER)/build
CHECKPATCH ?= $(firstword $(wildcard /usr/src/linux-source-*/scripts/checkpatch.pl))
SRCS := dm-fastlinear.c fastlinear-compat.h

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf tests/out

lint:
	@test -n "$(CHECKPATCH)" || { echo "checkpatch.pl not found: run scripts/setup.sh"; exit 1; }
	$(CHECKPATCH) --strict --no-tree --show-types -f $(SRCS)
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 CF="-Wsparse-error" modules

check: modules
	mkdir -p tests/out
	$(if $(DM_CORE),DM_CORES="$(DM_CORE)") ./tests/check --kver $(KVER) $(if $(TESTS),-- $(TESTS))

check-host: modules
	./tests/run $(TESTS)

install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KVER)

bench: modules
	./bench/vm-bench --kver $(KVER) -- $(BENCH_ARGS)

bench-short: modules
	./bench/vm-bench --kver $(KVER) -- --short $(BENCH_ARGS)

.PHONY: all modules clean lint check check-host install bench bench-short
