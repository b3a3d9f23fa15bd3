#!/usr/bin/env bash
# Builds the addon from source with cargo and puts it where the extension loads it:
# bindings/node/pcd_node.node. Usage: build.sh [--debug]
# The addon includes the semantic model's inference (candle) through pcd-node's default `semantic`
# feature; the weights are not part of it (see docs/user-guide.md, "The semantic signal").
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
profile=release
flag=--release
if [ "${1:-}" = "--debug" ]; then profile=debug; flag=; fi
cargo build --manifest-path "$root/Cargo.toml" -p pcd-node $flag --locked
target="${CARGO_TARGET_DIR:-$root/target}"
case "$(uname -s)" in
  Darwin) lib="$target/$profile/libpcd_node.dylib" ;;
  *) lib="$target/$profile/libpcd_node.so" ;;
esac
cp "$lib" "$here/pcd_node.node"
echo "$here/pcd_node.node"
