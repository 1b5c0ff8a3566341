#!/bin/bash
# bench.sh BIN [COUNT] — time per ping iteration, rping<->rping against
# rdmactl<->rdmactl, in the same lab boot (run by `make bench`). Each pair
# runs ROUNDS times alternately; the best round of each is reported, since
# under TCG the slowest rounds measure the emulator, not the tools.
set -eu
bin=$1
count=${2:-2000}
rounds=${ROUNDS:-3}
port=7400

# pair SERVER-CMD CLIENT-CMD: prints the client's wall time in microseconds.
pair() {
	port=$((port + 1))
	timeout 600 $1 -s -a 10.9.0.1 -p $port -C "$count" >/dev/null 2>&1 &
	local spid=$!
	for _ in $(seq 300); do
		rdma res show cm_id 2>/dev/null | grep -q "state LISTEN.*:$port " && break
		sleep 0.1
	done
	local t0 t1
	t0=$(date +%s%N)
	timeout 600 $2 -c -a 10.9.0.1 -p $port -C "$count" >/dev/null 2>&1 || { echo "bench: $2 failed" >&2; exit 1; }
	t1=$(date +%s%N)
	wait $spid || true
	echo $(((t1 - t0) / 1000))
}

best_rping=0 best_ours=0
for r in $(seq "$rounds"); do
	a=$(pair rping rping)
	b=$(pair "$bin ping" "$bin ping")
	printf 'round %d: rping %d us, rdmactl %d us for %d iterations\n' "$r" "$a" "$b" "$count"
	{ [ "$best_rping" -eq 0 ] || [ "$a" -lt "$best_rping" ]; } && best_rping=$a
	{ [ "$best_ours" -eq 0 ] || [ "$b" -lt "$best_ours" ]; } && best_ours=$b
done
awk -v a="$best_rping" -v b="$best_ours" -v n="$count" 'BEGIN {
	printf "per iteration (best of rounds): rping %.1f us, rdmactl %.1f us, ratio rdmactl/rping %.2f\n", a/n, b/n, b/a
}'
