#!/usr/bin/env bash
# install-deps.sh — install on Debian what building rdmactl and running the
# lab VM need, and only what is missing. Used by `make`, scripts/lab.sh and
# .ci/run, so a fresh machine needs nothing by hand.
set -euo pipefail

missing=()
# check KIND TARGET PACKAGE: TARGET is a command (cmd) or a file (file).
check() {
	case $1 in
	cmd) command -v "$2" >/dev/null 2>&1 || missing+=("$3") ;;
	file) [ -e "$2" ] || missing+=("$3") ;;
	esac
}

check cmd gcc gcc
check cmd make make
check cmd git git
check file /usr/include/infiniband/verbs.h libibverbs-dev
check file /usr/include/rdma/rdma_cma.h librdmacm-dev
# --build: only what compiling rdmactl needs (make build); the rest is the lab's.
if [ "${1:-}" != --build ]; then
check cmd qemu-system-x86_64 qemu-system-x86
check cmd cpio cpio
check cmd depmod kmod
check cmd rping rdmacm-utils
check cmd ib_write_bw perftest
check cmd ibv_devinfo ibverbs-utils
check cmd rdma iproute2
check cmd iptables iptables
check cmd lintian lintian # make deb
check file /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ibverbs-providers
check file /etc/libibverbs.d/rxe.driver ibverbs-providers
# The initramfs needs a static busybox with modprobe (grep -q on a pipe
# would trip pipefail, hence the capture).
applets=""
[ -x /bin/busybox ] && applets=$(/bin/busybox --list 2>/dev/null)
grep -qx modprobe <<<"$applets" || missing+=(busybox-static)
fi

[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages; as root run: apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
