#!/usr/bin/env bash
# lint-package.sh BIN DEB — check what `make deb` ships: the systemd units
# with systemd-analyze (any warning fails, an unknown key included) and the
# package with lintian. A checker that is not installed is said, not faked.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BIN DEB" >&2; exit 2; }
bin=$1 deb=$2
repo=$(cd "$(dirname "$0")/.." && pwd)

if command -v systemd-analyze >/dev/null; then
	# Installed under a scratch prefix so that ExecStart names a real binary.
	scratch=$(mktemp -d)
	trap 'rm -rf "$scratch"' EXIT
	make -s -C "$repo" install-files BIN="$(realpath "$bin")" PREFIX="$scratch/usr" >/dev/null
	out=$(systemd-analyze verify --man=no "$scratch"/usr/lib/systemd/system/*.service 2>&1) || true
	if [ -n "$out" ]; then
		echo "lint-package: systemd-analyze verify:" >&2
		echo "$out" >&2
		exit 1
	fi
else
	echo "lint-package: systemd-analyze is not installed; the units were not verified" >&2
fi

if command -v lintian >/dev/null; then
	# PIE is left out on purpose: it costs 30% of every command's start-up.
	lintian --fail-on error,warning --suppress-tags hardening-no-pie "$deb" 2> >(grep -v 'running with root privileges' >&2)
else
	echo "lint-package: lintian is not installed; the package was not linted" >&2
fi
