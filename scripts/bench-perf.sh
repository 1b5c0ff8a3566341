#!/usr/bin/env bash
# bench-perf.sh — rdmactl perf against perftest in the same boot (lab only).
#
#   scripts/lab.sh run [--smp N] -- scripts/bench-perf.sh bin/rdmactl
#
# Runs, twice each and alternating so drift hits both alike, on rxe0 -x 1:
# write_bw 64 KiB (ib<->ib, rdmactl<->rdmactl) and send_lat 2 B (ib<->ib,
# rdmactl --busy-poll, rdmactl blocking). Prints the client's result row
# and both sides' wall, user and system time. LATN sets send_lat's -n.
set -uo pipefail
cp "$1" /tmp/rdmactl-bench
R=/tmp/rdmactl-bench
echo "vCPUs: $(nproc)"
TIMEFORMAT='%R real %U user %S sys'
waitport() {
	for _ in $(seq 1 400); do
		ss -Hltn 'sport = :18515' | grep -q . && return 0
		sleep 0.05
	done
	echo "nothing listens on 18515" >&2
	return 1
}
# pair LABEL SERVER-CMD... -- CLIENT-CMD...
pair() {
	local label=$1 s=()
	shift
	while [ "$1" != "--" ]; do s+=("$1"); shift; done
	shift
	{ time timeout 300 "${s[@]}" >/tmp/bench-s.out 2>&1; } 2>/tmp/bench-s.time &
	local sp=$!
	waitport
	{ time timeout 300 "$@" 10.9.0.1 >/tmp/bench-c.out 2>&1; } 2>/tmp/bench-c.time
	wait $sp
	local row
	row=$(grep -E '^ [0-9]+ ' /tmp/bench-c.out | tail -1 | tr -s ' \t' ' ')
	echo "$label |$row | client $(cat /tmp/bench-c.time) | server $(cat /tmp/bench-s.time)"
}
A="-d rxe0 -x 1"
L="-n ${LATN:-1000}"
for _ in 1 2; do
	pair "ib<->ib write_bw" ib_write_bw $A -- ib_write_bw $A
	pair "rd<->rd write_bw" $R perf write_bw $A -- $R perf write_bw $A
done
for _ in 1 2; do
	pair "ib<->ib send_lat" ib_send_lat $A $L -- ib_send_lat $A $L
	pair "rd<->rd send_lat busy" $R perf send_lat $A $L --busy-poll -- $R perf send_lat $A $L --busy-poll
	pair "rd<->rd send_lat block" $R perf send_lat $A $L -- $R perf send_lat $A $L
done
