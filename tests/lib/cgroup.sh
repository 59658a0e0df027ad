# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# cgroup v2 for the tests: cgroups of the root with io and memory, their
# io.stat and io.max, iocost's model and QoS; sourced by common.sh.
# _cleanup (common.sh) calls _cg_cleanup.

FL_CGROOT=/sys/fs/cgroup

# _cg_create NAME: a child cgroup of the root with io and memory (cgroup
# writeback is attributed only with both).  Prints its path.
_cg_create() {
	local cg=$FL_CGROOT/fltest-$1

	echo "+io +memory" >"$FL_CGROOT/cgroup.subtree_control" ||
		_fail "cannot enable io and memory controllers"
	mkdir "$cg" || _fail "cannot create cgroup $cg"
	echo "$cg" >>"$FL_TMP/cgroups"
	echo "$cg"
}

# _cg_nest LEAF: make LEAF, a path below FL_CGROOT at any depth, with io
# enabled in the subtree_control of the root and of every level above
# the leaf (a cgroup that enables controllers takes no process: the
# leaf's own is left alone).  For bench/, whose cgroups _cleanup does not
# remove.
_cg_nest() {
	local d=$FL_CGROOT part

	echo +io >"$FL_CGROOT/cgroup.subtree_control" || return
	for part in $(realpath -m --relative-to="$FL_CGROOT" "$1" | tr / ' '); do
		d=$d/$part
		mkdir -p "$d" || return
		[ "$d" = "$1" ] || echo +io >"$d/cgroup.subtree_control" || return
	done
}

# _cg_run CGROUP CMD ARGS...: run CMD inside CGROUP.
_cg_run() {
	local cg=$1
	shift
	bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# _cg_stats CGROUP MAJ:MIN KEY...: the KEYs (rbytes, wbytes, rios, wios,
# ...) of the device in the cgroup's io.stat on one line, 0 where it has
# no line.  Read by the shell alone: under TCG every exec counts.
_cg_stats() {
	local cg=$1 d=$2 line kv k x stats_out=()
	local -A stats_kv=()

	shift 2
	# read in the shell, no exec: tests poll this (_cg_wait_stat)
	while read -r line; do
		[[ $line == "$d "* ]] || continue
		for kv in ${line#* }; do
			stats_kv[${kv%%=*}]=${kv#*=}
		done
	done <"$cg/io.stat" || return
	for k; do
		x=${stats_kv[$k]:-0}
		[[ $x =~ ^[0-9]+$ ]] || printf -v x %.0f "$x" 2>/dev/null || x=0
		stats_out+=("$x")
	done
	echo "${stats_out[*]}"
}

# _cg_stat CGROUP DEV KEY: KEY of block device DEV in the cgroup's io.stat.
_cg_stat() {
	_cg_stats "$1" "$(_devno "$2")" "$3"
}

# _cg_iomax CGROUP DEV LIMITS: set CGROUP's io.max on DEV, e.g. "wbps=1048576".
_cg_iomax() {
	echo "$(_devno "$2") $3" >"$1/io.max" ||
		_fail "cannot set io.max '$3' on $2 for $1"
	_log "io.max of $(basename "$1"): $(cat "$1/io.max" | tr '\n' ' ')"
}

# _cg_evacuate CGROUP: move every process of CGROUP to the root cgroup.
_cg_evacuate() {
	local pid i

	for ((i = 0; i < 50; i++)); do
		[ -n "$(cat "$1/cgroup.procs")" ] || return 0	# cgroupfs sizes are 0
		while read -r pid; do
			echo "$pid" >"$FL_CGROOT/cgroup.procs" 2>/dev/null
		done <"$1/cgroup.procs"
	done
	_fail "cannot move the processes out of $1: $(cat "$1/cgroup.procs" | tr '\n' ' ')"
}

# _cg_remove CGROUP: rmdir a cgroup made by _cg_create; returns rmdir's
# status (a failure is left to the caller).
_cg_remove() {
	rmdir "$1" || return 1
	sed -i "\\|^$1\$|d" "$FL_TMP/cgroups"
}

# _cg_wait_stat CGROUP DEV KEY MIN SECS: wait at most SECS seconds for KEY
# of DEV in CGROUP's io.stat to reach MIN (e.g. all of a job's bios
# submitted).  Returns 1 on a timeout, without failing the test (for use
# while a device is suspended).
_cg_wait_stat() {
	local i

	for ((i = 0; i < $5 * 10; i++)); do
		[ "$(_cg_stat "$1" "$2" "$3")" -ge "$4" ] && return 0
		sleep 0.1
	done
	return 1
}

_cg_cleanup() {
	local cg

	[ -s "$FL_TMP/cgroups" ] || return 0
	tac "$FL_TMP/cgroups" | while read -r cg; do
		# move stragglers to the root, then remove
		while read -r pid; do
			echo "$pid" >"$FL_CGROOT/cgroup.procs" 2>/dev/null
		done <"$cg/cgroup.procs"
		rmdir "$cg" 2>/dev/null
	done
	rm -f "$FL_TMP/cgroups"
}

# _have_cg_file FILE REASON: skip the test with REASON unless a fresh
# cgroup has FILE (a policy's interface, e.g. io.latency: on the root's
# children only); for a test's requires.  (A probe cgroup rmdir left is
# _cleanup's.)
_have_cg_file() {
	local cg

	cg=$(_cg_create have) || exit 1
	[ -e "$cg/$1" ] || _skip "$2"
	_cg_remove "$cg"
}

# _iocost_model DEVNO IOPS: iocost's linear model for the device: IOPS
# random or sequential reads a second, writes at 20000
_iocost_model() {
	echo "$1 ctrl=user model=linear rbps=4000000000 rseqiops=$2 rrandiops=$2 wbps=400000000 wseqiops=20000 wrandiops=20000" \
		>"$FL_CGROOT/io.cost.model" || _fail "cannot set io.cost.model"
	_log "io.cost.model: $(grep "^$1 " "$FL_CGROOT/io.cost.model")"
}

# _iocost_on DEVNO IOPS: iocost on the device with that model and vrate
# pinned at 100% (min=max=100): no latency heuristics
_iocost_on() {
	_iocost_model "$1" "$2"
	echo "$1 enable=1 ctrl=user min=100.00 max=100.00" \
		>"$FL_CGROOT/io.cost.qos" || _fail "cannot set io.cost.qos"
	_log "io.cost.qos: $(grep "^$1 " "$FL_CGROOT/io.cost.qos")"
}
