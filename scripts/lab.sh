#!/usr/bin/env bash
# lab.sh — real Soft-RoCE (rdma_rxe) in a qemu VM on a machine without RDMA.
#
# Usage:
#   scripts/lab.sh run [options] [--] 'shell command'
#   scripts/lab.sh prepare            # install packages, fetch kernel, build initramfs
#
# Boots Debian's stock kernel (the one linux-image-amd64 depends on) under
# qemu TCG. The guest's root is an overlay: this machine's / over 9p as the
# read-only lower layer, a tmpfs as the upper one, so every host program
# (rping, ibv_devinfo, go-built binaries) runs inside and nothing the guest
# writes reaches the host. The command runs as root in the current directory
# (same path); its output is streamed back and its exit code is returned.
#
# Options:
#   --two-hosts   boot two VMs (A and B), each with its own kernel and rxe,
#                 joined by qemu's socket netdev on 127.0.0.1. The command
#                 runs on A; `scripts/lab-remote.sh` inside A runs commands
#                 on B (see that script).
#   --no-rxe      do not load rdma_rxe and create no rxe link (single VM).
#   --kvm         use KVM instead of TCG (does not work on every host).
#   --timeout S   kill the VM(s) after S seconds (default 1200).
#   --smp N       vCPUs per VM (default 2, 1 with --two-hosts).
#
# Topology, single VM (the default):
#   veth0 10.9.0.1/24 fd09::1/64  rdma device rxe0
#   veth1 10.9.0.2/24 fd09::2/64  rdma device rxe1
#   Kernel 6.1: two peers in one kernel must use the same rxe device
#   (e.g. both on 10.9.0.1); rxe0<->rxe1 traffic fails there.
# Topology, --two-hosts:
#   A: eth0 10.9.1.1/24 fd09:1::1/64 rxe0     B: eth0 10.9.1.2/24 fd09:1::2/64 rxe0
#
# Environment inside the guest: LAB_ROLE (single|a|b), LAB_OUT (a directory
# shared with the host, writable), LAB_XCHG (two-hosts only).
# Exit codes: the command's own, or 125 when the lab itself failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${RDMACTL_LAB_CACHE:-$repo/.lab}

die() { echo "lab: $*" >&2; exit 125; }
log() { [ -n "${LAB_QUIET:-}" ] || echo "lab: $*" >&2; }

# fetch_kernel unpacks the kernel package linux-image-amd64 points at into
# $cache/kernel and indexes its modules there; the guest reads that tree
# over 9p, so the whole module set (and autoload) is available inside.
fetch_kernel() {
	if [ -f "$cache/kernel/.done" ]; then
		kver=$(cat "$cache/kernel/.done")
		return
	fi
	local pkg dl
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
	if [ -z "$pkg" ]; then
		apt-get update -qq >/dev/null 2>&1 || true
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
	fi
	[ -n "$pkg" ] || die "cannot tell which kernel package linux-image-amd64 depends on (apt-get update?)"
	log "fetching $pkg"
	rm -rf "$cache/kernel" "$cache/dl"
	mkdir -p "$cache/dl" "$cache/kernel"
	dl=$cache/dl
	(cd "$dl" && apt-get download "$pkg" >/dev/null 2>&1) || die "apt-get download $pkg failed"
	dpkg -x "$dl"/"$pkg"_*.deb "$cache/kernel"
	rm -rf "$dl"
	kver=$(ls "$cache/kernel/lib/modules")
	depmod -b "$cache/kernel" "$kver"
	echo "$kver" >"$cache/kernel/.done"
}

# build_initramfs makes a busybox initramfs holding only what is needed to
# reach the 9p share (virtio, 9p, overlay); everything else loads from the
# shared module tree.
build_initramfs() {
	local stamp="$kver $(cat "$here/lab-init.sh" | sha1sum | cut -c1-12)"
	if [ -f "$cache/initramfs.cpio.gz" ] && [ "$(cat "$cache/initramfs.stamp" 2>/dev/null)" = "$stamp" ]; then
		return
	fi
	log "building initramfs"
	local root=$cache/initramfs.d m
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,lower,upper,newroot,lib/modules,boot-modules}
	cp /bin/busybox "$root/bin/busybox"
	cp "$here/lab-init.sh" "$root/init"
	chmod +x "$root/init"
	: >"$root/boot-modules/order"
	for m in virtio_pci virtio_net 9pnet_virtio 9p overlay; do
		modprobe -d "$cache/kernel" -S "$kver" --show-depends "$m" | awk '$1=="insmod"{print $2}'
	done | awk '!seen[$0]++' | while read -r m; do
		cp "$m" "$root/boot-modules/"
		basename "$m" >>"$root/boot-modules/order"
	done
	echo "$kver" >"$root/kver"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$cache/initramfs.cpio.gz.tmp"
	mv "$cache/initramfs.cpio.gz.tmp" "$cache/initramfs.cpio.gz"
	echo "$stamp" >"$cache/initramfs.stamp"
	rm -rf "$root"
}

prepare() {
	"$here/install-deps.sh" || die "cannot install the lab's packages"
	mkdir -p "$cache"
	# One preparer at a time; concurrent runs wait here, then reuse the cache.
	exec 9>"$cache/.lock"
	flock 9
	fetch_kernel
	build_initramfs
	flock -u 9
}

# qemu_cmd prints the qemu command line for one VM.
#   $1 role (single|a|b)  $2 run dir  $3 extra netdev args (may be empty)
qemu_args() {
	local role=$1 dir=$2
	local accel=(-accel tcg -cpu max)
	[ -n "$use_kvm" ] && accel=(-accel kvm -cpu host)
	printf '%s\0' "${accel[@]}" -m 1024 -smp "$smp" -nodefaults -nographic -no-reboot \
		-kernel "$cache/kernel/boot/vmlinuz-$kver" -initrd "$cache/initramfs.cpio.gz" \
		-append "console=ttyS0 quiet loglevel=3 panic=-1 lab.role=$role lab.kver=$kver lab.cache=$cache lab.norxe=$no_rxe lab.guest=$here/lab-guest.sh" \
		-serial "file:$dir/console.log" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$dir/out,mount_tag=labout,security_model=none,multidevs=remap"
	if [ -n "$xchg" ]; then
		printf '%s\0' -virtfs "local,path=$xchg,mount_tag=labxchg,security_model=none,multidevs=remap"
	fi
}

start_vm() {
	local role=$1 dir=$2
	shift 2
	mkdir -p "$dir/out"
	local args=()
	while IFS= read -r -d '' a; do args+=("$a"); done < <(qemu_args "$role" "$dir")
	qemu-system-x86_64 "${args[@]}" "$@" </dev/null >"$dir/qemu.log" 2>&1 &
	echo $!
}

run() {
	local two_hosts="" cmd
	no_rxe=0 use_kvm="" smp="" timeout_s=1200 xchg=""
	while [ $# -gt 0 ]; do
		case $1 in
		--two-hosts) two_hosts=1 ;;
		--no-rxe) no_rxe=1 ;;
		--kvm) use_kvm=1 ;;
		--timeout) timeout_s=$2; shift ;;
		--smp) smp=$2; shift ;;
		--) shift; break ;;
		-*) die "unknown option $1 (see the header of $0)" ;;
		*) break ;;
		esac
		shift
	done
	[ $# -gt 0 ] || die "no command given: scripts/lab.sh run [options] -- 'command'"
	[ -n "$two_hosts" ] && [ "$no_rxe" = 1 ] && die "--no-rxe is for the single VM"
	cmd="$*"
	[ -n "$smp" ] || { [ -n "$two_hosts" ] && smp=1 || smp=2; }
	prepare

	local run_dir
	run_dir=$(mktemp -d "$cache/run.XXXXXX")
	local pids=()
	cleanup() {
		for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
		[ -n "${LAB_KEEP:-}" ] || rm -rf "$run_dir"
	}
	trap cleanup EXIT
	trap 'exit 130' INT TERM

	local main=$run_dir/a
	mkdir -p "$main/out"
	{
		printf 'cd %q || exit 125\n' "$PWD"
		printf '%s\n' "$cmd"
	} >"$main/out/cmd.sh"
	: >"$main/out/output"

	if [ -n "$two_hosts" ]; then
		xchg=$run_dir/xchg
		mkdir -p "$xchg"
		local port=$((20000 + RANDOM % 20000))
		local mac_a=52:54:00:12:34:01 mac_b=52:54:00:12:34:02
		pids+=("$(start_vm a "$main" -netdev "socket,id=n0,listen=127.0.0.1:$port" -device "virtio-net-pci,netdev=n0,mac=$mac_a")")
		sleep 1
		mkdir -p "$run_dir/b/out"
		pids+=("$(start_vm b "$run_dir/b" -netdev "socket,id=n0,connect=127.0.0.1:$port" -device "virtio-net-pci,netdev=n0,mac=$mac_b")")
	else
		pids+=("$(start_vm single "$main")")
	fi

	# Stream the command's output while the main VM runs.
	tail -n +1 -f --pid="${pids[0]}" "$main/out/output" &
	local tailpid=$!
	local waited=0
	while kill -0 "${pids[0]}" 2>/dev/null; do
		sleep 1
		waited=$((waited + 1))
		if [ "$waited" -ge "$timeout_s" ]; then
			echo "lab: timed out after ${timeout_s}s; killing the VM" >&2
			kill "${pids[@]}" 2>/dev/null || true
			break
		fi
	done
	wait "$tailpid" 2>/dev/null || true

	if [ ! -s "$main/out/rc" ]; then
		echo "lab: the VM did not finish the command. Last console lines:" >&2
		tail -n 30 "$main/console.log" >&2 2>/dev/null || true
		tail -n 5 "$main/qemu.log" >&2 2>/dev/null || true
		exit 125
	fi
	exit "$(cat "$main/out/rc")"
}

case ${1:-} in
run) shift; run "$@" ;;
prepare) prepare ;;
*) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
