#!/bin/bash
# bench.sh — rdmactl's scoreboard against the tools it replaces (`make bench`).
#
#   scripts/bench.sh [BIN]          on the host: boots the lab at 1 vCPU and at
#                                   2 vCPUs, runs the matrix in each boot, prints
#                                   the table and writes bench/results.json
#   scripts/bench.sh --guest BIN    inside a lab boot: runs the matrix once and
#                                   prints the table plus one "BENCH {json}" line
#                                   per measurement
#
# The matrix, the same every time, per boot:
#   ping  rping<->rping against rdmactl<->rdmactl, and (BENCH_BEFORE=binary) an
#         older rdmactl,
#         at -S 64 and -S 65535 (rping's largest size), BENCH_COUNT iterations;
#         time per iteration (client wall) and CPU per iteration (user+sys of
#         client and server together), best of ROUNDS alternating rounds.
#         Start-up and connection set-up are taken out: each round also runs
#         the pair for 1 iteration, and per iteration is (best N-iteration run
#         - best 1-iteration run)/(N-1), so that process start-up (seconds on
#         a loaded host under TCG) does not swamp the pings
#   start devinfo -v vs ibv_devinfo -v, rxe status vs rdma link show (ms/run,
#         BENCH_RUNS runs, best of ROUNDS)
#   rss   peak RSS (VmHWM) of a -P ping server, rdmactl's and rping's, after
#         1 and after BENCH_CLIENTS clients (in the last boot only)
#   floor ib_send_lat's typical latency on the same device (if installed)
#   pingpong (not in the default parts) ibv_rc_pingpong<->ibv_rc_pingpong
#         against rdmactl pingpong rc<->rdmactl (and BENCH_BEFORE's), polling
#         and -e (events), at
#         the default 4096 bytes, BENCH_COUNT iterations: the client's
#         usec/iter and CPU (user+sys of both sides), best of ROUNDS
#         alternating rounds; BENCH_PINGPONG_MODES (default "poll events")
#         picks one mode or both
#   cm    (not in the default parts) connection set-up as cmtime measures
#         it: cmtime -s against rdmactl cm cmtime -s (and BENCH_BEFORE's),
#         all against a C cmtime
#         server, BENCH_CM_CONNS connections (default 100): the sum of the
#         steps' us/conn, best of ROUNDS alternating rounds, with the best
#         round's steps and each step's median over the rounds;
#         and udaddy (UD) and ucmatose (RC) pairs, C against rdmactl cm:
#         us per message (BENCH_CM_MSGS each way, start-up taken out)
#   perf  (not in the default parts) perftest<->perftest against rdmactl
#         perf<->rdmactl: write_bw, send_bw (default, -r 2, -b -D 4 -f 1:
#         both ways for 4 s, the client's own row, and -D 4) and read_bw at 64
#         KiB and atomic_bw (BENCH_PERF_ITERS, default 5000 messages;
#         atomic_bw 20 times as many, as 5000 atomics take about 0.1 s): BW
#         average MB/s and CPU (user+sys of both sides); send_lat, write_lat
#         and read_lat (rdmactl with --busy-poll; send_lat also with its
#         adaptive wait): t_typical; ROUNDS alternating rounds, every round
#         and the best recorded; BENCH_BEFORE runs in the rounds too;
#         BENCH_PERF_TESTS (default all of them: "write_bw send_bw
#         send_bw-r2 send_bw-b-D send_bw-D read_bw atomic_bw send_lat
#         write_lat read_lat") picks some
# The pingpong, cm and perf parts also print, and record, "paired": the
# median of the rounds' own ratios against the C tool (see paired()).
# BENCH_PARTS (default "ping startup rss floor") picks parts of the matrix;
# BENCH_OUT (default bench/results.json) is where the host side writes;
# BENCH_LAB_TIMEOUT (default 3600 s) bounds each boot (the perf part alone
# takes most of half an hour at 1 vCPU).
# Binaries run from the guest's tmpfs. Servers are awaited with
# `rdma res show cm_id`, never a fixed sleep.
set -euo pipefail

count=${BENCH_COUNT:-1000}
rounds=${ROUNDS:-3}
clients=${BENCH_CLIENTS:-100}
runs=${BENCH_RUNS:-10}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

host() {
	local bin=${1:-bin/rdmactl} smp out=${BENCH_OUT:-bench/results.json} log
	local records=() before="" commit
	commit=$(git describe --always --dirty 2>/dev/null || echo unknown) # what was measured
	[ -x "$bin" ] || { echo "bench: no binary $bin (make build)" >&2; exit 2; }
	[ -n "${BENCH_BEFORE:-}" ] && before=$BENCH_BEFORE
	mkdir -p bench
	local smps=(${BENCH_SMP:-1 2}) rss_in
	rss_in=${smps[-1]} # the server's memory does not depend on the vCPUs: measured once
	for smp in "${smps[@]}"; do
		log=$(mktemp)
		echo "== lab boot, $smp vCPU(s)"
		BENCH_BEFORE=$before "$here/lab.sh" run --smp "$smp" --timeout "${BENCH_LAB_TIMEOUT:-3600}" -- \
			"BENCH_PARTS='${BENCH_PARTS:-ping startup rss floor}' BENCH_COUNT=$count ROUNDS=$rounds BENCH_CLIENTS=$clients BENCH_RUNS=$runs BENCH_PERF_ITERS=${BENCH_PERF_ITERS:-5000} BENCH_PERF_TESTS='${BENCH_PERF_TESTS:-}' BENCH_PINGPONG_MODES='${BENCH_PINGPONG_MODES:-}' BENCH_CM_CONNS='${BENCH_CM_CONNS:-}' BENCH_CM_MSGS='${BENCH_CM_MSGS:-}' BENCH_RSS=$([ "$smp" = "$rss_in" ] && echo 1) BENCH_BEFORE=$before scripts/bench.sh --guest $bin" |
			tee "$log" | grep -v '^BENCH ' || { rm -f "$log"; echo "bench: the lab run at --smp $smp failed" >&2; exit 1; }
		while IFS= read -r l; do records+=("${l#BENCH }"); done < <(grep '^BENCH ' "$log")
		rm -f "$log"
	done
	{
		printf '{\n  "machine": {"host": "%s", "cpu": "%s", "host_cpus": %d, "kernel": "%s", "lab": "qemu TCG, Debian stock kernel, rdma_rxe"},\n' \
			"$(hostname)" "$(sed -n 's/^model name\s*:\s*//p' /proc/cpuinfo | head -1)" "$(nproc)" "$(uname -r)"
		printf '  "commit": "%s",\n  "date": "%s",\n  "iterations": %d,\n  "rounds": %d,\n  "results": [\n' \
			"$commit" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$count" "$rounds"
		local i
		for i in "${!records[@]}"; do
			printf '    %s%s\n' "${records[$i]}" "$([ "$i" -lt $((${#records[@]} - 1)) ] && echo ,)"
		done
		printf '  ]\n}\n'
	} >"$out"
	jq . "$out" >/dev/null || { echo "bench: $out is not valid JSON" >&2; exit 1; }
	echo "wrote $out"
}

# ---- inside the guest ----

port=7400
smp=$(nproc)

# stage copies a program to the tmpfs and prints its new path.
stage() {
	local dst=/tmp/bench/$(basename "$1")
	[ -e "$dst" ] || cp "$(command -v "$1")" "$dst"
	echo "$dst"
}

# listening PORT: true once an rdma_cm id listens on PORT.
wait_listen() {
	local i
	for i in $(seq 2000); do
		rdma res show cm_id 2>/dev/null | grep -q "state LISTEN.*:$1 " && return 0
		kill -0 "$2" 2>/dev/null || return 1
	done
	return 1
}

# pair SIZE SERVER CLIENT [COUNT]: runs one ping pair; prints "wall_us cpu_us"
# (client wall time; CPU of both processes).
pair() {
	local size=$1 server=$2 client=$3 count=${4:-$count}
	port=$((port + 1))
	$TIME -f '%e %U %S' -o /tmp/bench/srv.t $server -s -a 10.9.0.1 -p $port -C "$count" -S "$size" >/dev/null 2>&1 &
	local spid=$!
	wait_listen $port $spid || { echo "bench: $server did not listen" >&2; exit 1; }
	local t0 t1
	t0=$(date +%s%N)
	$TIME -f '%e %U %S' -o /tmp/bench/cli.t $client -c -a 10.9.0.1 -p $port -C "$count" -S "$size" >/dev/null 2>&1 ||
		{ echo "bench: $client failed" >&2; exit 1; }
	t1=$(date +%s%N)
	wait $spid || true
	awk -v w=$(((t1 - t0) / 1000)) '{ cpu += ($2 + $3) * 1e6 } END { printf "%d %d\n", w, cpu }' /tmp/bench/srv.t /tmp/bench/cli.t
}

# per_run MS_COMMAND N: wall milliseconds per run of a command, best of rounds.
per_run() {
	local cmd=$1 n=$2 best=0 r t0 t1 us
	for r in $(seq "$rounds"); do
		t0=$(date +%s%N)
		for _ in $(seq "$n"); do $cmd >/dev/null 2>&1 || true; done
		t1=$(date +%s%N)
		us=$(((t1 - t0) / 1000 / n))
		{ [ "$best" -eq 0 ] || [ "$us" -lt "$best" ]; } && best=$us
	done
	echo "$best"
}

# in_turn R VARIANT…: sets order to the variants in round R's order, each
# round's turned by one place. In one fixed order a variant always runs
# right after the same other one, so whatever a run leaves to the next
# lands on the same side of every paired ratio; in turn, each runs first
# as often and none always follows the same one.
in_turn() {
	local k=$((($1 - 1) % ($# - 1)))
	shift
	order=("${@:k+1}" "${@:1:k}")
}

# least A B: the smaller number; B when A is empty.
least() { if [ -z "$1" ] || [ "$2" -lt "$1" ]; then echo "$2"; else echo "$1"; fi; }

record() { echo "BENCH {\"vcpus\": $smp, $1}"; }

# rss SERVER-CMD CLIENT-CMD NAME: VmHWM/VmRSS/threads of a -P server after
# 1 and after $clients clients of 10 pings each.
rss() {
	local server=$1 client=$2 name=$3
	port=$((port + 1))
	$server -s -P -a 10.9.0.1 -p $port >/dev/null 2>&1 &
	local spid=$! i hwm1=0 rss1=0 thr1=0
	wait_listen $port $spid || { echo "bench: $name server did not listen" >&2; exit 1; }
	for i in $(seq "$clients"); do
		$client -c -a 10.9.0.1 -p $port -C 10 >/dev/null 2>&1 || { echo "bench: $name client $i failed" >&2; break; }
		if [ "$i" -eq 1 ]; then
			read -r hwm1 rss1 thr1 <<<"$(proc_mem $spid)"
		fi
	done
	local hwm rss thr
	read -r hwm rss thr <<<"$(proc_mem $spid)"
	[ -n "$hwm" ] || { echo "bench: the $name server died after $i clients" >&2; exit 1; }
	kill $spid 2>/dev/null || true
	wait $spid 2>/dev/null || true
	printf '%-22s peak RSS %6.1f MB after 1 client, %6.1f MB after %d (RSS %.1f MB, threads %d -> %d)\n' \
		"$name" "$(kb_mb "$hwm1")" "$(kb_mb "$hwm")" "$clients" "$(kb_mb "$rss")" "$thr1" "$thr"
	record "\"test\": \"server-rss\", \"tool\": \"$name\", \"clients\": $clients, \"peak_rss_kb_1\": $hwm1, \"peak_rss_kb\": $hwm, \"rss_kb\": $rss, \"threads_1\": $thr1, \"threads\": $thr"
}
proc_mem() { awk '/^VmHWM/{h=$2} /^VmRSS/{r=$2} /^Threads/{t=$2} END{print h, r, t}' /proc/$1/status; }
kb_mb() { awk -v k="$1" 'BEGIN{printf "%.1f", k/1024}'; }

guest() {
	local bin=$1
	mkdir -p /tmp/bench
	TIME=$(stage /usr/bin/time)
	local ours rping before=""
	ours=$(stage "$bin")
	rping=$(stage rping)
	if [ -n "${BENCH_BEFORE:-}" ]; then
		before=/tmp/bench/before
		cp "$BENCH_BEFORE" "$before"
	fi
	echo "## $smp vCPU(s), $count iterations, best of $rounds alternating rounds, binaries on tmpfs"

	local parts=" ${BENCH_PARTS:-ping startup rss floor} "
	local variants=("rping|$rping|$rping" "rdmactl|$ours ping|$ours ping")
	[ -n "$before" ] && variants+=("rdmactl before|$before ping|$before ping")
	local size v r order name s c wall cpu wall1 cpu1 rw rc
	for size in 64 65535; do
		[[ $parts == *" ping "* ]] || break
		declare -A bw=() bc=() bw1=() bc1=()
		for r in $(seq "$rounds"); do
			in_turn "$r" "${variants[@]}"
			for v in "${order[@]}"; do
				IFS='|' read -r name s c <<<"$v"
				read -r wall cpu <<<"$(pair "$size" "$s" "$c")"
				read -r wall1 cpu1 <<<"$(pair "$size" "$s" "$c" 1)"
				bw[$name]=$(least "${bw[$name]:-}" "$wall") bc[$name]=$(least "${bc[$name]:-}" "$cpu")
				bw1[$name]=$(least "${bw1[$name]:-}" "$wall1") bc1[$name]=$(least "${bc1[$name]:-}" "$cpu1")
			done
		done
		# per iteration: (best N-iteration run - best 1-iteration run)/(N-1),
		# scaled to N iterations for the lines below
		for v in "${variants[@]}"; do
			IFS='|' read -r name s c <<<"$v"
			bw[$name]=$(((bw[$name] - bw1[$name]) * count / (count - 1)))
			bc[$name]=$(((bc[$name] - bc1[$name]) * count / (count - 1)))
		done
		local rw=${bw[rping]} rc=${bc[rping]}
		for v in "${variants[@]}"; do
			IFS='|' read -r name s c <<<"$v"
			awk -v n="$name" -v z="$size" -v w="${bw[$name]}" -v c="${bc[$name]}" -v rw="$rw" -v rc="$rc" -v k="$count" 'BEGIN {
				printf "ping -S %-5d %-30s %8.1f us/iter (%.2fx rping)   cpu %8.1f us/iter (%.2fx rping)\n", z, n, w/k, w/rw, c/k, c/rc }'
			record "$(awk -v n="$name" -v z="$size" -v w="${bw[$name]}" -v c="${bc[$name]}" -v rw="$rw" -v rc="$rc" -v k="$count" 'BEGIN {
				printf "\"test\": \"ping\", \"tool\": \"%s\", \"size\": %d, \"iterations\": %d, \"time_per_iter_us\": %.1f, \"cpu_per_iter_us\": %.1f, \"time_vs_rping\": %.3f, \"cpu_vs_rping\": %.3f", n, z, k, w/k, c/k, w/rw, c/rc }')"
		done
		unset bw bc bw1 bc1
	done

	local ibv rdma_ t_ours t_ref
	ibv=$(stage ibv_devinfo)
	rdma_=$(stage rdma)
	for v in "devinfo -v|$ours devinfo -v|$ibv -v" "rxe status|$ours rxe status|$rdma_ link show"; do
		[[ $parts == *" startup "* ]] || break
		IFS='|' read -r name s c <<<"$v"
		t_ours=$(per_run "$s" "$runs")
		t_ref=$(per_run "$c" "$runs")
		awk -v n="$name" -v a="$t_ours" -v b="$t_ref" -v r="${c#/tmp/bench/}" 'BEGIN {
			printf "%-12s rdmactl %7.2f ms/run, %s %7.2f ms/run (%.2fx)\n", n, a/1000, r, b/1000, a/b }'
		record "\"test\": \"startup\", \"command\": \"$name\", \"rdmactl_ms\": $(awk -v a="$t_ours" 'BEGIN{print a/1000}'), \"reference\": \"${c#/tmp/bench/}\", \"reference_ms\": $(awk -v b="$t_ref" 'BEGIN{print b/1000}')"
	done

	if [ -n "${BENCH_RSS:-}" ] && [[ $parts == *" rss "* ]]; then
		rss "$ours ping" "$ours ping" "rdmactl ping -s -P"
		[ -n "$before" ] && rss "$before ping" "$before ping" "rdmactl before ping -s -P"
		rss "$rping" "$rping" "rping -s -P"
	fi

	if [[ $parts == *" perf "* ]]; then
		perf_part "$ours" "$before"
	fi

	if [[ $parts == *" pingpong "* ]]; then
		pingpong_part "$ours" "$before"
	fi

	if [[ $parts == *" cm "* ]]; then
		cm_part "$ours" "$before"
		cm_messages "$ours" "$before"
	fi

	if [[ $parts != *" floor "* ]]; then
		:
	elif command -v ib_send_lat >/dev/null; then
		local lat gid
		lat=$(stage ib_send_lat)
		gid=$(rdma_gid_index)
		port=$((port + 1))
		$lat -R -d rxe0 -x "$gid" -n "$count" -p $port >/dev/null 2>&1 &
		local spid=$!
		if wait_listen $port $spid; then
			local typ
			typ=$($lat -R -d rxe0 -x "$gid" -n "$count" -p $port 10.9.0.1 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && NF >= 6 { print $5 }' | tail -1)
			wait $spid || true
			printf 'floor        ib_send_lat t_typical %s us (2 bytes, busy-polling, -n %d)\n' "${typ:-?}" "$count"
			[ -n "$typ" ] && record "\"test\": \"floor\", \"tool\": \"ib_send_lat\", \"t_typical_us\": $typ"
		else
			echo "floor        ib_send_lat did not listen; skipped"
			kill $spid 2>/dev/null || true
		fi
	else
		echo "floor        ib_send_lat not installed (apt-get install perftest)"
	fi
}

# perf_pair TOOL-SERVER TOOL-CLIENT ARGS…: one perftest-style pair on rxe0;
# prints the client's last table row, then "cpu SECONDS" (both sides) and
# "rnr NAKS" (the RNR NAKs the pair drew).
perf_pair() {
	local server=$1 client=$2 i attempt row naks0
	shift 2
	# perftest refuses to report when its CPU clock sampling is off under
	# emulation ("Can't produce a report"), or its latency tests print
	# "inf" from a zero-MHz clock: such a pair runs again, at most twice,
	# and says so
	for attempt in 1 2 3; do
		port=$((port + 1))
		naks0=$(rnr_naks)
		$TIME -f '%U %S' -o /tmp/bench/srv.t $server -p $port "$@" >/tmp/bench/srv.out 2>&1 &
		local spid=$!
		for i in $(seq 2000); do
			[ -n "$(ss -Hltn "sport = :$port")" ] && break
			kill -0 $spid 2>/dev/null || { echo "bench: $server did not listen" >&2; return 1; }
		done
		row=$($TIME -f '%U %S' -o /tmp/bench/cli.t $client -p $port "$@" 10.9.0.1 2>/tmp/bench/cli.err | awk '$1 ~ /^[0-9]+$/ && NF >= 5' | tail -1)
		wait $spid || true
		if [[ " $row " != *" inf "* ]] && { [ -n "$row" ] || ! grep -qs "Can't produce a report" /tmp/bench/srv.out /tmp/bench/cli.err; }; then
			break
		fi
		echo "bench: perftest could not read its clock (attempt $attempt of 3)" >&2
	done
	echo "$row"
	awk '{ cpu += $1 + $2 } END { printf "cpu %.2f\n", cpu }' /tmp/bench/srv.t /tmp/bench/cli.t
	echo "rnr $(($(rnr_naks) - naks0))"
}

# median "A, B, C…": the middle of a round list (the mean of the middle
# two when even). The best round says what a tool can do; the median,
# less at the mercy of one lucky round, is printed beside it.
median() {
	echo "$1" | tr ',' '\n' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.10g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# paired "A, B…" "REF_A, REF_B…": the median of the rounds' own ratios,
# round i of a tool over round i of the reference. The rounds alternate,
# so a slow stretch of the host slows both runs of a round and cancels in
# its ratio: on a noisy host this says more than best or median alone.
paired() {
	local ratios
	ratios=$(awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, ","); split(b, y, ","); for (i = 1; i <= n; i++) printf "%s%.4f", (i > 1 ? ", " : ""), x[i] / y[i] }')
	median "$ratios"
}

# spread NAME REF: NAME's median, REF's median and NAME's paired ratio to
# REF, from the caller's rounds (all).
spread() {
	echo "$(median "${all[$1]}") $(median "${all[$2]}") $(paired "${all[$1]}" "${all[$2]}")"
}

# keep NAME VALUE BETTER [CPU]: adds VALUE to NAME's rounds (all) and makes
# it NAME's best when there is none yet or it is BETTER ("<" or ">") than
# the best so far; CPU, the round's CPU seconds, is kept beside it (bcpu).
# The arrays are the caller's.
keep() {
	all[$1]="${all[$1]:+${all[$1]}, }$2"
	if [ -z "${best[$1]:-}" ] || awk -v a="$2" -v b="${best[$1]}" "BEGIN{exit !(a $3 b)}"; then
		best[$1]=$2
		if [ -n "${4:-}" ]; then bcpu[$1]=$4; fi
	fi
}

# perf_part: perftest<->perftest against rdmactl perf<->rdmactl, alternating,
# in this boot: BW average MB/s of write_bw, send_bw (default and -r 2),
# read_bw at 64 KiB and atomic_bw, with CPU, and send_bw -b -D (timed, so no
# -n); t_typical of send_lat,
# write_lat and read_lat (rdmactl with --busy-poll, as perftest polls; and
# send_lat with its default adaptive wait).
perf_part() {
	local ours=$1 before=$2 gid iters=${BENCH_PERF_ITERS:-5000} r v order t name s c out row cpu test args ib
	gid=$(rdma_gid_index)
	if ! command -v ib_write_bw >/dev/null; then
		echo "perf         perftest not installed (apt-get install perftest)"
		return
	fi
	local common=(-d rxe0 -x "$gid")
	local bw_tests=("write_bw|-s 65536" "send_bw|-s 65536" "send_bw -r 2|-s 65536 -r 2" "send_bw -b -D|-s 65536 -b -D 4 -f 1" "send_bw -D|-s 65536 -D 4" "read_bw|-s 65536" "atomic_bw|")
	local picked=" ${BENCH_PERF_TESTS:-write_bw send_bw send_bw-r2 send_bw-b-D send_bw-D read_bw atomic_bw send_lat write_lat read_lat} "
	for t in "${bw_tests[@]}"; do
		IFS='|' read -r name args <<<"$t"
		test=${name%% *}
		[[ $picked == *" ${name// /} "* ]] || continue
		# atomic_bw's 8-byte messages make well under 1 MB/s, which the
		# two decimals of the BW column cannot compare: its message rate
		# has six; and 5000 atomics end in about 0.1 s, too short a run
		# to compare, so atomic_bw runs 20 times as many
		local col=4 unit=MB/s key=bw_avg_mbs n=$iters
		[ "$test" = atomic_bw ] && col=5 unit=Mpps key=msg_rate_mpps n=$((iters * 20))
		# a timed test (-D) runs without -n and records no iterations
		local count_args=(-n "$n") counted="\"iterations\": $n, "
		[[ " $args " == *" -D "* ]] && count_args=() counted=
		ib=$(stage "ib_$test")
		local variants=("ib_$test|$ib|$ib" "rdmactl|$ours perf $test|$ours perf $test")
		[ -n "$before" ] && variants+=("rdmactl before|$before perf $test|$before perf $test")
		declare -A best=() all=() bcpu=() rnr=()
		for r in $(seq "$rounds"); do
			in_turn "$r" "${variants[@]}"
			for v in "${order[@]}"; do
				IFS='|' read -r tool s c <<<"$v"
				local naks
				# shellcheck disable=SC2086 # args are words
				out=$(perf_pair "$s" "$c" "${common[@]}" $args "${count_args[@]}") || return 1
				row=$(echo "$out" | awk -v c="$col" 'NR == 1 { print $c }')
				cpu=$(echo "$out" | awk '$1 == "cpu" { print $2 }')
				naks=$(echo "$out" | awk '$1 == "rnr" { print $2 }')
				[ -n "$row" ] || { echo "bench: $tool $name printed no row" >&2; return 1; }
				printf '%-14s %-14s round %d  %10.6f %s  cpu %6.2f s   RNR NAKs %5d   load %s\n' "$name" "$tool" "$r" "$row" "$unit" "$cpu" "$naks" "$(cut -d' ' -f1-3 /proc/loadavg)"
				keep "$tool" "$row" ">" "$cpu"
				rnr[$tool]="${rnr[$tool]:+${rnr[$tool]}, }$naks"
			done
		done
		for v in "${variants[@]}"; do
			IFS='|' read -r tool s c <<<"$v"
			local med medref pr
			read -r med medref pr <<<"$(spread "$tool" "ib_$test")"
			awk -v t="$name" -v n="$tool" -v b="${best[$tool]}" -v ref="${best[ib_$test]}" -v u="$unit" -v m="$med" -v mref="$medref" -v p="$pr" 'BEGIN {
				printf "%-14s %-14s best %10.6f %s (%.2fx perftest)  median %10.6f (%.2fx)  paired %.2fx\n", t, n, b, u, b/ref, m, m/mref, p }'
			record "\"test\": \"perf-$test\", \"args\": \"$args\", \"tool\": \"$tool\", $counted\"$key\": ${best[$tool]}, \"${key}_median\": $med, \"${key}_rounds\": [${all[$tool]}], \"cpu_s\": ${bcpu[$tool]}, \"vs_perftest\": $(awk -v b="${best[$tool]}" -v ref="${best[ib_$test]}" 'BEGIN{printf "%.3f", b/ref}'), \"vs_perftest_paired\": $pr, \"rnr_naks_rounds\": [${rnr[$tool]}]"
		done
		unset best all bcpu rnr
	done
	for test in send_lat write_lat read_lat; do
		[[ $picked == *" $test "* ]] || continue
		ib=$(stage "ib_$test")
		local variants=("ib_$test|$ib|$ib" "rdmactl --busy-poll|$ours perf $test --busy-poll|$ours perf $test --busy-poll")
		[ "$test" = send_lat ] && variants+=("rdmactl|$ours perf $test|$ours perf $test")
		[ -n "$before" ] && variants+=("rdmactl before --busy-poll|$before perf $test --busy-poll|$before perf $test --busy-poll")
		declare -A best=() all=()
		for r in $(seq "$rounds"); do
			in_turn "$r" "${variants[@]}"
			for v in "${order[@]}"; do
				IFS='|' read -r tool s c <<<"$v"
				out=$(perf_pair "$s" "$c" "${common[@]}" -n "$count") || return 1
				row=$(echo "$out" | awk 'NR == 1 { print $5 }')
				[ -n "$row" ] || { echo "bench: $tool $test printed no row" >&2; return 1; }
				printf '%-10s %-26s round %d  t_typical %8.2f us   load %s\n' "$test" "$tool" "$r" "$row" "$(cut -d' ' -f1-3 /proc/loadavg)"
				keep "$tool" "$row" "<"
			done
		done
		for v in "${variants[@]}"; do
			IFS='|' read -r tool s c <<<"$v"
			local med medref pr
			read -r med medref pr <<<"$(spread "$tool" "ib_$test")"
			awk -v t="$test" -v n="$tool" -v b="${best[$tool]}" -v ref="${best[ib_$test]}" -v m="$med" -v mref="$medref" -v p="$pr" 'BEGIN {
				printf "%-10s %-26s best t_typical %8.2f us (%.2fx perftest)  median %8.2f (%.2fx)  paired %.2fx\n", t, n, b, b/ref, m, m/mref, p }'
			record "\"test\": \"perf-$test\", \"tool\": \"$tool\", \"size\": 2, \"iterations\": $count, \"t_typical_us\": ${best[$tool]}, \"t_typical_us_median\": $med, \"t_typical_us_rounds\": [${all[$tool]}], \"vs_perftest\": $(awk -v b="${best[$tool]}" -v ref="${best[ib_$test]}" 'BEGIN{printf "%.3f", b/ref}'), \"vs_perftest_paired\": $pr"
		done
		unset best all
	done
}

# pingpong_pair SERVER CLIENT ARGS…: one ibv_rc_pingpong-style pair on
# rxe0; prints "USEC_PER_ITER CPU_SECONDS" (the client's figure; CPU of
# both sides).
pingpong_pair() {
	local server=$1 client=$2 i line
	shift 2
	port=$((port + 1))
	$TIME -f '%U %S' -o /tmp/bench/srv.t $server -p $port "$@" >/dev/null 2>&1 &
	local spid=$!
	for i in $(seq 2000); do
		[ -n "$(ss -Hltn "sport = :$port")" ] && break
		kill -0 $spid 2>/dev/null || { echo "bench: $server did not listen" >&2; return 1; }
	done
	line=$($TIME -f '%U %S' -o /tmp/bench/cli.t $client -p $port "$@" 10.9.0.1 2>/dev/null | grep 'usec/iter') ||
		{ echo "bench: $client failed" >&2; wait $spid; return 1; }
	wait $spid || true
	awk -v l="$line" '{ cpu += $1 + $2 } END { split(l, f, " "); printf "%s %.2f\n", f[length(f) - 1], cpu }' /tmp/bench/srv.t /tmp/bench/cli.t
}

# pingpong_part: usec/iter of ibv_rc_pingpong against rdmactl pingpong rc,
# polling and with -e, alternating, in this boot.
pingpong_part() {
	local ours=$1 before=$2 gid r v order name s c out us cpu mode
	if ! command -v ibv_rc_pingpong >/dev/null; then
		echo "pingpong     ibv_rc_pingpong not installed (apt-get install ibverbs-utils)"
		return
	fi
	gid=$(rdma_gid_index)
	local rc
	rc=$(stage ibv_rc_pingpong)
	for mode in ${BENCH_PINGPONG_MODES:-poll events}; do
		local extra=()
		[ "$mode" = events ] && extra=(-e)
		local variants=("ibv_rc_pingpong|$rc|$rc" "rdmactl|$ours pingpong rc|$ours pingpong rc")
		[ -n "$before" ] && variants+=("rdmactl before|$before pingpong rc|$before pingpong rc")
		declare -A best=() bcpu=() all=()
		for r in $(seq "$rounds"); do
			in_turn "$r" "${variants[@]}"
			for v in "${order[@]}"; do
				IFS='|' read -r name s c <<<"$v"
				out=$(pingpong_pair "$s" "$c" -d rxe0 -g "$gid" -n "$count" "${extra[@]}") || return 1
				read -r us cpu <<<"$out"
				printf 'pingpong rc %-6s %-16s round %d  %8.2f usec/iter  cpu %6.2f s\n' "$mode" "$name" "$r" "$us" "$cpu"
				keep "$name" "$us" "<" "$cpu"
			done
		done
		for v in "${variants[@]}"; do
			IFS='|' read -r name s c <<<"$v"
			local med medref pr
			read -r med medref pr <<<"$(spread "$name" ibv_rc_pingpong)"
			awk -v n="$name" -v m="$mode" -v b="${best[$name]}" -v ref="${best[ibv_rc_pingpong]}" -v cb="${bcpu[$name]}" -v cref="${bcpu[ibv_rc_pingpong]}" -v md="$med" -v mref="$medref" -v p="$pr" 'BEGIN {
				printf "pingpong rc %-6s %-16s best %8.2f usec/iter (%.2fx ibv_rc_pingpong)  cpu %.2f s (%.2fx)  median %8.2f (%.2fx)  paired %.2fx\n", m, n, b, b/ref, cb, (cref > 0 ? cb/cref : 0), md, md/mref, p }'
			record "\"test\": \"pingpong-rc\", \"mode\": \"$mode\", \"tool\": \"$name\", \"iterations\": $count, \"usec_per_iter\": ${best[$name]}, \"usec_per_iter_median\": $med, \"usec_per_iter_rounds\": [${all[$name]}], \"cpu_s\": ${bcpu[$name]}, \"vs_ibv_rc_pingpong\": $(awk -v b="${best[$name]}" -v ref="${best[ibv_rc_pingpong]}" 'BEGIN{printf "%.3f", b/ref}'), \"vs_ibv_rc_pingpong_paired\": $pr"
		done
		unset best bcpu all
	done
}

# cm_part: cmtime's per-connection set-up, the C client against rdmactl cm
# cmtime, alternating, both against one C cmtime server in this boot.
cm_part() {
	local ours=$1 before=$2 conns=${BENCH_CM_CONNS:-100} r v order name c out total
	if ! command -v cmtime >/dev/null; then
		echo "cm           cmtime not installed (apt-get install rdmacm-utils)"
		return
	fi
	local ct
	ct=$(stage cmtime)
	port=$((port + 1))
	$ct -b 10.9.0.1 -p $port >/dev/null 2>&1 &
	local spid=$!
	wait_listen $port $spid || { echo "bench: cmtime did not listen" >&2; return 1; }
	local variants=("cmtime|$ct" "rdmactl|$ours cm cmtime")
	[ -n "$before" ] && variants+=("rdmactl before|$before cm cmtime")
	declare -A best=() all=() steps=() stepall=()
	local stepnames=() st val rows stepsnow sep
	for r in $(seq "$rounds"); do
		in_turn "$r" "${variants[@]}"
		for v in "${order[@]}"; do
			IFS='|' read -r name c <<<"$v"
			out=$(timeout 120 $c -s 10.9.0.1 -p $port -c "$conns" 2>/dev/null) || { echo "bench: $name cmtime failed" >&2; kill $spid; return 1; }
			# the table's rows, "step|us/conn", read once for the total, this
			# round's steps and each step's rounds
			rows=$(echo "$out" | awk -F: '/^[a-z ]+:/ { n = split($2, f, " "); gsub(/ +$/, "", $1); print $1 "|" f[n] }')
			total=$(echo "$rows" | awk -F'|' '{ t += $2 } END { printf "%.1f", t }')
			printf 'cmtime -c %d  %-16s round %d  %9.1f us/conn (all steps)\n' "$conns" "$name" "$r" "$total"
			keep "$name" "$total" "<"
			stepsnow="" sep=""
			while IFS='|' read -r st val; do
				[ -n "$st" ] || continue
				[ "$r" = 1 ] && [ "$name" = cmtime ] && stepnames+=("$st")
				stepall["$name|$st"]="${stepall["$name|$st"]:+${stepall["$name|$st"]}, }$val"
				stepsnow+="$sep\"$st\": $val" sep=", "
			done <<<"$rows"
			if [ "${best[$name]}" = "$total" ]; then
				steps[$name]=$stepsnow
			fi
		done
	done
	kill $spid 2>/dev/null || true
	for v in "${variants[@]}"; do
		IFS='|' read -r name c <<<"$v"
		local med medref pr
		read -r med medref pr <<<"$(spread "$name" cmtime)"
		# the best round's steps, and each step's median over the rounds
		local stepmed=""
		sep=""
		for st in "${stepnames[@]}"; do
			stepmed+="$sep\"$st\": $(median "${stepall["$name|$st"]}")" sep=", "
		done
		awk -v n="$name" -v b="${best[$name]}" -v ref="${best[cmtime]}" -v k="$conns" -v m="$med" -v mref="$medref" -v p="$pr" 'BEGIN {
			printf "cmtime -c %d  %-16s best %9.1f us/conn (%.2fx cmtime)  median %9.1f (%.2fx)  paired %.2fx\n", k, n, b, b/ref, m, m/mref, p }'
		record "\"test\": \"cm-cmtime\", \"tool\": \"$name\", \"connections\": $conns, \"us_per_conn\": ${best[$name]}, \"us_per_conn_median\": $med, \"us_per_conn_rounds\": [${all[$name]}], \"steps_us_per_conn\": {${steps[$name]}}, \"steps_us_per_conn_median\": {$stepmed}, \"vs_cmtime\": $(awk -v b="${best[$name]}" -v ref="${best[cmtime]}" 'BEGIN{printf "%.3f", b/ref}'), \"vs_cmtime_paired\": $pr"
	done
}

# cm_msg_pair SERVER CLIENT LISTEN_PORT ARGS…: one udaddy/ucmatose-style
# pair, the server with ARGS and the client with -s 10.9.0.1 ARGS; prints
# the client's wall microseconds.
cm_msg_pair() {
	local server=$1 client=$2 listen=$3 t0 t1
	shift 3
	timeout 120 $server "$@" >/dev/null 2>&1 &
	local spid=$!
	wait_listen "$listen" $spid || { echo "bench: $server $* did not listen" >&2; return 1; }
	t0=$(date +%s%N)
	timeout 120 $client -s 10.9.0.1 "$@" >/dev/null 2>&1 || { echo "bench: $client -s 10.9.0.1 $* failed" >&2; kill $spid 2>/dev/null; return 1; }
	t1=$(date +%s%N)
	wait $spid || true
	echo $(((t1 - t0) / 1000))
}

# cm_messages: udaddy (UD) and ucmatose (RC) pairs, the C tools against
# rdmactl cm's, alternating: microseconds per message, each side sending
# BENCH_CM_MSGS (default 15000) of the default 100 bytes and receiving as
# many, (a -C N run - a -C 1 run)/(N-1) of the same round, so that start-up
# and connection set-up are taken out. N is large so that the start-up's
# spread does not swamp the messages; udaddy fails above rxe's 16384
# work requests a queue.
cm_messages() {
	local ours=$1 before=$2 msgs=${BENCH_CM_MSGS:-15000} tool r v order name c listen wn w1 per
	for tool in udaddy ucmatose; do
		local ref
		ref=$(stage "$tool")
		local variants=("$tool|$ref" "rdmactl|$ours cm $tool")
		[ -n "$before" ] && variants+=("rdmactl before|$before cm $tool")
		declare -A best=() all=()
		for r in $(seq "$rounds"); do
			in_turn "$r" "${variants[@]}"
			for v in "${order[@]}"; do
				IFS='|' read -r name c <<<"$v"
				local args=()
				# udaddy listens on its fixed port 7174; ucmatose takes -p
				if [ "$tool" = udaddy ]; then
					listen=7174
				else
					port=$((port + 1)) listen=$port args=(-p "$port")
				fi
				wn=$(cm_msg_pair "$c" "$c" "$listen" "${args[@]}" -C "$msgs") || return 1
				[ "$tool" = ucmatose ] && port=$((port + 1)) listen=$port args=(-p "$port")
				w1=$(cm_msg_pair "$c" "$c" "$listen" "${args[@]}" -C 1) || return 1
				per=$(awk -v a="$wn" -v b="$w1" -v n="$msgs" 'BEGIN { printf "%.2f", (a - b) / (n - 1) }')
				printf '%-8s -C %d  %-16s round %d  %8.2f us/message  (-C %d: %d us, -C 1: %d us)\n' "$tool" "$msgs" "$name" "$r" "$per" "$msgs" "$wn" "$w1"
				keep "$name" "$per" "<"
			done
		done
		for v in "${variants[@]}"; do
			IFS='|' read -r name c <<<"$v"
			local med medref pr
			read -r med medref pr <<<"$(spread "$name" "$tool")"
			awk -v t="$tool" -v k="$msgs" -v n="$name" -v b="${best[$name]}" -v ref="${best[$tool]}" -v m="$med" -v mref="$medref" -v p="$pr" 'BEGIN {
				printf "%-8s -C %d  %-16s best %8.2f us/message (%.2fx %s)  median %8.2f (%.2fx)  paired %.2fx\n", t, k, n, b, b/ref, t, m, m/mref, p }'
			record "\"test\": \"cm-$tool\", \"tool\": \"$name\", \"messages\": $msgs, \"us_per_message\": ${best[$name]}, \"us_per_message_median\": $med, \"us_per_message_rounds\": [${all[$name]}], \"vs_${tool}\": $(awk -v b="${best[$name]}" -v ref="${best[$tool]}" 'BEGIN{printf "%.3f", b/ref}'), \"vs_${tool}_paired\": $pr"
		done
		unset best all
	done
}

# rnr_naks: receiver-not-ready NAKs rxe0 has received so far (both peers
# share the device): a send test whose receiver falls behind draws them, and
# each costs the sender a timer's wait.
rnr_naks() {
	cat /sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_rnr_err 2>/dev/null || echo 0
}

# rdma_gid_index is rxe0's GID index of 10.9.0.1 (RoCE v2).
rdma_gid_index() {
	local d=/sys/class/infiniband/rxe0/ports/1 i
	for i in $(seq 0 15); do
		[ "$(cat $d/gid_attrs/types/$i 2>/dev/null)" = "RoCE v2" ] || continue
		grep -q '0000:0000:0000:0000:0000:ffff:0a09:0001' $d/gids/$i 2>/dev/null && { echo "$i"; return; }
	done
	echo 1
}

case ${1:-} in
--guest) guest "$2" ;;
*) host "$@" ;;
esac
