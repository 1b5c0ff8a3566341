#!/bin/bash
# smoke.sh BIN — the short Soft-RoCE session `make lab` shows; runs inside
# the lab VM (scripts/lab.sh), where rxe0 sits on veth0 (10.9.0.1).
set -u
bin=$1

step() {
	printf '\n$ %s\n' "$*"
	timeout 120 "$@"
	local rc=$?
	[ $rc -eq 0 ] || printf '(exit %d)\n' $rc
	return 0
}

# with_server 'server command' client command...: runs the server in the
# background, the client in the foreground, then shows the server's side.
with_server() {
	local server=$1
	shift
	printf '\n$ %s &   # server\n' "$server"
	timeout 60 bash -c "$server" >/tmp/smoke-server.out 2>&1 &
	sleep 1
	step "$@"
	wait
	printf '(server side)\n'
	cat /tmp/smoke-server.out
}

step rdma link show
step "$bin" devices
step "$bin" devinfo -d rxe0
step "$bin" gids
step "$bin" gids --ip 10.9.0.1
with_server "$bin ping -s -a 10.9.0.1 -C 3 -v" "$bin" ping -c -a 10.9.0.1 -C 3 -v --stats
gid=$("$bin" gids --ip 10.9.0.1)
with_server "$bin demo -d rxe0 -g $gid" "$bin" demo 10.9.0.1 -d rxe0 -g "$gid"
step "$bin" doctor
step "$bin" smoke
