#!/bin/bash
# release-modfile.sh DIR — writes DIR/release.mod (and .sum), the module
# file of the release build (go build -modfile): go.mod with afero, viper's
# file system library, replaced by a copy in DIR/afero without httpFs.go,
# the only file that links net/http into rdmactl. That import brings
# crypto/tls, x509, math/big and net/http's own tables: 1.2 MB of binary
# nothing here runs, and about 1 MB of every long-running rdmactl's RSS,
# because the kernel maps a binary's cached pages 64 KB around each one
# touched. (go build -overlay would be simpler, but it refuses files in the
# module cache.) Fails, and says why, when the file is gone or net/http
# comes in anew.
set -euo pipefail
dir=${1:?usage: release-modfile.sh DIR (inside the checkout)}
go=${GO:-go}
cd "$(dirname "$0")/.."
# Relative to the checkout, so the binary's build information names
# ./DIR/afero rather than this machine's path.
case $dir in /* | ../*) echo "release-modfile: $dir: give a directory inside the checkout" >&2; exit 2 ;; esac
dir=./${dir#./}
mkdir -p "$dir"

src=$("$go" mod download -json github.com/spf13/afero | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
[ -f "$src/httpFs.go" ] || {
	echo "release-modfile: $src/httpFs.go is gone: check what links net/http now (go list -deps ./cmd/rdmactl) and update this script" >&2
	exit 1
}
rm -rf "$dir/afero"
cp -R "$src" "$dir/afero"
chmod -R u+w "$dir/afero"
rm "$dir/afero/httpFs.go"
cp go.mod "$dir/release.mod"
cp go.sum "$dir/release.sum"
"$go" mod edit -replace "github.com/spf13/afero=$dir/afero" "$dir/release.mod"

if "$go" list -modfile "$dir/release.mod" -deps ./cmd/rdmactl | grep -qx net/http; then
	who=$("$go" list -modfile "$dir/release.mod" -deps -f '{{.ImportPath}}: {{join .Imports " "}}' ./cmd/rdmactl |
		awk -F': ' '$2 ~ /(^| )net\/http( |$)/ {print $1}' | tr '\n' ' ')
	echo "release-modfile: net/http is linked again, imported by: $who" >&2
	exit 1
fi
