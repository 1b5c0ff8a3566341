#!/usr/bin/env bash
# mkdeb.sh BIN VERSION OUTDIR — package an already built rdmactl as a .deb
# with dpkg-deb: `make install-files` lays out the tree under /usr, the
# control file comes from packaging/deb/control. Prints the .deb's path.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 BIN VERSION OUTDIR" >&2; exit 2; }
bin=$1 version=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")

# Debian versions start with a digit and use - only before the revision:
# v0.1.0 -> 0.1.0, v0.1.0-3-gabc1234-dirty -> 0.1.0+3.gabc1234.dirty; an
# untagged tree (git describe gives the bare commit, which may start with a
# digit) is 0.0.0~git.
version=${version#v}
case $version in
[0-9]*.[0-9]*) version=$(tr - . <<<"$version" | sed 's/\./+/3') ;;
*) version=0.0.0~git$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown) ;;
esac
arch=$(dpkg --print-architecture)

stage=$(mktemp -d)
chmod 0755 "$stage"
trap 'rm -rf "$stage"' EXIT
make -s -C "$repo" install-files BIN="$(realpath "$bin")" DESTDIR="$stage" PREFIX=/usr >&2
mkdir -p "$stage/DEBIAN"
# cgo links libc; name the version the binary needs, as dpkg-shlibdeps would.
libc=$(dpkg-query -W -f='libc6 (>= ${Version})' libc6 2>/dev/null | sed 's/-[^-)]*)$/)/' || echo libc6)
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@LIBC@/$libc/" \
	"$here/deb/control" >"$stage/DEBIAN/control"
install -D -m 0644 "$repo/LICENSE" "$stage/usr/share/doc/rdmactl/copyright"
# Debian policy: man pages and the changelog gzipped, without timestamps (-n).
gzip -9n "$stage"/usr/share/man/man1/*.1
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(git -C "$repo" log -1 --format=%aD 2>/dev/null || date -R)
printf 'rdmactl (%s) unstable; urgency=medium\n\n  * Built from commit %s; see the project history for changes.\n\n -- %s  %s\n' \
	"$version" "$commit" "$(sed -n 's/^Maintainer: //p' "$here/deb/control")" "$date" |
	gzip -9n >"$stage/usr/share/doc/rdmactl/changelog.gz"
install -m 0755 "$here/deb/postinst" "$here/deb/prerm" "$stage/DEBIAN/"
mkdir -p "$out"
deb="$out/rdmactl_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"${DEB_COMPRESS:-xz}" --build "$stage" "$deb" >&2
echo "$deb"
