# SPDX-License-Identifier: GPL-2.0-only
# The version has one source: MODULE_VERSION("X.Y.Z") in dm-fastlinear.c
# (a literal, as kernel style wants).  The Makefile and tools/Makefile
# include this (fastlinearctl --version, the man pages, DKMS's paths);
# the copies that cannot be derived from it, the target's .version
# {X, Y, Z} and dkms.conf's PACKAGE_VERSION, make lint-version checks.
VERSION := $(shell sed -n 's/^MODULE_VERSION("\(.*\)");/\1/p' $(dir $(lastword $(MAKEFILE_LIST)))dm-fastlinear.c)
