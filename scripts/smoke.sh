#!/bin/bash
# smoke.sh BIN — the short Soft-RoCE session `make lab` shows; runs inside
# the lab VM (scripts/lab.sh), where rxe0 sits on veth0 (10.9.0.1).
# Every step runs even after a failure; the script exits 1 when any step
# (client or server) failed, so `make lab` fails too.
set -u
bin=$1
steps=0
failed=()

# record RC WHAT: counts a step and remembers a failure.
record() {
	steps=$((steps + 1))
	if [ "$1" -ne 0 ]; then
		printf '(exit %d)\n' "$1"
		failed+=("$2")
	fi
}

step() {
	printf '\n$ %s\n' "$*"
	timeout 120 "$@"
	record $? "$*"
}

# cm_listening PORT / tcp_listening PORT: readiness probes, as bench.sh does.
cm_listening() { rdma res show cm_id 2>/dev/null | grep -q "state LISTEN.*:$1 "; }
tcp_listening() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }

# with_server 'server command' 'ready probe' client command...: starts the
# server, waits until the probe sees it listening (30 s at most, a cold VM
# took 924 ms), runs the client, then shows the server's side.
with_server() {
	local server=$1 ready=$2
	shift 2
	printf '\n$ %s &   # server\n' "$server"
	timeout 60 bash -c "$server" >/tmp/smoke-server.out 2>&1 &
	local spid=$! i
	for i in $(seq 300); do
		$ready && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	$ready || printf '(server not listening after %d polls)\n' "$i"
	step "$@"
	wait "$spid"
	local rc=$?
	printf '(server side)\n'
	cat /tmp/smoke-server.out
	record $rc "$server"
}

step rdma link show
step "$bin" devices
step "$bin" devinfo -d rxe0
step "$bin" gids
step "$bin" gids --ip 10.9.0.1
with_server "$bin ping -s -a 10.9.0.1 -C 3 -v" "cm_listening 7174" \
	"$bin" ping -c -a 10.9.0.1 -C 3 -v --stats
gid=$("$bin" gids --ip 10.9.0.1)
with_server "$bin demo -d rxe0 -g $gid" "tcp_listening 19875" \
	"$bin" demo 10.9.0.1 -d rxe0 -g "$gid"
step "$bin" doctor
step "$bin" smoke

if [ ${#failed[@]} -gt 0 ]; then
	printf '\nsmoke: %d of %d steps failed:\n' "${#failed[@]}" "$steps"
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
printf '\nsmoke: all %d steps passed\n' "$steps"
