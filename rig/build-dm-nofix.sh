#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build dm-mod.ko for KVER from Debian's linux-source with the one line of
# upstream 2df8b310bcfe ("dm: use bio_clone_blkg_association") taken out
# of dm_submit_bio_remap(): a dm core as on kernels the fix has not
# reached, for the tests that must run on both cores.
# Usage: build-dm-nofix.sh KVER OUTDIR   (reuses OUTDIR/dm-mod.ko if built)

set -eu
# shellcheck source=rig/dm-mod-build.sh
. "$(dirname "$0")/dm-mod-build.sh"
kver=$1
out=$2
kdir=/lib/modules/$kver/build
series=$(echo "$kver" | cut -d. -f1-2)
tarball=/usr/src/linux-source-$series.tar.xz

[ -s "$out/dm-mod.ko" ] && [ "$out/dm-mod.ko" -nt "$0" ] && exit 0
[ -r "$tarball" ] || { echo "build-dm-nofix: no $tarball (apt install linux-source-$series)"; exit 1; }
rm -rf "$out"
mkdir -p "$out"
_dmb_extract "$tarball" "$series" "$out"

line='bio_clone_blkg_association(tgt_clone, io->orig_bio);'
[ "$(grep -c "$line" "$out/dm.c")" = 1 ] ||
	{ echo "build-dm-nofix: dm.c of $series does not carry the re-association"; exit 1; }
# in a basic regular expression the line's ( ) > are literal
sed -i "/$line/d" "$out/dm.c"
if grep -q "bio_clone_blkg_association(tgt_clone" "$out/dm.c"; then
	echo "build-dm-nofix: could not remove the re-association"
	exit 1
fi

_dmb_build build-dm-nofix "$out" "$kdir" "" "$out/build.log"
