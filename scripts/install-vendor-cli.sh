#!/bin/sh
# Installs one pinned vendor CLI into .vendor-clis/NAME (npm --prefix, never global) and prints
# the path of its binary. Idempotent: when the pinned version is already there, nothing is fetched.
# Usage: scripts/install-vendor-cli.sh claude-code|codex|qwen-code|cline|copilot|opencode
set -eu

name="${1:-}"
case "$name" in
  claude-code) pkg='@anthropic-ai/claude-code'; version='2.1.332'; bin='claude' ;;
  codex)       pkg='@openai/codex';             version='0.171.0'; bin='codex' ;;
  qwen-code)   pkg='@qwen-code/qwen-code';      version='0.24.4';  bin='qwen' ;;
  cline)       pkg='cline';                     version='3.0.65';  bin='cline' ;;
  copilot)     pkg='@github/copilot';           version='1.0.102'; bin='copilot' ;;
  opencode)    pkg='opencode-ai';               version='1.18.33'; bin='opencode' ;;
  *)
    echo "usage: $0 claude-code|codex|qwen-code|cline|copilot|opencode" >&2
    exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${AEP_VENDOR_CLIS_DIR:-$root/.vendor-clis}/$name"
manifest="$dir/node_modules/$pkg/package.json"
binary="$dir/node_modules/.bin/$bin"

installed_version() {
  [ -f "$manifest" ] || return 0
  node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version ?? ""))' "$manifest"
}

if [ "$(installed_version)" = "$version" ] && [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi

mkdir -p "$dir"
# A private package.json keeps the install out of the project's own dependency tree; allowScripts
# lets npm 11 run the vendor's postinstall (Claude Code links its native binary there).
cat > "$dir/package.json" <<JSON
{ "name": "vendor-cli-$name", "private": true, "allowScripts": { "$pkg": true } }
JSON

echo "installing $pkg@$version into $dir" >&2
# The pinned versions declare engines.node >= 22 but run on Node 20 (vendor-clis-observed.md §1.1, §3.1).
npm install --prefix "$dir" --no-audit --no-fund --engine-strict=false --save-exact "$pkg@$version" >&2

# Claude Code: the postinstall hard-links the platform binary over bin/claude.exe. If npm skipped
# the script, run it ourselves (vendor-clis-observed.md §1.1).
if [ "$name" = claude-code ]; then
  exe="$dir/node_modules/$pkg/bin/claude.exe"
  if ! head -c 4 "$exe" 2>/dev/null | grep -q 'ELF'; then
    (cd "$dir/node_modules/$pkg" && node install.cjs) >&2 || true
  fi
fi

if [ "$(installed_version)" != "$version" ] || [ ! -x "$binary" ]; then
  echo "install of $pkg@$version did not produce $binary" >&2
  exit 1
fi
echo "$binary"
