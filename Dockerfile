# The pooltool image that `pooltool bench --emit k8s-job` runs in every pod (docs/kubernetes.md):
#   docker build -t registry.example/pooltool:0.1.0 . && docker push registry.example/pooltool:0.1.0
# Node 20 on Debian slim, pooltool built from this checkout, production dependencies only;
# runs as the unprivileged `node` user. The Job manifest sets the command (`pooltool bench …`).
# The runtime stage holds what package.json "files" publishes (bin, dist, oclif.manifest.json: the
# manifest lists every command and flag, so oclif need not load each command to start), with
# package.json and the production node_modules; test/unit/dockerfile.test.ts keeps it so.
FROM node:20.19-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
# No install scripts: `prepare` would build before the sources are here; the build runs below.
RUN npm ci --ignore-scripts
COPY bin bin
COPY src src
COPY commands commands
# Compiles to dist/ and writes oclif.manifest.json (bin/manifest.js).
RUN npm run build && npm prune --omit=dev

FROM node:20.19-bookworm-slim
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/bin bin
COPY --from=build /app/dist dist
COPY --from=build /app/oclif.manifest.json ./
RUN ln -s /app/bin/run.js /usr/local/bin/pooltool
USER node
CMD ["pooltool", "--help"]
