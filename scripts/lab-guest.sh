#!/bin/bash
# Runs as root inside the lab VM's overlay root (see lab.sh): loads the RDMA
# modules, builds the topology, then runs the host's command (or, on host B
# of --two-hosts, serves lab-remote.sh requests).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
param() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" /proc/cmdline; }
LAB_ROLE=$(param lab.role)
no_rxe=$(param lab.norxe)
export LAB_ROLE LAB_OUT=/lab-out
[ -d /lab-xchg ] && export LAB_XCHG=/lab-xchg

setup_error() {
	echo "lab: guest set-up failed: $*" >>/lab-out/output
	echo 125 >/lab-out/rc
	exit 1
}

# rdma_rxe computes ICRC with the crypto API's crc32, which only
# crc32_generic provides here: without it "rdma_rxe: failed to add".
for m in crc32_generic ib_core ib_uverbs rdma_cm rdma_ucm udp_tunnel ip6_udp_tunnel veth; do
	modprobe "$m" || setup_error "modprobe $m"
done
[ "$no_rxe" = 1 ] || modprobe rdma_rxe || setup_error "modprobe rdma_rxe"

ip link set lo up
case $LAB_ROLE in
single)
	ip link add veth0 type veth peer name veth1
	ip addr add 10.9.0.1/24 dev veth0
	ip addr add 10.9.0.2/24 dev veth1
	ip -6 addr add fd09::1/64 dev veth0 nodad
	ip -6 addr add fd09::2/64 dev veth1 nodad
	ip link set veth0 up
	ip link set veth1 up
	if [ "$no_rxe" != 1 ]; then
		rdma link add rxe0 type rxe netdev veth0 || setup_error "rdma link add rxe0"
		rdma link add rxe1 type rxe netdev veth1 || setup_error "rdma link add rxe1"
	fi
	;;
a | b)
	n=1; [ "$LAB_ROLE" = b ] && n=2
	ip addr add 10.9.1.$n/24 dev eth0
	ip -6 addr add fd09:1::$n/64 dev eth0 nodad
	ip link set eth0 up
	rdma link add rxe0 type rxe netdev eth0 || setup_error "rdma link add rxe0"
	;;
*) setup_error "unknown role $LAB_ROLE" ;;
esac

# Ports turn ACTIVE a moment after the link is added.
if [ "$no_rxe" != 1 ]; then
	for _ in $(seq 100); do
		grep -qv ACTIVE /sys/class/infiniband/*/ports/*/state 2>/dev/null || break
		sleep 0.1
	done
fi

serve_remote() {
	touch "$LAB_XCHG/ready-b"
	while :; do
		for req in "$LAB_XCHG"/req-*.sh; do
			[ -e "$req" ] || continue
			id=${req#"$LAB_XCHG"/req-}
			id=${id%.sh}
			mv "$req" "$LAB_XCHG/run-$id.sh" || continue
			(
				bash "$LAB_XCHG/run-$id.sh" >"$LAB_XCHG/out-$id" 2>"$LAB_XCHG/err-$id"
				echo $? >"$LAB_XCHG/rc-$id.tmp"
				mv "$LAB_XCHG/rc-$id.tmp" "$LAB_XCHG/rc-$id"
			) &
		done
		sleep 0.1
	done
}

if [ "$LAB_ROLE" = b ]; then
	serve_remote
	exit 0
fi
if [ "$LAB_ROLE" = a ]; then
	for _ in $(seq 600); do [ -e "$LAB_XCHG/ready-b" ] && break; sleep 0.5; done
	[ -e "$LAB_XCHG/ready-b" ] || setup_error "host B did not come up"
fi
bash /lab-out/cmd.sh >>/lab-out/output 2>&1 </dev/null
echo $? >/lab-out/rc
