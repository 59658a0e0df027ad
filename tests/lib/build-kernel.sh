#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build and install a debug kernel from Debian's linux-source-6.1: KASAN,
# lockdep (PROVE_LOCKING), kmemleak and DEBUG_ATOMIC_SLEEP on top of
# virtme-ng's minimal guest configuration (tests/lib/debug-kernel.config).
# Installs like a kernel package would, so that tests/vm-run --kver and
# make KVER= find it: /boot/vmlinuz-KVER, /lib/modules/KVER (with its
# build link to the object tree).  Prints KVER on its last line.
# Usage: build-debug-kernel.sh [--kver] [WORKDIR]
# (default /var/tmp/fl-debug-kernel; an installed kernel that matches the
# configuration is reused; --kver only prints the release it builds)
# Undo: rm -rf WORKDIR /lib/modules/KVER /boot/*-KVER

set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kver_only=
[ "${1:-}" = --kver ] && { kver_only=1; shift; }
work=${1:-/var/tmp/fl-debug-kernel}
tarball=/usr/src/linux-source-6.1.tar.xz
src=$work/linux-source-6.1
obj=$work/obj
frag=$here/debug-kernel.config

[ -r "$tarball" ] || { echo "build-debug-kernel: no $tarball (apt install linux-source-6.1)" >&2; exit 1; }
# the release: the source's version and the fragment's LOCALVERSION (make
# kernelrelease only knows the latter once the build has started)
kver=$(tar -xJOf "$tarball" linux-source-6.1/Makefile |
	awk -F' = ' 'NR <= 5 && /^(VERSION|PATCHLEVEL|SUBLEVEL) / { v = v (v ? "." : "") $2 }
		END { printf "%s", v }')$(sed -n 's/^CONFIG_LOCALVERSION="\(.*\)"$/\1/p' "$frag")
if [ -n "$kver_only" ]; then
	echo "$kver"
	exit 0
fi
mkdir -p "$work" "$obj"
if [ ! -f "$src/Makefile" ]; then
	echo "build-debug-kernel: unpacking $tarball" >&2
	tar -C "$work" -xJf "$tarball"
fi

cd "$src"
# a fresh configuration whenever the fragment changed
if [ ! -f "$obj/.config" ] || [ "$frag" -nt "$obj/.config" ]; then
	virtme-configkernel --defconfig O="$obj" >&2
	# ours last: virtme's own list would otherwise win (debug info on)
	scripts/kconfig/merge_config.sh -m -O "$obj" "$obj/.config" "$frag" >&2
	make O="$obj" olddefconfig >&2
fi
# the options the suite relies on must have survived olddefconfig
missing=
for opt in KASAN PROVE_LOCKING DEBUG_KMEMLEAK DEBUG_ATOMIC_SLEEP BLK_DEV_THROTTLING \
	CGROUP_WRITEBACK IO_URING KPROBE_EVENTS FUNCTION_GRAPH_TRACER EXT4_FS; do
	grep -q "^CONFIG_$opt=y" "$obj/.config" || missing="$missing $opt"
done
for opt in BLK_DEV_DM DM_FLAKEY BLK_DEV_NULL_BLK BLK_DEV_RAM; do
	grep -q "^CONFIG_$opt=m" "$obj/.config" || missing="$missing $opt"
done
[ -z "$missing" ] || { echo "build-debug-kernel: not in the configuration:$missing" >&2; exit 1; }

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
	{ echo "build-debug-kernel: built $(cat "$obj/include/config/kernel.release"), expected $kver" >&2; exit 1; }
echo "$kver"
