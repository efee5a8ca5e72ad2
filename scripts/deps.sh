#!/usr/bin/env bash
# Installs the Debian 12 packages datadyn needs, or prints the apt line and exits 2 when not root.
# Usage: scripts/deps.sh [--check] [--extra PKG...]
#   --check   only report what is missing (exit 2 if anything is)
set -euo pipefail

packages=(
  g++ cmake make pkg-config ccache
  libeigen3-dev libhdf5-dev hdf5-tools
  libopenvdb-dev libopenvdb-tools libboost-iostreams-dev libtbb-dev
  libcli11-dev nlohmann-json3-dev libspdlog-dev doctest-dev
  libtet1.5-dev libassimp-dev assimp-testmodels
)
check_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check_only=1 ;;
    --extra) shift; packages+=("$@"); break ;;
    *) echo "deps.sh: unknown option '$1' (expected --check or --extra PKG...)" >&2; exit 2 ;;
  esac
  shift
done

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$check_only" = 1 ]; then
  echo "missing Debian packages: ${missing[*]}" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "datadyn needs these Debian packages; run as root:" >&2
  echo "  apt-get update && $line" >&2
  exit 2
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A new machine may have empty package lists: update once, then install.
# Wait for another apt (unattended upgrades, a parallel job) rather than fail at once.
apt_opts=(-y -q --no-install-recommends -o DPkg::Lock::Timeout=600)
if ! apt-get install "${apt_opts[@]}" "${missing[@]}"; then
  apt-get update -q -o DPkg::Lock::Timeout=600
  apt-get install "${apt_opts[@]}" "${missing[@]}"
fi
