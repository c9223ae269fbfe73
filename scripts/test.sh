#!/usr/bin/env bash
# Every test of the project, on a fresh machine of this kind too (`pnpm test`, .ci/run):
#   1. Chromium from Debian (for Playwright)    4. typecheck
#   2. PostgreSQL: the local one, or a throw-away server (scripts/pg-throwaway.sh)
#   3. the site build (the BFF serves it)       4b. lint: Biome + astro check (pnpm lint)
#                                               5. vitest (shared, core on PGlite + PostgreSQL, bff)
#                                               6. Playwright against the real stack
# Runs every step it can, then prints a summary; exits non-zero when anything failed.
#   FORCE_THROWAWAY_PG=1   ignore a PostgreSQL on 127.0.0.1:5432 and start a throw-away one
#   TEST_DATABASE_URL=...  use this PostgreSQL instead of looking for one
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PNPM=(npx -y pnpm@10.34.8)
CHROMIUM=/usr/bin/chromium
export DEBIAN_FRONTEND=noninteractive
# shellcheck source=scripts/pg-throwaway.sh
source "$ROOT/scripts/pg-throwaway.sh"
PG_THROWAWAY_NODE="$ROOT/node_modules/.bin/node"
[[ -x "$PG_THROWAWAY_NODE" ]] || PG_THROWAWAY_NODE=node

RESULTS=$(mktemp -d "${TMPDIR:-/tmp}/obmen-test-results.XXXXXX")
cleanup() {
  e2e_database_drop
  pg_throwaway_stop || true
  rm -rf "$RESULTS"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

STARTED=$(date +%s)
SUMMARY=()
FAILED=()

section() {
  printf '\n==================== %s ====================\n' "$*"
}

# step NAME COMMAND...: runs it, times it, records the outcome; never stops the script.
step() {
  local name=$1
  shift
  section "$name"
  local t0 rc=0
  t0=$(date +%s)
  "$@" || rc=$?
  local took=$(($(date +%s) - t0))
  if [[ $rc -eq 0 ]]; then
    SUMMARY+=("ok      ${took}s  $name")
  else
    SUMMARY+=("FAILED  ${took}s  $name (exit $rc)")
    FAILED+=("$name")
  fi
  return 0
}

skip() {
  section "$1"
  echo "skipped: $2"
  SUMMARY+=("skipped      $1 ($2)")
  FAILED+=("$1 (skipped)")
}

failed() {
  local name
  for name in "${FAILED[@]}"; do [[ "$name" == "$1" ]] && return 0; done
  return 1
}

ensure_chromium() {
  if [[ ! -x "$CHROMIUM" ]]; then
    if [[ $(id -u) -ne 0 ]]; then
      echo "$CHROMIUM is missing and only root can install it: apt-get install chromium" >&2
      return 1
    fi
    echo "installing Debian's chromium"
    apt-get update -qq </dev/null
    apt-get install -y -qq chromium </dev/null >/dev/null
  fi
  echo "$(timeout 30 "$CHROMIUM" --no-sandbox --headless --version 2>/dev/null || echo chromium) at $CHROMIUM"
}

local_postgres_answers() {
  command -v pg_isready >/dev/null 2>&1 && command -v psql >/dev/null 2>&1 || return 1
  pg_isready -q -h 127.0.0.1 -p 5432 -t 5 </dev/null || return 1
  PGCONNECT_TIMEOUT=5 psql -h 127.0.0.1 -p 5432 -U postgres -d test -w -qAt -c 'select 1' </dev/null >/dev/null 2>&1
}

ensure_postgres() {
  if [[ -n "${TEST_DATABASE_URL:-}" ]]; then
    echo "using TEST_DATABASE_URL from the environment"
  elif [[ "${FORCE_THROWAWAY_PG:-}" != 1 ]] && local_postgres_answers; then
    export TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test
    echo "using the local PostgreSQL"
  else
    [[ "${FORCE_THROWAWAY_PG:-}" == 1 ]] && echo "FORCE_THROWAWAY_PG=1: not looking for a local PostgreSQL"
    pg_throwaway_start || return 1
  fi
  echo "TEST_DATABASE_URL=$TEST_DATABASE_URL"
}

run_vitest() {
  VITEST_FLAKY_FILE="$RESULTS/vitest-flaky.txt" timeout --kill-after=30 1800 "${PNPM[@]}" exec vitest run \
    --reporter=default --reporter=json --reporter=./scripts/vitest-flaky.ts --outputFile.json="$RESULTS/vitest.json"
}

# The end-to-end suite's core on a fresh PostgreSQL database of its own beside the test database
# (dropped after): PostgreSQL's server processes take the suite's queries off the core's event
# loop, where PGlite runs them. Without psql the core runs on PGlite as `pnpm start` does.
E2E_DB=obmen_e2e_$$
e2e_database() {
  [[ -n "${TEST_DATABASE_URL:-}" ]] && command -v psql >/dev/null 2>&1 || return 0
  psql "$TEST_DATABASE_URL" -qAt -c "DROP DATABASE IF EXISTS $E2E_DB" -c "CREATE DATABASE $E2E_DB" </dev/null >/dev/null || return 0
  E2E_DATABASE_URL="${TEST_DATABASE_URL%/*}/$E2E_DB"
  export E2E_DATABASE_URL
  echo "the e2e suite's database: $E2E_DATABASE_URL"
}
e2e_database_drop() {
  [[ -n "${E2E_DATABASE_URL:-}" ]] || return 0
  psql "$TEST_DATABASE_URL" -qAt -c "DROP DATABASE IF EXISTS $E2E_DB WITH (FORCE)" </dev/null >/dev/null || true
  unset E2E_DATABASE_URL
}

run_playwright() {
  e2e_database
  local rc=0
  PLAYWRIGHT_JSON_OUTPUT_FILE="$RESULTS/playwright.json" PLAYWRIGHT_JSON_OUTPUT_NAME="$RESULTS/playwright.json" \
    timeout --kill-after=30 2800 "${PNPM[@]}" --filter @obmen/e2e exec playwright test --reporter=list,json || rc=$?
  e2e_database_drop
  return $rc
}

# Totals from both runners' JSON reports, as one "N passed, N failed" line.
print_totals() {
  "${PG_THROWAWAY_NODE}" -e '
    const fs = require("node:fs");
    const read = (file) => { try { return JSON.parse(fs.readFileSync(file, "utf8")); } catch { return null; } };
    const [vitestFile, playwrightFile, flakyFile] = process.argv.slice(1);
    let passed = 0, failed = 0, skipped = 0;
    const v = read(vitestFile);
    if (v) {
      passed += v.numPassedTests; failed += v.numFailedTests; skipped += v.numPendingTests + v.numTodoTests;
      console.log(`vitest:     ${v.numPassedTests} passed, ${v.numFailedTests} failed, ${v.numPendingTests + v.numTodoTests} skipped`);
      // The CI keeps only the tail of this output: name what failed here.
      for (const file of v.testResults ?? [])
        for (const t of file.assertionResults ?? [])
          if (t.status === "failed") console.log(`  failed: ${file.name.replace(process.cwd() + "/", "")} > ${t.fullName}`);
      try {
        for (const line of fs.readFileSync(flakyFile, "utf8").split("\n").filter(Boolean)) console.log(`  flaky: ${line}`);
      } catch {}
    } else console.log("vitest:     no report");
    const p = read(playwrightFile);
    if (p && p.stats) {
      const ok = p.stats.expected + p.stats.flaky;
      passed += ok; failed += p.stats.unexpected; skipped += p.stats.skipped;
      console.log(`playwright: ${ok} passed (${p.stats.flaky} flaky), ${p.stats.unexpected} failed, ${p.stats.skipped} skipped`);
      const walk = (suite, where) => {
        for (const spec of suite.specs ?? [])
          for (const t of spec.tests ?? [])
            if (t.status === "unexpected" || t.status === "flaky")
              console.log(`  ${t.status === "flaky" ? "flaky" : "failed"}: ${spec.file ?? where}:${spec.line} > ${spec.title} [${t.projectName}]`);
        for (const child of suite.suites ?? []) walk(child, suite.file ?? where);
      };
      for (const suite of p.suites ?? []) walk(suite, suite.file);
    } else console.log("playwright: no report");
    console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  ' "$RESULTS/vitest.json" "$RESULTS/playwright.json" "$RESULTS/vitest-flaky.txt" || true
}

step "chromium" ensure_chromium
step "postgresql" ensure_postgres
step "build (site)" "${PNPM[@]}" build
step "typecheck" "${PNPM[@]}" typecheck
step "lint (biome, astro check)" "${PNPM[@]}" lint
step "vitest (shared, core, bff)" run_vitest
if failed "build (site)"; then
  skip "playwright (e2e)" "the site did not build"
elif failed "chromium"; then
  skip "playwright (e2e)" "no chromium"
else
  step "playwright (e2e)" run_playwright
fi

section "summary"
printf '%s\n' "${SUMMARY[@]}"
echo "total $(($(date +%s) - STARTED))s"
print_totals
if [[ ${#FAILED[@]} -gt 0 ]]; then
  echo "FAILED: ${FAILED[*]}"
  exit 1
fi
echo "all steps passed"
