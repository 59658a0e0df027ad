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

KVER ?= $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then uname -r; \
	else ls -1 /lib/modules | sort -V | while read v; do \
	[ -d /lib/modules/$$v/build ] && echo $$v; done | tail -1; fi)
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

.PHONY: all modules clean lint check check-host install
