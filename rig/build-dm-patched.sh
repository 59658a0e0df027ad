#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build dm-mod.ko, dm-crypt.ko, dm-switch.ko and dm-unstripe.ko for KVER
# from Debian's linux-source with the sources of the series applied
# (upstream/series/vSERIES/NN-*.patch, in order, with patch -p1, which skips
# their Subject and message: bio_set_dev_no_blkg() and dm_remap_set_dev(),
# targets set a remapped clone's device without the blkg association dm
# core replaces anyway).
# Kernels whose headers are on this machine build here, from
# /usr/src/linux-source-SERIES.tar.xz; the others (7.2: its headers need
# gcc-16) build in the sid chroot of scripts/setup-kernels.sh, from the
# tarball of its linux-source-SERIES package, installed there if missing
# (a kernel of rig/build-kernel.sh --series 7.2 builds here, from that
# same tarball).
# The patched include/linux/bio.h and device-mapper.h go ahead of the
# kernel's on the include path.  Every module the series touches is built
# (dm-linear and dm-stripe are part of dm-mod); each one's vermagic must
# be KVER.
# Usage: build-dm-patched.sh [--diet N] KVER OUTDIR   (reuses OUTDIR's
# modules if all were built after this script, its helper and every file
# of the series, and of the diet series with --diet)
# --diet N: then the first N patches of upstream/diet/vSERIES/ (the "dm
# diet" series, on top of the association series), in order; OUTDIR gets
# a file "diet" naming them, and is reused only for the same N

set -eu
lib=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=rig/dm-mod-build.sh
. "$lib/dm-mod-build.sh"
diet=0
if [ "${1:-}" = --diet ]; then
	diet=${2:-}
	[[ $diet =~ ^[1-9][0-9]*$ ]] || { echo "build-dm-patched: --diet $diet: a number of patches, 1 or more"; exit 2; }
	shift 2
fi
[ $# = 2 ] || { echo "usage: $0 [--diet N] KVER OUTDIR"; exit 2; }
kver=$1
out=$(realpath -m "$2")
series=$(echo "$kver" | cut -d. -f1-2)
patches=$(realpath -m "$lib/../upstream/series/v$series")
dietdir=$(realpath -m "$lib/../upstream/diet/v$series")
dietp=()
if [ "$diet" -gt 0 ]; then
	mapfile -t dietp < <(find "$dietdir" -maxdepth 1 -name '[0-9][0-9]-*.patch' 2>/dev/null | sort | head -n "$diet")
	[ ${#dietp[@]} = "$diet" ] ||
		{ echo "build-dm-patched: --diet $diet: $dietdir has ${#dietp[@]} patches"; exit 1; }
fi
mods="dm-mod dm-crypt dm-switch dm-unstripe"
sid=${SID_ROOT:-/var/lib/dm-fastlinear/sid}
kdir=/lib/modules/$kver/build

ls "$patches"/[0-9][0-9]-*.patch >/dev/null 2>&1 ||
	{ echo "build-dm-patched: no series for $series in $patches"; exit 1; }
# reuse: every module there, each newer than this script, its helper, the
# series' folder (a patch removed or renamed) and every file in it
reuse=1
for m in $mods; do
	ko=$out/$m.ko
	if ! [ -s "$ko" ] || ! [ "$ko" -nt "$0" ] || ! [ "$ko" -nt "$lib/dm-mod-build.sh" ] ||
		! [ "$ko" -nt "$patches" ] || [ -n "$(find "$patches" -newer "$ko")" ]; then
		reuse=0
	fi
	if [ "$diet" -gt 0 ] && { ! [ "$ko" -nt "$dietdir" ] || [ -n "$(find "$dietdir" -newer "$ko")" ]; }; then
		reuse=0
	fi
	# and newer than the kernel's build (one of rig/build-kernel.sh's is
	# rebuilt when its configuration changes)
	for f in "$kdir/Module.symvers" "$sid$kdir/Module.symvers"; do
		if [ -e "$f" ] && ! [ "$ko" -nt "$f" ]; then
			reuse=0
		fi
	done
done
# a diet build: the same diet patches (a plain build has no such file)
if [ "$diet" -gt 0 ]; then
	[ "$(cat "$out/diet" 2>/dev/null)" = "$(printf '%s\n' "${dietp[@]##*/}")" ] || reuse=0
elif [ -e "$out/diet" ]; then
	reuse=0
fi
[ "$reuse" = 1 ] && exit 0

if [ -r "$kdir/Makefile" ]; then
	root=
elif [ -r "$sid$kdir/Makefile" ]; then
	root=$sid
else
	echo "build-dm-patched: no headers for $kver here or in $sid"
	exit 1
fi
tarball=$root/usr/src/linux-source-$series.tar.xz
# a kernel built here from the chroot's source (rig/build-kernel.sh
# --series 7.2): its headers here, the source there
if [ -z "$root" ] && [ ! -r "$tarball" ] && [ -r "$sid$tarball" ]; then
	tarball=$sid$tarball
fi
if [ ! -r "$tarball" ] && [ -n "$root" ]; then
	echo "build-dm-patched: installing linux-source-$series in $root"
	# (apt's output, and its complaint about /dev/pts in the chroot, dropped)
	chroot "$root" apt-get -q -o Acquire::Check-Valid-Until=false update >/dev/null 2>&1 ||
		{ echo "build-dm-patched: apt-get update failed in $root"; exit 1; }
	chroot "$root" env DEBIAN_FRONTEND=noninteractive \
		apt-get -q -y --no-install-recommends install "linux-source-$series" >/dev/null 2>&1 ||
		{ echo "build-dm-patched: could not install linux-source-$series in $root"; exit 1; }
fi
[ -r "$tarball" ] || { echo "build-dm-patched: no $tarball (apt install linux-source-$series)"; exit 1; }

start=$(date +%s)
rm -rf "$out"
# The patches name drivers/md/... and include/linux/{bio,device-mapper}.h:
# keep that layout under src/; the patched headers go ahead of the
# kernel's on the include path.
src=$out/src
_dmb_extract_tree "$tarball" "$series" "$src" include/linux/bio.h include/linux/device-mapper.h
n=0
for p in "$patches"/[0-9][0-9]-*.patch; do
	n=$((n + 1))
	patch -p1 -d "$src" -s --no-backup-if-mismatch <"$p" ||
		{ echo "build-dm-patched: $p does not apply"; exit 1; }
	echo "build-dm-patched: applied ${p##*/}"
done
for p in "${dietp[@]}"; do
	n=$((n + 1))
	patch -p1 -d "$src" -s --no-backup-if-mismatch <"$p" ||
		{ echo "build-dm-patched: $p does not apply"; exit 1; }
	echo "build-dm-patched: applied diet/${p##*/}"
done
grep -q 'static inline void bio_set_dev_no_blkg' "$src/include/linux/bio.h" ||
	{ echo "build-dm-patched: the series did not add bio_set_dev_no_blkg()"; exit 1; }
grep -q 'static inline void dm_remap_set_dev' "$src/include/linux/device-mapper.h" ||
	{ echo "build-dm-patched: the series did not add dm_remap_set_dev()"; exit 1; }
grep -q 'dm_remap_set_dev(' "$src/drivers/md/dm-linear.c" ||
	{ echo "build-dm-patched: dm-linear does not use dm_remap_set_dev()"; exit 1; }

# a chroot build sees only the module's folder: the headers go there
mkdir -p "$src/drivers/md/include/linux"
cp "$src/include/linux/bio.h" "$src/include/linux/device-mapper.h" "$src/drivers/md/include/linux/"
_dmb_build build-dm-patched "$src/drivers/md" "$kdir" "$root" "$out/build.log" \
	"LINUXINCLUDE := -I$src/drivers/md/include \$(LINUXINCLUDE)" \
	"obj-m += dm-crypt.o dm-switch.o dm-unstripe.o"
for m in $mods; do
	cp "$src/drivers/md/$m.ko" "$out/$m.ko"
	_dmb_check_vermagic build-dm-patched "$out/$m.ko" "$kver"
done
if [ "$diet" -gt 0 ]; then
	printf '%s\n' "${dietp[@]##*/}" >"$out/diet"
	echo "build-dm-patched: $out/{${mods// /,}}.ko for $kver, $n patches of $patches and the first $diet of $dietdir, built in $(($(date +%s) - start)) s"
else
	echo "build-dm-patched: $out/{${mods// /,}}.ko for $kver, $n patches of $patches, built in $(($(date +%s) - start)) s"
fi
