#!/bin/bash
# lab-remote.sh — inside host A of `lab.sh run --two-hosts`, run commands on
# host B. The command runs as root on B in the same directory as here.
#   lab-remote.sh 'cmd'                 run on B, print its stdout and stderr, exit with its code
#   lab-remote.sh --bg NAME 'cmd'       start on B in the background
#   lab-remote.sh --wait NAME [SECS]    wait (default 120 s) for NAME, print its output, exit with its code
set -u
x=${LAB_XCHG:?lab-remote.sh works only inside lab.sh run --two-hosts}

submit() { # $1 id, $2 command
	printf 'cd %q || exit 125\n%s\n' "$PWD" "$2" >"$x/new-$1.sh"
	mv "$x/new-$1.sh" "$x/req-$1.sh"
}

collect() { # $1 id, $2 timeout seconds
	local ticks=$(($2 * 10))
	while [ ! -e "$x/rc-$1" ]; do
		ticks=$((ticks - 1))
		if [ "$ticks" -le 0 ]; then
			echo "lab-remote: '$1' did not finish on host B within $2 s" >&2
			cat "$x/out-$1" 2>/dev/null
			cat "$x/err-$1" >&2 2>/dev/null
			return 124
		fi
		sleep 0.1
	done
	cat "$x/out-$1"
	cat "$x/err-$1" >&2
	return "$(cat "$x/rc-$1")"
}

case ${1:-} in
--bg) submit "$2" "$3" ;;
--wait) collect "$2" "${3:-120}" ;;
"") echo "usage: lab-remote.sh 'cmd' | --bg NAME 'cmd' | --wait NAME [SECS]" >&2; exit 2 ;;
*)
	id=fg-$$-$RANDOM
	submit "$id" "$1"
	collect "$id" 600
	;;
esac
