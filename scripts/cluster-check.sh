#!/usr/bin/env bash
# The scale-out check: compose.yaml's cluster (HAProxy, two BFFs, two cores, PostgreSQL, NATS,
# the private files on a shared volume) built, brought up and put under load through the load
# balancer by scripts/cluster-load.ts, which kills one BFF and one core (kill -9) mid-load, brings
# them back, and checks the ledger, every transfer, every socket and the answers. Then down, with
# its volumes. Not in CI: about 100 s with the images built (docs/ops.md, "The cluster on one machine").
#
#   bash scripts/cluster-check.sh                 build the images, up, load, faults, checks, down
#   SKIP_BUILD=1 bash scripts/cluster-check.sh    reuse obmen:local and obmen-infra:local
#   KEEP=1 …                                      leave the cluster up afterwards (down it with
#                                                 podman-compose -p obmen-check down -v)
#   FAULT=crash …                                 the killed ones crash and restart at once
#                                                 (default down: they stay down until restored)
# Needs: podman and podman-compose (Debian's; ENGINE=docker uses `docker compose`), what
# scripts/image.sh needs, and `pnpm install` done here (the load runs on the project's Node).
# Environment (all optional): ENGINE, CLUSTER_PORT (18080: the load balancer on 127.0.0.1),
# CLUSTER_PG_PORT (15433: PostgreSQL on 127.0.0.1, for the check's set-up and verdict),
# PROJECT (obmen-check), and cluster-load.ts's knobs (CLUSTER_USERS, CLUSTER_WARMUP_S, …).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
started=$(date +%s)
say() { echo "[cluster-check $(($(date +%s) - started)) s] $*"; }

engine="${ENGINE:-$(command -v podman > /dev/null && echo podman || echo docker)}"
if [ "${engine##*/}" = podman ]; then compose=(podman-compose); else compose=("$engine" compose); fi
project="${PROJECT:-obmen-check}"
made_conf="" is_up=""
if [ "${engine##*/}" = podman ] && [ -z "${CONTAINERS_CONF:-}" ]; then
  # podman in a small VM (cgroup v1, tight rlimits): the runtime refuses limits above this shell's
  # own (image.sh passes the same per command), so every container of the cluster gets these.
  limit="$(ulimit -Hn)"
  CONTAINERS_CONF="$(mktemp)"
  export CONTAINERS_CONF
  made_conf=1
  printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' "$limit" "$limit" "$limit" "$limit" > "$CONTAINERS_CONF"
fi
down() {
  [ -n "$is_up" ] || return 0
  if [ -n "${KEEP:-}" ]; then say "KEEP=1: the cluster stays up (${compose[*]} -p $project down -v)"; return; fi
  say "down (containers and volumes)"
  remove_all
}
# The image's VOLUME /data gives each BFF and the seed an anonymous volume, which `down -v` of
# podman-compose 1.0.3 leaves behind (and its network): removed with the containers.
remove_all() {
  "$engine" ps -aq --filter "label=com.docker.compose.project=$project" | xargs -r "$engine" rm -f -v > /dev/null 2>&1 || true
  "${compose[@]}" -p "$project" down -v > /dev/null 2>&1 || true
  "$engine" network rm "${project}_obmen" > /dev/null 2>&1 || true
}
trap 'down; [ -z "$made_conf" ] || rm -f "$CONTAINERS_CONF"' EXIT
node="$root/node_modules/.bin/node"
[ -x "$node" ] || { echo "[cluster-check] no $node: run pnpm install first"; exit 1; }

export CLUSTER_PORT="${CLUSTER_PORT:-18080}" CLUSTER_PG_PORT="${CLUSTER_PG_PORT:-15433}"
export POSTGRES_PASSWORD="${POSTGRES_PASSWORD:-$(head -c 18 /dev/urandom | base64 | tr -d '/+=')}"
export DOCUMENT_KEY="${DOCUMENT_KEY:-$(head -c 32 /dev/urandom | base64)}"
export PUBLIC_URL="http://127.0.0.1:$CLUSTER_PORT"
# Every sign-in of the check comes from this one address: the per-address limits, times 10
# (the e2e suite's factor for the same reason).
export RATE_LIMIT_FACTOR="${RATE_LIMIT_FACTOR:-10}"

# ---- images ----------------------------------------------------------------------------------
has_image() { "$engine" image inspect "$1" > /dev/null 2>&1; }
base="$(has_image obmen-base:bookworm && echo obmen-base:bookworm || echo debian:bookworm-slim)"
export INFRA_BASE_IMAGE="$base"
if [ -z "${SKIP_BUILD:-}" ]; then
  say "the app's image: scripts/image.sh (built and checked, the single-container run skipped)"
  build_log="$(mktemp)"
  NO_RUN=1 ENGINE="$engine" bash scripts/image.sh > "$build_log" 2>&1 || { tail -40 "$build_log"; rm -f "$build_log"; exit 1; }
  grep '^\[image\]' "$build_log" | sed 's/^/  /'
  rm -f "$build_log"
  say "the infrastructure image (PostgreSQL, NATS, HAProxy from Debian's packages) on $base"
  infra=("$engine" build -t obmen-infra:local --build-arg "BASE_IMAGE=$base" -f scripts/cluster/Containerfile)
  # podman's bridge may lack the firewall rules a build's apt needs on a minimal VM (image.sh: the same).
  [ "${engine##*/}" != podman ] || infra+=(--network host)
  "${infra[@]}" scripts/cluster 2>&1 | tail -3 | sed 's/^/  /'
fi

# ---- up --------------------------------------------------------------------------------------
container() { "$engine" ps -a --filter "label=com.docker.compose.project=$project" --filter "label=com.docker.compose.service=$1" --format '{{.Names}}' | head -1; }
# A cluster left by an interrupted run goes first: a fresh database and file volume each time.
remove_all
is_up=1
say "up: ${compose[*]} -p $project up -d (load balancer on 127.0.0.1:$CLUSTER_PORT)"
# The database first, so that the seed and the cores find it; then everything.
"${compose[@]}" -p "$project" up -d --no-build postgres nats > "/tmp/$project-up.log" 2>&1 || { cat "/tmp/$project-up.log"; exit 1; }
wait_for() {
  local what="$1" deadline=$(($(date +%s) + 180))
  shift
  until "$@" > /dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || { say "FAILED: $what not within 180 s"; exit 1; }
    sleep 1
  done
}
wait_for "PostgreSQL ready" "$engine" exec "$(container postgres)" psql -h /tmp -U postgres -d obmen -c 'SELECT 1'
"${compose[@]}" -p "$project" up -d --no-build >> "/tmp/$project-up.log" 2>&1 || { cat "/tmp/$project-up.log"; exit 1; }
seed="$(container seed)"
seed_done() { [ "$("$engine" inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$seed")" = "exited 0" ]; }
wait_for "the seed (exit 0)" seed_done
say "seeded: $("$engine" logs "$seed" 2>&1 | tr -s " \n" " " | cut -c1-200)"

bff="$(container bff1)" core="$(container core2)"
# FAULT=down: the engine's kill -9, which its restart policy leaves alone (an operator's stop):
# each stays down until the restore step, like a lost machine. FAULT=crash: kill -9 of the
# container's first process from outside, as a crash would be: the restart policy brings it back.
case "${FAULT:-down}" in
  down) kill_of() { echo "$engine kill --signal KILL $1 > /dev/null"; } ;;
  crash) kill_of() { echo "kill -9 \$($engine inspect --format '{{.State.Pid}}' $1)"; } ;;
  *) echo "[cluster-check] FAULT is down or crash"; exit 1 ;;
esac
say "victims: $bff (a BFF) and $core (a core), FAULT=${FAULT:-down}"

# ---- load, faults, verdict -------------------------------------------------------------------
status=0
CLUSTER_URL="http://127.0.0.1:$CLUSTER_PORT" \
  DATABASE_URL="postgres://postgres:$POSTGRES_PASSWORD@127.0.0.1:$CLUSTER_PG_PORT/obmen" \
  CLUSTER_KILL_BFF="$(kill_of "$bff")" \
  CLUSTER_KILL_CORE="$(kill_of "$core")" \
  CLUSTER_RESTORE="echo \"  before: \$($engine inspect --format '{{.Name}} {{.State.Status}}' $bff $core | tr '\n' ' ')\"; $engine start $bff $core > /dev/null" \
  "$node" scripts/cluster-load.ts || status=$?

say "containers afterwards:"
"$engine" ps -a --filter "label=com.docker.compose.project=$project" --format '  {{.Names}}  {{.Status}}'
say "the load balancer's view (server state changes):"
"$engine" logs "$(container lb)" 2>&1 | grep -E 'is (DOWN|UP)|going (DOWN|UP)' | sed 's/^/  /' | tail -20 || true
say "warnings and errors logged, by message (kill -9 cuts calls in flight: the BFFs log those as upstream failures):"
for service in core1 core2 bff1 bff2; do
  "$engine" logs "$(container "$service")" 2>&1 | grep -E '"level":(40|50|60)' | grep -o '"msg":"[^"]*"' | sort | uniq -c | sort -rn | head -8 | sed "s/^/  $service: /" || true
done
say "$([ "$status" = 0 ] && echo PASSED || echo FAILED) in $(($(date +%s) - started)) s"
exit "$status"
