#!/bin/sh
# Fetches TinyUSDZ's WebAssembly build (the npm package `tinyusdz`, pinned and checked by its
# SHA-512) into DEST, for the client test that reads mesh-export's USDA layers with a USD parser
# other than ours. Does nothing when DEST already holds this version.
# Usage: fetch_tinyusdz.sh DEST
set -eu
version=0.9.0-rc10
# The registry's `dist.integrity` of tinyusdz@0.9.0-rc10, in hex.
sha512=3204e8a8422126861a4b8a1b0951cb9652a390c1a221042ac434bd04ee8676f5504692fa4d0ff4928c3848ea35cd00f036ff448d8709b4788faf9d3abfe5ce5e
dest=$1

[ "$(cat "$dest/VERSION" 2>/dev/null || true)" = "$version" ] && exit 0
command -v npm >/dev/null || { echo "fetch_tinyusdz.sh: npm is not installed" >&2; exit 2; }

tmp="$dest.tmp.$$"
trap 'rm -rf "$tmp"' EXIT
rm -rf "$tmp"
mkdir -p "$tmp"
# A cache of its own: no dependence on a home directory or on what another npm left there.
npm pack --silent --cache "$tmp/npm-cache" "tinyusdz@$version" --pack-destination "$tmp" >/dev/null
tarball="$tmp/tinyusdz-$version.tgz"
actual=$(sha512sum "$tarball" | cut -d' ' -f1)
if [ "$actual" != "$sha512" ]; then
  echo "fetch_tinyusdz.sh: $tarball has SHA-512 $actual, expected $sha512" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$tmp"
echo "$version" >"$tmp/package/VERSION"
rm -rf "$dest"
mv "$tmp/package" "$dest"
echo "fetched tinyusdz $version into $dest" >&2
