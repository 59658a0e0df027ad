# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# The guest launcher's library (rig/vm: boot a Debian kernel in QEMU with
# virtme-ng and run one command inside; KVM only where the CPU has
# hardware virtualisation, else TCG).  Its callers (tests/vm-run,
# bench/vm-*, bench/demo) source it too, for what they need to know
# before the boot: the kernel (_guest_kver), the module (_guest_module),
# the accelerator (_guest_kind, _guest_icount), and tests/lib/totals.sh
# for _guest_accel.

# _guest_accel: vng's flag for the accelerator ("" for KVM)
_guest_accel() {
	if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
		echo ""
	else
		echo --disable-kvm
	fi
}

# _guest_icount [on|off]: whether the guest runs under QEMU's instruction
# counter: the argument if given, else on if FL_ICOUNT=1, else off
_guest_icount() {
	case ${1:-} in
	on|off) echo "$1" ;;
	'') if [ "${FL_ICOUNT:-0}" = 1 ]; then echo on; else echo off; fi ;;
	*) echo "icount $1: on or off" >&2; return 2 ;;
	esac
}

# _guest_kind [ICOUNT]: the accelerator, for the runners' first line and
# BENCH_GUEST (ICOUNT as _guest_icount takes it)
_guest_kind() {
	if [ "$(_guest_icount "${1:-}")" = on ]; then
		echo "TCG -icount shift=0,sleep=off, 1 vCPU"
	elif [ -n "$(_guest_accel)" ]; then
		echo "TCG (QEMU software emulation, one host thread)"
	else
		echo KVM
	fi
}

# _guest_module KVER: the module under test for KVER: $FL_MODULE if set,
# else build/KVER/dm-fastlinear.ko (make kmod) if built, else the
# top-level one (make)
_guest_module() {
	local src

	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	if [ -n "${FL_MODULE:-}" ]; then
		realpath -m "$FL_MODULE"
	elif [ -e "$src/build/$1/dm-fastlinear.ko" ]; then
		echo "$src/build/$1/dm-fastlinear.ko"
	else
		echo "$src/dm-fastlinear.ko"
	fi
}

# _guest_dm_mod KVER CORE: the dm-mod.ko to insmod for dm core CORE: none
# for stock (the kernel's own), else built from Debian's source by
# rig/build-dm-CORE.sh (nofix: without upstream 2df8b310bcfe; patched:
# with upstream/'s series) into build/dm-CORE-KVER/; status 1 if the
# build fails, 2 for an unknown core.  With FL_DIET=N (patched only) the
# patched core carries the first N patches of upstream/diet/ too, built
# by rig/build-dm-patched.sh --diet N into build/dm-diet-N-KVER/
_guest_dm_mod() {
	local rig build

	rig=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	build=$(dirname "$rig")/build
	if [ -n "${FL_DIET:-}" ]; then
		[ "$2" = patched ] || { echo "FL_DIET=$FL_DIET: the diet series needs dm core patched, not $2" >&2; return 2; }
		[[ $FL_DIET =~ ^[1-9][0-9]*$ ]] || { echo "FL_DIET=$FL_DIET: a number of diet patches, 1 or more" >&2; return 2; }
		mkdir -p "$build"
		(
			flock 9 || exit 1
			"$rig/build-dm-patched.sh" --diet "$FL_DIET" "$1" "$build/dm-diet-$FL_DIET-$1" >&2
		) 9>"$build/dm-diet-$FL_DIET-$1.lock" || return 1
		realpath -m "$build/dm-diet-$FL_DIET-$1/dm-mod.ko"
		return 0
	fi
	case $2 in
	stock) ;;
	nofix|patched)
		# one build at a time: two shards of a core start together, and
		# the second one's fresh start (rm -rf) broke the first's build
		mkdir -p "$build"
		(
			flock 9 || exit 1
			"$rig/build-dm-$2.sh" "$1" "$build/dm-$2-$1" >&2
		) 9>"$build/dm-$2-$1.lock" || return 1
		realpath -m "$build/dm-$2-$1/dm-mod.ko"
		;;
	*) echo "unknown dm core $2 (stock, nofix or patched)" >&2; return 2 ;;
	esac
}

# _guest_kver [KVER]: KVER, else the kernel the module under test was
# built for ($FL_MODULE, else the top-level dm-fastlinear.ko)
_guest_kver() {
	local src

	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	if [ -n "${1:-}" ]; then
		echo "$1"
	else
		modinfo -F vermagic "${FL_MODULE:-$src/dm-fastlinear.ko}" 2>/dev/null | awk '{ print $1 }'
	fi
}

# _guest_prepare WHO KVER CORE OUT: what rig/vm does before the boot.
# Checks that KVER's image and the module under test (_guest_module) are
# there, builds the dm core (_guest_dm_mod), makes OUT afresh with a copy
# of the module (the module as it was at the start, whatever gets rebuilt
# meanwhile; the suite's test module beside it, in OUT/test/), and sets
# image and guest_env: the environment the guest's command gets
# (FL_DM_CORE, FL_MODPARAMS, FL_MODULE: the copy, FL_DM_MOD for a rebuilt
# dm core, and FL_DIET when set).  Status 1 with a message if something
# is missing, 2 for an unknown dm core.
_guest_prepare() {
	local who=$1 kver=$2 core=$3 out=$4 module dm_mod

	image=/boot/vmlinuz-$kver
	module=$(_guest_module "$kver")
	[ -r "$image" ] || { echo "$who: no $image"; return 1; }
	[ -r "$module" ] || { echo "$who: no $module (make kmod KVER=$kver)"; return 1; }
	dm_mod=$(_guest_dm_mod "$kver" "$core") || return
	rm -rf "$out"
	mkdir -p "$out"
	cp "$module" "$out/dm-fastlinear.ko"
	# the suite's test module (make kmod), where tests look for it
	if [ -r "$(dirname "$module")/test/fl-test-bio.ko" ]; then
		mkdir -p "$out/test"
		cp "$(dirname "$module")/test/fl-test-bio.ko" "$out/test/"
	fi
	guest_env=(FL_DM_CORE="$core" FL_MODPARAMS="${FL_MODPARAMS:-}" FL_MODULE="$out/dm-fastlinear.ko")
	[ -z "$dm_mod" ] || guest_env+=(FL_DM_MOD="$dm_mod")
	[ -z "${FL_DIET:-}" ] || guest_env+=(FL_DIET="$FL_DIET")
	echo "$who: kernel $kver, dm core $core${FL_DIET:+ + diet 1..$FL_DIET}, module $module"
}

# vng's own chatter and the boot loader's on its stderr (and virtme-init's
# "Powering off." once the command has ended: the command's last line
# stays the last line)
_guest_noise='^(\[ *[0-9]+\.[0-9]+\]|virtme: waiting for virtiofsd|fuse: invalid argument|virtme-run: failed to start virtiofsd|Probing EDD|Memory KASLR|Poking KASLR|Powering off\.[[:space:]]*$)'

# modules udev's coldplug would load in the guest and no test or bench
# uses (_guest_run)
_guest_unused_mods=kvm,kvm_amd,kvm_intel,ccp,ahci,libahci,libata,sr_mod,cdrom,sg,psmouse,pcspkr,serio_raw,i6300esb,iTCO_wdt,iTCO_vendor_support,lpc_ich,i2c_i801,intel_pmc_bxt,aesni_intel,ghash_clmulni_intel

# _guest_run OUT TIMEOUT IMAGE CMD ICOUNT [APPEND]: boot IMAGE, run the
# shell command CMD, OUT writable (rig/vm), with APPEND (kernel parameters,
# rig/vm --append) at the end of the kernel's command line.  A crash must
# end the run at once (oops=panic, panic=-1) and say why: the kernel
# console (warnings and worse) goes to OUT/kernel.log; the guest's own
# stderr still reaches ours.
_guest_run() {
	local out=$1 timeout=$2 image=$3 cmd=$4 icount=$5 append=${6:-} accel cpus=2
	local args="oops=panic panic=-1 softlockup_panic=1 loglevel=5"
	local -a qopts=()

	# udev's coldplug loads drivers for QEMU's PC devices (AHCI, the DVD
	# drive, watchdogs, KVM for the emulated CPU's SVM, AES-NI), which
	# under TCG took 22 s of a 57 s boot; the tests use none of them.
	# Blacklisted for modprobe's alias lookups only: an explicit modprobe
	# of one still loads it.
	args+=" modprobe.blacklist=$_guest_unused_mods"
	[ -z "$append" ] || args+=" $append"

	accel=$(_guest_accel)
	# Under TCG one host thread runs both vCPUs (thread=single).  With a
	# thread per vCPU, QEMU 7.2's default, a guest patching its own code
	# livelocks now and then: a vCPU loops on a stale int3 (in __schedule,
	# interrupts off) while the patching vCPU waits for it to take an IPI.
	# Enabling and disabling a kprobe event (record-cmd on) hung a guest
	# within 100 cycles that way; with thread=single, 1000 cycles ran clean.
	# It costs ~8% of a guest's time and frees a host CPU for another guest.
	[ -n "$accel" ] && qopts=("--qemu-opts=-accel tcg,thread=single")
	# icount on (rig/vm --icount on, bench/vm-cost): one vCPU under TCG
	# with QEMU's instruction counter, whose clock advances 1 ns per guest
	# instruction and skips idle time: a CPU-bound fio run's latencies
	# are instruction counts, whatever the host is doing.  TCG only.
	if [ "$icount" = on ]; then
		accel=--disable-kvm cpus=1
		qopts=("--qemu-opts=-accel tcg,thread=single -icount shift=0,sleep=off")
	fi
	{
		# shellcheck disable=SC2086
		timeout --foreground -k 10 "$timeout" \
			vng -r "$image" $accel --cpus "$cpus" --memory 2G --rwdir="$out" \
			--verbose --append "$args" --exec "$cmd" "${qopts[@]}" 2>&1 >&3 3>&- |
			tee "$out/kernel.log" | grep --line-buffered -vE "$_guest_noise" >&2
		return "${PIPESTATUS[0]}"
	} 3>&1
}

# _guest_died WHO OUT RC TIMEOUT: report a guest that never finished (RC:
# _guest_run's status; 124: timeout killed it after TIMEOUT seconds)
_guest_died() {
	if [ "$3" = 124 ]; then
		echo "$1: the guest did not finish within its timeout ($4 s): hang, or too slow"
	else
		echo "$1: the guest died before it finished (rc $3): crash or hang"
	fi
	echo "$1: its last kernel messages ($2/kernel.log):"
	tail -n 40 "$2/kernel.log" | sed 's/^/    /'
}

# _keep_dir WHO STUDY NAME: bench/results/STUDY/NAME, where a bench run
# asked to be kept (--save) goes; refused (a message, exit 2) from a tree
# with changes, whose module and scripts no commit records, or where
# that run exists
_keep_dir() {
	local src tree dir

	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	tree=$(git -C "$src" describe --always --dirty 2>/dev/null)
	case $tree in
	'' | *-dirty) echo "$1: --save needs a clean git tree (git describe: ${tree:-none})" >&2; exit 2 ;;
	esac
	dir=$src/bench/results/$2/$3
	[ -e "$dir" ] && { echo "$1: $dir exists" >&2; exit 2; }
	echo "$dir"
}

# _keep WHO DIR FILE...: copy a finished run's FILEs (meta, CSVs, the
# summary: not its console log, traces or images) to DIR
_keep() {
	local who=$1 dir=$2
	shift 2
	mkdir -p "$dir" && cp "$@" "$dir/" && echo "$who: kept in $dir"
}
