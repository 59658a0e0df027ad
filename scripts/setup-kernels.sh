#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The newer kernels of the test matrix, next to bookworm's 6.1 (run as
# root; scripts/setup.sh calls it; idempotent):
#   6.12  the newest build in bookworm-backports: image and headers (apt)
#   7.2   the newest build in sid: its headers need gcc-16, so they live in
#         a debootstrap'd sid chroot (make builds there, see
#         scripts/chroot-make); the image is unpacked for the guest only.
#   6.12-rt  the same build's PREEMPT_RT flavour (linux-image-6.12.N+deb12-
#         rt-amd64 and its headers), only when FL_KERNELS names it: not
#         part of the default matrix (upstream/diet/README.md, PREEMPT_RT)
# Writes the matrix to /var/lib/dm-fastlinear/kernels, one "KVER SYSROOT"
# line per kernel (SYSROOT "-" for the host).  FL_KERNELS="6.12 7.2"
# (default) picks the series; FL_KERNELS="" installs none;
# FL_KERNELS="6.12 7.2 6.12-rt" adds the RT flavour to the matrix (so
# make check-kernels and bench-cost-gate run on it too).

set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
# shellcheck source=scripts/apt-mirror.sh
. "$(dirname "$0")/apt-mirror.sh"
# the Debian mirror of the machine's own apt sources, for the extra suites
# (not looked for when FL_KERNELS="" installs none)
[ -z "${FL_KERNELS-6.12 7.2}" ] || mirror=$(apt_mirror)
state=/var/lib/dm-fastlinear
sid=$state/sid
list=$state/kernels
mkdir -p "$state"

# apt on the host with private lists for one extra suite, so the
# machine's own sources and lists stay as they were
apt_for() {	# SUITE: sets apt_opts
	local dir=$state/apt-$1
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	echo "deb $mirror $1 main" >"$dir/sources.list"
	apt_opts=(-o Dir::Etc::SourceList="$dir/sources.list"
		-o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache"
		-o Acquire::Check-Valid-Until=false)
	apt-get "${apt_opts[@]}" update >&2
}

newest() {	# PATTERN: the newest package name apt knows that matches
	"$@" | awk '{ print $1 }' | sort -V | tail -1
}

k612() {	# [FLAVOUR]: rt for the PREEMPT_RT build (default: amd64's own)
	local pkg kver flavour=${1:+$1-}
	apt_for bookworm-backports
	pkg=$(newest apt-cache "${apt_opts[@]}" search --names-only "^linux-image-6\.12\.[0-9]+\+deb12-${flavour}amd64\$")
	[ -n "$pkg" ] || { echo "setup-kernels: no 6.12 ${flavour}amd64 image in bookworm-backports" >&2; return 1; }
	kver=${pkg#linux-image-}
	if [ ! -e "/lib/modules/$kver/build/Makefile" ] || [ ! -e "/boot/vmlinuz-$kver" ]; then
		# INITRD=No: the guest runner boots without an initramfs, and
		# making one is most of the install time
		INITRD=No apt-get "${apt_opts[@]}" install -y --no-install-recommends \
			-t bookworm-backports "linux-image-$kver" "linux-headers-$kver" >&2
	fi
	echo "$kver -"
}

k72() {
	local hdr kver deb dir
	if [ ! -x "$sid/usr/bin/apt-get" ]; then
		apt-get install -y --no-install-recommends debootstrap >&2
		rm -rf "$sid"
		debootstrap --variant=minbase sid "$sid" "$mirror" >&2
	fi
	# the mirror's sid Release may be past its Valid-Until
	local capt=(chroot "$sid" apt-get -o Acquire::Check-Valid-Until=false)
	"${capt[@]}" update >&2
	hdr=$(newest chroot "$sid" apt-cache search --names-only '^linux-headers-7\.2\.[0-9]+\+deb14-amd64$')
	[ -n "$hdr" ] || { echo "setup-kernels: no 7.2 headers in sid" >&2; return 1; }
	kver=${hdr#linux-headers-}
	# linux-source-7.2: the tree upstream/series/v7.2 applies to, for the patched
	# dm core (rig/build-dm-patched.sh)
	"${capt[@]}" install -y --no-install-recommends gcc-16 make libelf-dev "$hdr" \
		linux-source-7.2 xz-utils >&2
	if [ ! -e "/boot/vmlinuz-$kver" ] || [ ! -d "/lib/modules/$kver/kernel" ]; then
		# sid splits the image (linux-binary, -modules, -base) and keeps
		# vmlinuz in /usr/lib/modules/KVER; unpack, do not install it:
		# the host never boots it
		dir=$(mktemp -d "$sid/root/k72.XXXXXX")
		chroot "$sid" sh -c "cd /root/${dir##*/} && apt-get -o Acquire::Check-Valid-Until=false \
			download linux-binary-$kver linux-modules-$kver linux-base-$kver" >&2
		for deb in "$dir"/*.deb; do
			dpkg-deb -x "$deb" "$dir/x"
		done
		rm -rf "/lib/modules/$kver"
		cp -a "$dir/x/usr/lib/modules/$kver" /lib/modules/
		install -m 0644 "/lib/modules/$kver/vmlinuz" "/boot/vmlinuz-$kver"
		install -m 0644 "/lib/modules/$kver/config" "/boot/config-$kver"
		install -m 0644 "/lib/modules/$kver/System.map" "/boot/System.map-$kver"
		depmod -a "$kver"
		rm -rf "$dir"
	fi
	echo "$kver $sid"
}

: >"$list.new"
for series in ${FL_KERNELS-6.12 7.2}; do
	case $series in
	6.12) k612 >>"$list.new" ;;
	6.12-rt) k612 rt >>"$list.new" ;;
	7.2) k72 >>"$list.new" ;;
	*) echo "setup-kernels: unknown series $series (6.12, 6.12-rt, 7.2)" >&2; exit 1 ;;
	esac
done
mv "$list.new" "$list"
cat "$list"
