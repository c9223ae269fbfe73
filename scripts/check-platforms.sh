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
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
pnpm=(npx -y pnpm@10.34.8)
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
here="$(uname -s | tr A-Z a-z)-$(uname -m | sed 's/x86_64/x64/; s/aarch64/arm64/')"
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(linux-x64 linux-arm64 darwin-x64 darwin-arm64)

failed=0
for platform in "${platforms[@]}"; do
  os="${platform%-*}" cpu="${platform#*-}"
  dir="$scratch/$platform"
  mkdir -p "$dir"
  (cd "$root" && cp --parents package.json pnpm-lock.yaml pnpm-workspace.yaml ./*/package.json "$dir")
  printf 'supportedArchitectures:\n  os: [%s]\n  cpu: [%s]\n  libc: [glibc]\n' "$os" "$cpu" >> "$dir/pnpm-workspace.yaml"
  scripts=()
  [ "$platform" = "$here" ] || scripts=(--ignore-scripts)
  if (cd "$dir" && CI=true "${pnpm[@]}" install --frozen-lockfile "${scripts[@]}" > "$dir.log" 2>&1); then
    bin="$(readlink -f "$dir"/node_modules/node-*-"$cpu" 2>/dev/null || true)/bin/node"
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
