#!/bin/bash
# Install everything the build, lint and the guest test suite need on a
# Debian bookworm machine (run as root).  Idempotent.
set -euo pipefail
# shellcheck source=scripts/apt-mirror.sh
. "$(dirname "$0")/apt-mirror.sh"

KVER_PKG=${KVER_PKG:-amd64}	# linux-image-$KVER_PKG / linux-headers-$KVER_PKG
export DEBIAN_FRONTEND=noninteractive

apt-get update
apt-get install -y --no-install-recommends \
	linux-image-"$KVER_PKG" linux-headers-"$KVER_PKG" linux-source-6.1 \
	build-essential bc flex bison libelf-dev libssl-dev xz-utils sparse \
	qemu-system-x86 busybox-static kmod udev file iproute2 kbd \
	util-linux util-linux-extra python3 python3-argcomplete python3-requests \
	fio dmsetup e2fsprogs jq gnuplot-nox dkms debootstrap \
	lvm2 libdevmapper-dev libudev-dev pkg-config shellcheck cryptsetup-bin \
	debhelper dh-dkms dpkg-dev fakeroot lintian \
	libaio-dev libblkid-dev libedit-dev valgrind

# virtme-ng is only in sid (arch all; its dependencies come from bookworm,
# installed above).  Fetch it with a private apt state so the machine's own
# sources and package lists stay untouched, from the mirror they name.
if ! command -v vng >/dev/null; then
	mirror=$(apt_mirror)
	state=$(mktemp -d)
	mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
	echo "deb $mirror sid main" >"$state/sid.list"
	sidapt=(-o Dir::Etc::SourceList="$state/sid.list"
		-o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$state/lists"
		-o Dir::Cache="$state/cache")
	apt-get "${sidapt[@]}" update
	(cd "$state" && apt-get "${sidapt[@]}" download virtme-ng)
	dpkg -i "$state"/virtme-ng_*.deb
	rm -rf "$state"
fi

# Kernel source for checkpatch.pl and for the pre-fix dm-mod the blkcg
# tests build (rig/build-dm-nofix.sh).
src=/usr/src/linux-source-6.1
if [ ! -x "$src/scripts/checkpatch.pl" ]; then
	tar -C /usr/src -xJf /usr/src/linux-source-6.1.tar.xz \
		linux-source-6.1/scripts linux-source-6.1/drivers/md \
		linux-source-6.1/include
fi
# The newer kernels of the matrix (6.12 from bookworm-backports, 7.2 from
# sid with a sid chroot for its headers); FL_KERNELS="" skips them,
# FL_KERNELS="6.12 7.2 6.12-rt" adds 6.12's PREEMPT_RT flavour.
"$(dirname "$0")/setup-kernels.sh"
echo "setup done: $(vng --version 2>&1 | head -1), kernels: $(ls /lib/modules | tr '\n' ' ')"
