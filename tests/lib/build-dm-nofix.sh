#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build dm-mod.ko for KVER from Debian's linux-source with the one line of
# upstream 2df8b310bcfe ("dm: use bio_clone_blkg_association") taken out
# of dm_submit_bio_remap(): a dm core as on kernels the fix has not
# reached, for the tests that must run on both cores.
# Usage: build-dm-nofix.sh KVER OUTDIR   (reuses OUTDIR/dm-mod.ko if built)

set -eu
kver=$1
out=$2
kdir=/lib/modules/$kver/build
series=$(echo "$kver" | cut -d. -f1-2)
tarball=/usr/src/linux-source-$series.tar.xz

[ -s "$out/dm-mod.ko" ] && [ "$out/dm-mod.ko" -nt "$0" ] && exit 0
[ -r "$tarball" ] || { echo "build-dm-nofix: no $tarball (apt install linux-source-$series)"; exit 1; }
rm -rf "$out"
mkdir -p "$out"
tar -C "$out" -xJf "$tarball" --strip-components=3 --wildcards \
	"linux-source-$series/drivers/md/dm*.[ch]" "linux-source-$series/drivers/md/Makefile"

line='bio_clone_blkg_association(tgt_clone, io->orig_bio);'
[ "$(grep -c "$line" "$out/dm.c")" = 1 ] ||
	{ echo "build-dm-nofix: dm.c of $series does not carry the re-association"; exit 1; }
# in a basic regular expression the line's ( ) > are literal
sed -i "/$line/d" "$out/dm.c"
if grep -q "bio_clone_blkg_association(tgt_clone" "$out/dm.c"; then
	echo "build-dm-nofix: could not remove the re-association"
	exit 1
fi

# dm-mod's objects, as drivers/md/Makefile lists them, plus the ones this
# kernel's configuration adds.
objs=$(sed -n '/^dm-mod-y/,/[^\\]$/p' "$out/Makefile" | tr -d '\\' | sed 's/^dm-mod-y[[:space:]]*+=//')
cfg=$kdir/.config
for pair in DM_INIT:dm-init.o DM_UEVENT:dm-uevent.o BLK_DEV_ZONED:dm-zone.o \
	IMA:dm-ima.o DM_AUDIT:dm-audit.o; do
	grep -q "^CONFIG_${pair%%:*}=y" "$cfg" && objs="$objs ${pair#*:}"
done
mv "$out/Makefile" "$out/Makefile.md"
printf 'obj-m := dm-mod.o\ndm-mod-y := %s\n' "$(echo $objs)" >"$out/Kbuild"
make -C "$kdir" M="$out" modules >"$out/build.log" 2>&1 ||
	{ tail -20 "$out/build.log"; echo "build-dm-nofix: build failed"; exit 1; }
echo "build-dm-nofix: $out/dm-mod.ko (objects: $(echo $objs))"
