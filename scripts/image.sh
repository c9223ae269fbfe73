#!/usr/bin/env bash
# Builds the production image, runs it and checks it: readiness (/local/healthcheck), a page, an
# /api call, a graceful stop (exit code 0 within the grace period); then prints the image's size
# and what it adds to its base.
#   bash scripts/image.sh
# Environment (all optional):
#   ENGINE       podman or docker (default: podman when installed, else docker)
#   BASE_IMAGE   the runtime base (default: obmen-base:bookworm, or obmen-base:bookworm-arm64 for
#                PLATFORM=linux/arm64, when present, see image-base.sh; else debian:bookworm-slim)
#   BUILD_IMAGE  the build stages' base, with Node >= 18.12 and npm (default: obmen-build-base:bookworm
#                when present, else node:24-slim)
#   CA_BUNDLE    a PEM bundle for a TLS-inspecting proxy in front of the npm registry, passed as
#                the build secret npm_ca (default: $NODE_EXTRA_CA_CERTS when set)
#   PLATFORM     e.g. linux/arm64 (default: this machine's); another platform's image runs here
#                under emulation (qemu-user-static, binfmt); NO_RUN=1 builds only
#   TAG          (obmen:local)   PORT  host port of the check run (3000)
#   NETWORK      the network of the build's RUN steps and of the check run (default: host with
#                podman, whose bridge needs firewall rules a minimal VM may not allow; docker's default)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
engine="${ENGINE:-$(command -v podman > /dev/null && echo podman || echo docker)}"
has_image() { "$engine" image inspect "$1" > /dev/null 2>&1; }
# image-base.sh names a base for another platform by its architecture.
own="obmen-base:bookworm"
[ -z "${PLATFORM:-}" ] || [ "${PLATFORM#linux/}" = "$(dpkg --print-architecture)" ] || own="obmen-base:bookworm-${PLATFORM#linux/}"
base="${BASE_IMAGE:-$(has_image "$own" && echo "$own" || echo debian:bookworm-slim)}"
builder="${BUILD_IMAGE:-$(has_image obmen-build-base:bookworm && echo obmen-build-base:bookworm || echo node:24-slim)}"
ca="${CA_BUNDLE:-${NODE_EXTRA_CA_CERTS:-}}"
tag="${TAG:-obmen:local}"
port="${PORT:-3000}"
network="${NETWORK:-$([ "$engine" = podman ] && echo host || true)}"
name="obmen-check-$$"
# podman in a small VM (cgroup v1 hybrid, tight rlimits): crun refuses both, runc with limits
# no higher than this shell's own does not. The same flags for the build's RUN steps and the run.
engine_flags=()
if [ "$engine" = podman ] && command -v runc > /dev/null; then
  limit="$(ulimit -Hn)"
  engine_flags=(--runtime runc --ulimit "nofile=$limit:$limit" --ulimit "nproc=$limit:$limit")
fi

build=("$engine" build "${engine_flags[@]}" -t "$tag" --build-arg "BASE_IMAGE=$base" --build-arg "BUILD_IMAGE=$builder")
[ -z "$ca" ] || build+=(--secret "id=npm_ca,src=$ca")
[ -z "${PLATFORM:-}" ] || build+=(--platform "$PLATFORM")
[ -z "$network" ] || build+=(--network "$network")
echo "[image] ${build[*]} $root"
started=$(date +%s)
"${build[@]}" "$root"
echo "[image] built in $(($(date +%s) - started)) s"

mb() { "$engine" image inspect --format '{{.Size}}' "$1" | awk '{printf "%.0f MB", $1 / 1e6}'; }
size="[image] $tag: $(mb "$tag"); its base $base: $(mb "$base"), so the Dockerfile adds $("$engine" image inspect --format '{{.Size}}' "$tag" "$base" | awk 'NR==1{t=$1} NR==2{printf "%.0f MB", (t-$1)/1e6}')"
if [ -n "${NO_RUN:-}" ]; then echo "$size"; exit 0; fi

# The check run: the app on the host port, its data in an anonymous volume removed at the end.
run=("$engine" run "${engine_flags[@]}" -d --name "$name" --stop-timeout 15)
if [ "$network" = host ]; then run+=(--network host -e "PORT=$port" -e CORE_PORT=$((port + 1))); else run+=(-p "127.0.0.1:$port:3000"); fi
cleanup() { "$engine" rm -f -v "$name" > /dev/null 2>&1 || true; }
trap cleanup EXIT
"${run[@]}" "$tag" > /dev/null
fail() { echo "[image] FAILED: $*"; "$engine" logs "$name" 2>&1 | tail -30; exit 1; }

url="http://127.0.0.1:$port"
started=$(date +%s)
until curl -fsS -o /dev/null "$url/local/healthcheck"; do
  [ "$("$engine" inspect --format '{{.State.Running}}' "$name")" = true ] || fail "the container stopped"
  [ $(($(date +%s) - started)) -lt 180 ] || fail "not ready within 180 s"
  sleep 1
done
echo "[image] ready in $(($(date +%s) - started)) s: $(curl -fsS "$url/local/healthcheck")"

page="$(curl -fsS "$url/")" || fail "GET / failed"
grep -q '<html' <<< "$page" || fail "GET / is not a page"
echo "[image] GET / : $(wc -c <<< "$page") bytes of HTML"
api="$(curl -fsS "$url/api/auth/check")" || fail "GET /api/auth/check failed"
grep -q '"is_authenticated":false' <<< "$api" || fail "GET /api/auth/check: $api"
echo "[image] GET /api/auth/check: ${api:0:80}…"

started=$(date +%s)
"$engine" stop -t 15 "$name" > /dev/null
code="$("$engine" inspect --format '{{.State.ExitCode}}' "$name")"
[ "$code" = 0 ] || fail "exit code $code after stop"
[ "$("$engine" logs "$name" 2>&1 | grep -c 'shutting down')" = 2 ] || fail "the core and the BFF did not both shut down gracefully"
echo "[image] graceful stop in $(($(date +%s) - started)) s (exit code 0, core and BFF finished their requests)"
echo "$size"
