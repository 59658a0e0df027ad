#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build and install one of the suite's own kernels from Debian's
# linux-source-SERIES (6.1 unless --series says; a tarball this machine's
# /usr/src lacks is taken from the sid chroot's, where
# scripts/setup-kernels.sh installs linux-source-7.2), on top of
# virtme-ng's minimal guest configuration, kernel-base.config and the
# flavour's fragment:
#   debug   KASAN, lockdep (PROVE_LOCKING), kmemleak, DEBUG_ATOMIC_SLEEP
#           (kernel-debug.config; make check DEBUG_KERNEL=1)
#   cgroup  every blk-cgroup policy, with the IOLATENCY and IOPRIO that
#           Debian's kernels leave out (kernel-cgroup.config)
# Installs like a kernel package would, so that tests/vm-run --kver and
# make KVER= find it: /boot/vmlinuz-KVER, /lib/modules/KVER (with its
# build link to the object tree).  Prints KVER on its last line.
# Usage: build-kernel.sh FLAVOUR [--series S] [--kver] [WORKDIR]
# (default /var/tmp/fl-FLAVOUR-kernel for 6.1, /var/tmp/fl-FLAVOUR-S-kernel
# for another series; an installed kernel that matches the configuration is
# reused; --kver only prints the release it builds)
# The whole kernel and its modules are built with this machine's compiler,
# so the modules built against it later (make kmod KVER=,
# build-dm-patched.sh) use the same one: no chroot is needed even for 7.2,
# whose Debian packages need sid's gcc-16.
# Undo: rm -rf WORKDIR /lib/modules/KVER /boot/*-KVER

set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
flavour=${1:-}
frag=$here/kernel-$flavour.config
if [ -z "$flavour" ] || [ ! -r "$frag" ]; then
	echo "usage: build-kernel.sh debug|cgroup [--kver] [WORKDIR]" >&2
	exit 1
fi
shift
series=6.1
if [ "${1:-}" = --series ]; then
	series=${2:-}
	[[ $series =~ ^[0-9]+\.[0-9]+$ ]] || { echo "build-kernel: --series $series: a series such as 7.2" >&2; exit 1; }
	shift 2
fi
kver_only=
[ "${1:-}" = --kver ] && { kver_only=1; shift; }
if [ "$series" = 6.1 ]; then
	work=${1:-/var/tmp/fl-$flavour-kernel}
else
	work=${1:-/var/tmp/fl-$flavour-$series-kernel}
fi
tarball=/usr/src/linux-source-$series.tar.xz
[ -r "$tarball" ] || tarball=${SID_ROOT:-/var/lib/dm-fastlinear/sid}$tarball
src=$work/linux-source-$series
obj=$work/obj
base=$here/kernel-base.config
me="build-kernel $flavour"

[ -r "$tarball" ] || { echo "$me: no linux-source-$series.tar.xz in /usr/src or $tarball (apt install linux-source-$series)" >&2; exit 1; }
# the release: the source's version and the fragment's LOCALVERSION (make
# kernelrelease only knows the latter once the build has started)
# (from the unpacked tree once there is one: the tarball is decompressed
# whole to reach its Makefile, about a minute)
if [ -f "$src/Makefile" ]; then
	top=$(cat "$src/Makefile")
else
	top=$(tar -xJOf "$tarball" "linux-source-$series/Makefile")
fi
kver=$(echo "$top" |
	awk -F' = ' 'NR <= 5 && /^(VERSION|PATCHLEVEL|SUBLEVEL) / { v = v (v ? "." : "") $2 }
		END { printf "%s", v }')$(sed -n 's/^CONFIG_LOCALVERSION="\(.*\)"$/\1/p' "$frag")
if [ -n "$kver_only" ]; then
	echo "$kver"
	exit 0
fi
mkdir -p "$work" "$obj"
if [ ! -f "$src/Makefile" ]; then
	echo "$me: unpacking $tarball" >&2
	tar -C "$work" -xJf "$tarball"
fi

cd "$src"
# a fresh configuration whenever a fragment changed
if [ ! -f "$obj/.config" ] || [ "$frag" -nt "$obj/.config" ] || [ "$base" -nt "$obj/.config" ]; then
	virtme-configkernel --defconfig O="$obj" >&2
	# ours last: virtme's own list would otherwise win (debug info on)
	scripts/kconfig/merge_config.sh -m -O "$obj" "$obj/.config" "$base" "$frag" >&2
	make O="$obj" olddefconfig >&2
fi
# the options the suite relies on must have survived olddefconfig
# (every =y and =m line of the flavour's fragment, and the base's list)
missing=
for opt in BLK_DEV_THROTTLING CGROUP_WRITEBACK IO_URING KPROBE_EVENTS FUNCTION_GRAPH_TRACER \
	EXT4_FS $(sed -n 's/^CONFIG_\(.*\)=y$/\1/p' "$frag"); do
	grep -q "^CONFIG_$opt=y" "$obj/.config" || missing="$missing $opt"
done
for opt in BLK_DEV_DM DM_FLAKEY BLK_DEV_NULL_BLK BLK_DEV_RAM \
	$(sed -n 's/^CONFIG_\(.*\)=m$/\1/p' "$frag"); do
	grep -q "^CONFIG_$opt=m" "$obj/.config" || missing="$missing $opt"
done
[ -z "$missing" ] || { echo "$me: not in the configuration:$missing" >&2; exit 1; }

if [ ! -e "/boot/vmlinuz-$kver" ] || [ "$obj/.config" -nt "/boot/vmlinuz-$kver" ]; then
	make O="$obj" -j"$(($(nproc) + 1))" bzImage modules >&2
	make O="$obj" INSTALL_MOD_STRIP=1 modules_install >&2
	install -m 0644 "$obj/arch/x86/boot/bzImage" "/boot/vmlinuz-$kver"
	install -m 0644 "$obj/System.map" "/boot/System.map-$kver"
	install -m 0644 "$obj/.config" "/boot/config-$kver"
	ln -sfn "$obj" "/lib/modules/$kver/build"
	depmod -a "$kver"
fi
[ "$(cat "$obj/include/config/kernel.release")" = "$kver" ] ||
	{ echo "$me: built $(cat "$obj/include/config/kernel.release"), expected $kver" >&2; exit 1; }
echo "$kver"
