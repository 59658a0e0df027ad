# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Shared by build-dm-nofix.sh and build-dm-patched.sh: dm-mod.ko built out
# of tree from the drivers/md of Debian's linux-source tarball, against a
# kernel's headers, on the host or in a chroot.

# _dmb_extract TARBALL SERIES DIR: drivers/md/dm*.[ch] and drivers/md/Makefile
# of TARBALL (linux-source-SERIES.tar.xz) into DIR, without their path
_dmb_extract() {
	local tarball=$1 series=$2 dir=$3

	mkdir -p "$dir"
	tar -C "$dir" -xJf "$tarball" --strip-components=3 --wildcards \
		"linux-source-$series/drivers/md/dm*.[ch]" "linux-source-$series/drivers/md/Makefile"
}

# _dmb_extract_tree TARBALL SERIES DIR [PATH...]: the same files, and PATHs
# of the tree, into DIR keeping their path in the tree (DIR/drivers/md/...)
_dmb_extract_tree() {
	local tarball=$1 series=$2 dir=$3 p
	local -a more=()

	shift 3
	for p in "$@"; do
		more+=("linux-source-$series/$p")
	done
	mkdir -p "$dir"
	tar -C "$dir" -xJf "$tarball" --strip-components=1 --wildcards \
		"linux-source-$series/drivers/md/dm*.[ch]" "linux-source-$series/drivers/md/Makefile" \
		"${more[@]}"
}

# _dmb_build WHO DIR KDIR ROOT LOG [KBUILD-LINE...]: build DIR/dm-mod.ko from
# the files _dmb_extract put in DIR, against the headers at KDIR (inside ROOT,
# a chroot to build in through scripts/chroot-make, or "" for this machine),
# with KBUILD-LINEs appended to its Kbuild (e.g. "obj-m += dm-crypt.o" for
# more modules of DIR); make's output goes to LOG.  Can run again in DIR
# after its sources changed (kbuild rebuilds what they touch).
# dm-mod's objects: those drivers/md/Makefile lists, plus the ones the
# kernel's configuration adds.
_dmb_build() {
	local who=$1 dir=$2 kdir=$3 root=$4 log=$5 objs pair
	shift 5

	# (a second build in DIR: drivers/md's Makefile is Makefile.md already)
	[ -f "$dir/Makefile.md" ] || mv "$dir/Makefile" "$dir/Makefile.md"
	# shellcheck disable=SC1003
	objs=$(sed -n '/^dm-mod-y/,/[^\\]$/p' "$dir/Makefile.md" | tr -d '\\' | sed 's/^dm-mod-y[[:space:]]*+=//')
	for pair in DM_INIT:dm-init.o DM_UEVENT:dm-uevent.o BLK_DEV_ZONED:dm-zone.o \
		IMA:dm-ima.o DM_AUDIT:dm-audit.o; do
		grep -q "^CONFIG_${pair%%:*}=y" "$root$kdir/.config" && objs="$objs ${pair#*:}"
	done
	# one line, single spaces
	# shellcheck disable=SC2086,SC2116
	objs=$(echo $objs)
	{
		printf 'obj-m := dm-mod.o\ndm-mod-y := %s\n' "$objs"
		if [ $# -gt 0 ]; then
			printf '%s\n' "$@"
		fi
	} >"$dir/Kbuild"
	if [ -n "$root" ]; then
		"$(dirname "${BASH_SOURCE[0]}")/../scripts/chroot-make" "$root" "$dir" \
			-C "$kdir" M="$dir" modules >"$log" 2>&1
	else
		make -C "$kdir" M="$dir" modules >"$log" 2>&1
	fi || { tail -20 "$log"; echo "$who: build failed"; return 1; }
	echo "$who: $dir/dm-mod.ko (objects: $objs)"
}

# _dmb_check_vermagic WHO KO KVER: the module was built for KVER
_dmb_check_vermagic() {
	local who=$1 ko=$2 kver=$3 vm

	vm=$(modinfo -F vermagic "$ko" | awk '{ print $1 }')
	[ "$vm" = "$kver" ] && return 0
	echo "$who: $ko has vermagic $vm, not $kver"
	return 1
}
