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
has() { "$bin" "$1" --help >/dev/null 2>&1 && ! "$bin" "$1" --help | grep -q 'not implemented'; }

step rdma link show
step "$bin" devices
step "$bin" devinfo -d rxe0
step "$bin" gids
step "$bin" gids --ip 10.9.0.1
if has ping; then
	printf '\n$ %s ping -s -a 10.9.0.1 -C 3 -v &   # server\n' "$bin"
	timeout 60 "$bin" ping -s -a 10.9.0.1 -C 3 -v &
	sleep 1
	step "$bin" ping -c -a 10.9.0.1 -C 3 -v --stats
	wait
fi
if has demo; then
	gid=$("$bin" gids --ip 10.9.0.1)
	printf '\n$ %s demo -d rxe0 -g %s &   # server\n' "$bin" "$gid"
	timeout 60 "$bin" demo -d rxe0 -g "$gid" >/tmp/demo-server.out 2>&1 &
	sleep 1
	step "$bin" demo 10.9.0.1 -d rxe0 -g "$gid"
	wait
	printf '\n(server side)\n'
	cat /tmp/demo-server.out
fi
if has doctor; then
	step "$bin" doctor
fi
