#!/usr/bin/env bash
# Builds the production image and checks it. Every platform: the image's platform, the Node
# binary's and every ELF file's machine, each NEEDED library of each ELF found in the image,
# only the target CPU's native packages, no build toolchain (Astro, Vite, TypeScript, …). This
# machine's platform: then runs it: readiness (/local/healthcheck), a page, an /api call, a
# graceful stop (exit code 0 within the grace period). Last, the image's size and what it adds
# to its base.
#   bash scripts/image.sh                         this machine's platform: build, check, run
#   PLATFORM=linux/arm64 bash scripts/image.sh    another platform: build and check, no run
# Needs, besides the engine: file and readelf (Debian's file and binutils) for the checks.
# Environment (all optional):
#   ENGINE       podman or docker, or a path to one (default: podman when installed, else docker).
#                Docker needs BuildKit: the buildx plugin, or a client older than 23 with BuildKit
#                built in, like Debian bookworm's docker.io (/usr/bin/docker, used when the docker
#                on PATH has no buildx)
#   BASE_IMAGE   the runtime base (default: obmen-base:bookworm, or obmen-base:bookworm-arm64 for
#                PLATFORM=linux/arm64, when present, see image-base.sh; else debian:bookworm-slim)
#   BUILD_IMAGE  the build stages' base, with Node >= 18.12 and npm (default: obmen-build-base:bookworm
#                when present, else node:24-slim)
#   CA_BUNDLE    a PEM bundle for a TLS-inspecting proxy in front of the npm registry, passed as
#                the build secret npm_ca (default: $NODE_EXTRA_CA_CERTS when set)
#   PLATFORM     e.g. linux/arm64 (default: this machine's). Another platform's image is built
#                without emulation (the build stages run here, the runtime stage only copies) and
#                checked without running; NO_RUN=1 skips the run on this machine's platform too
#   TAG          (obmen:local)   PORT  host port of the check run (3000)
#   NETWORK      the network of the build's RUN steps and of the check run (default: host with
#                podman, whose bridge needs firewall rules a minimal VM may not allow; docker's default)
#   DATABASE_URL the check run's database (default: unset, PGlite in a throw-away volume); with
#                NETWORK=host a PostgreSQL on this machine (a fresh PGlite applies every migration at
#                its first start, which took over the core's 60 s plugin limit on a machine at load 25)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
engine="${ENGINE:-$(command -v podman > /dev/null && echo podman || echo docker)}"
major() { "$1" --version 2> /dev/null | sed -n 's/^Docker version \([0-9]*\)\..*/\1/p'; }
if [ "${engine##*/}" = docker ]; then
  export DOCKER_BUILDKIT=1
  if ! "$engine" buildx version > /dev/null 2>&1 && [ "$(major "$engine")" -ge 23 ]; then
    # Docker 23+ builds with BuildKit only through buildx; Debian's docker.io client has it built in.
    [ -x /usr/bin/docker ] && [ "$(major /usr/bin/docker)" -lt 23 ] \
      || { echo "[image] $engine has no buildx plugin: install it, or point ENGINE at a docker client < 23"; exit 1; }
    echo "[image] $engine has no buildx: building with /usr/bin/docker ($(/usr/bin/docker --version))"
    engine=/usr/bin/docker
  fi
fi
kind="${engine##*/}"
has_image() { "$engine" image inspect "$1" > /dev/null 2>&1; }
host="$(dpkg --print-architecture)"
arch="${PLATFORM:+${PLATFORM#linux/}}"
arch="${arch:-$host}"
# image-base.sh names a base for another platform by its architecture.
own="obmen-base:bookworm"
[ "$arch" = "$host" ] || own="obmen-base:bookworm-$arch"
base="${BASE_IMAGE:-$(has_image "$own" && echo "$own" || echo debian:bookworm-slim)}"
builder="${BUILD_IMAGE:-$(has_image obmen-build-base:bookworm && echo obmen-build-base:bookworm || echo node:24-slim)}"
ca="${CA_BUNDLE:-${NODE_EXTRA_CA_CERTS:-}}"
tag="${TAG:-obmen:local}"
port="${PORT:-3000}"
network="${NETWORK:-$([ "$kind" = podman ] && echo host || true)}"
name="obmen-check-$$"
# podman in a small VM (cgroup v1 hybrid, tight rlimits): crun refuses both, runc with limits
# no higher than this shell's own does not. The same flags for the build's RUN steps and the run.
engine_flags=()
if [ "$kind" = podman ] && command -v runc > /dev/null; then
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

# The checks that need no run: the image's files, exported from a created (never started) container.
fail() { echo "[image] FAILED: $*"; exit 1; }
platform="$("$engine" image inspect --format '{{.Os}}/{{.Architecture}}' "$tag")"
[ "$platform" = "linux/$arch" ] || fail "the image is $platform, not linux/$arch"
echo "[image] platform: $platform"
case "$arch" in
  amd64) machine="x86-64" triplet=x86_64-linux-gnu cpu=x64 ;;
  arm64) machine="ARM aarch64" triplet=aarch64-linux-gnu cpu=arm64 ;;
  *) fail "no checks for $arch" ;;
esac
fs="$(mktemp -d)"
trap 'rm -rf "$fs"' EXIT
cid="$("$engine" create "$tag" 2> /dev/null)"
"$engine" export "$cid" | tar -x -C "$fs" --exclude 'dev/*'
"$engine" rm -v "$cid" > /dev/null

node="$(file -b "$fs/usr/local/bin/node")"
[[ "$node" = *"ELF 64-bit"*"$machine"* ]] || fail "/usr/local/bin/node: $node"
echo "[image] /usr/local/bin/node: ${node%%, BuildID*}"
# Every ELF file (executables, libraries, native addons): the target's machine, and each NEEDED
# library found where the dynamic linker looks (RUNPATH with $ORIGIN, then the system directories).
find "$fs" -type f ! -name '*.js' ! -name '*.mjs' ! -name '*.cjs' ! -name '*.ts' ! -name '*.json' \
  ! -name '*.map' ! -name '*.md' ! -name '*.sql' ! -name '*.html' ! -name '*.css' -print0 \
  | xargs -0 -r file -N -F $'\t' | awk -F'\t' '$2 ~ /^ *ELF/' > "$fs.elf"
elves=0
while IFS=$'\t' read -r elf kind_of; do
  elves=$((elves + 1))
  [[ "$kind_of" = *"$machine"* ]] || fail "${elf#"$fs"}: $kind_of"
  dirs=()
  origin="$(dirname "$(realpath "$elf")")"
  dynamic="$(readelf -d "$elf")"
  for runpath in $(sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p' <<< "$dynamic" | tr ':' ' '); do
    runpath="${runpath//\$\{ORIGIN\}/$origin}"
    runpath="${runpath//\$ORIGIN/$origin}"
    [[ "$runpath" = "$fs"/* ]] || runpath="$fs$runpath"
    dirs+=("$runpath")
  done
  dirs+=("$fs/lib/$triplet" "$fs/usr/lib/$triplet" "$fs/lib" "$fs/usr/lib")
  for lib in $(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' <<< "$dynamic"); do
    found=""
    for dir in "${dirs[@]}"; do [ -e "$dir/$lib" ] && found=1 && break; done
    [ -n "$found" ] || fail "${elf#"$fs"} needs $lib, which is not in the image"
  done
done < "$fs.elf"
rm -f "$fs.elf"
echo "[image] $elves ELF files, all $machine, every NEEDED library present"
# Native packages: only the target's (pnpm's supportedArchitectures in the prod-deps stage).
native="$(ls "$fs/app/node_modules/.pnpm" | grep -E -- '[-+](linux|linuxmusl|darwin|win32|freebsd|android)-' || true)"
wrong="$(grep -v -E -- "[-+]linux-$cpu(-gnu)?@" <<< "$native" || true)"
[ -z "$wrong" ] || fail "native packages of another platform: $wrong"
echo "[image] native packages: $(tr '\n' ' ' <<< "$native")"
# No build toolchain: the site is built in the build stage, the image gets its output.
tools="$(ls "$fs/app/node_modules/.pnpm" | grep -E '^(astro|@astrojs\+compiler.*|vite|vitest|typescript|esbuild|rolldown|lightningcss|@biomejs\+.*|playwright.*|autocannon|pino-pretty)@' || true)"
[ -z "$tools" ] || fail "build tools in the image: $tools"
echo "[image] no Astro, Vite, TypeScript, esbuild, rolldown, vitest, Biome, Playwright, autocannon in node_modules"

if [ "$arch" != "$host" ]; then
  echo "[image] linux/$arch does not run on this $host machine without emulation: built and checked, not run"
  echo "$size"
  exit 0
fi
if [ -n "${NO_RUN:-}" ]; then echo "$size"; exit 0; fi

# The check run: the app on the host port, its data in an anonymous volume removed at the end.
run=("$engine" run "${engine_flags[@]}" -d --name "$name" --stop-timeout 15)
if [ "$network" = host ]; then run+=(--network host -e "PORT=$port" -e CORE_PORT=$((port + 1))); else run+=(-p "127.0.0.1:$port:3000"); fi
[ -z "${DATABASE_URL:-}" ] || run+=(-e "DATABASE_URL=$DATABASE_URL")
cleanup() { "$engine" rm -f -v "$name" > /dev/null 2>&1 || true; rm -rf "$fs"; }
trap cleanup EXIT
"${run[@]}" "$tag" > /dev/null
fail() { echo "[image] FAILED: $*"; "$engine" logs "$name" 2>&1 | tail -30; exit 1; }

url="http://127.0.0.1:$port"
started=$(date +%s)
until curl -fsS -o /dev/null "$url/local/healthcheck" 2> /dev/null; do
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
