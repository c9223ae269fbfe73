#!/usr/bin/env bash
# One bench suite of several commits, alternated in one run on one machine, so that their figures
# are compared under the same conditions (a figure from another hour or machine is not comparable):
#
#   bash scripts/bench-side-by-side.sh SUITE REF [REF...]
#
# Each REF (a commit, a branch, or "." for this working tree as it is) gets a worktree under
# $BENCH_TREES (default /tmp/obmen-bench), installed and built once; then each tree's own
# `scripts/bench-all.ts` runs BENCH_SUITES=SUITE, REF after REF, $BENCH_PASSES times (default 2).
# Other BENCH_* variables pass through (e.g. BENCH_MONEY_ENGINES=postgres).
set -euo pipefail
suite=${1:?usage: bench-side-by-side.sh SUITE REF [REF...]}
shift
[ $# -gt 0 ] || { echo 'usage: bench-side-by-side.sh SUITE REF [REF...]' >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
trees=${BENCH_TREES:-/tmp/obmen-bench}
passes=${BENCH_PASSES:-2}
pnpm() { npx -y pnpm@10.34.8 "$@"; }
declare -a dirs=()
for ref in "$@"; do
  if [ "$ref" = . ]; then dirs+=("$here"); continue; fi
  dir="$trees/$(git -C "$here" rev-parse --short "$ref")"
  if [ ! -d "$dir" ]; then
    git -C "$here" worktree add -q --detach "$dir" "$ref"
    (cd "$dir" && pnpm install --frozen-lockfile >/dev/null && pnpm build >/dev/null)
  fi
  dirs+=("$dir")
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for pass in $(seq 1 "$passes"); do
  for i in "${!dirs[@]}"; do
    dir=${dirs[$i]}
    echo
    echo "### pass $pass: $(git -C "$dir" log -1 --format='%h %s' | cut -c1-80)"
    (cd "$dir" && BENCH_SUITES=$suite pnpm --silent bench) || echo "(exit $?)"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
