# The pooltool image that `pooltool bench --emit k8s-job` runs in every pod:
#   docker build -t pooltool:0.1.0 .        (then push it where the cluster pulls from)
# Node 20 on Debian slim, pooltool built from this checkout, production dependencies only;
# runs as the unprivileged `node` user. The Job manifest sets the command (`pooltool bench …`).
FROM node:20.19-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm ci --ignore-scripts
COPY bin bin
COPY src src
COPY commands commands
RUN npm run build && npm prune --omit=dev

FROM node:20.19-bookworm-slim
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/bin bin
COPY --from=build /app/dist dist
RUN ln -s /app/bin/run.js /usr/local/bin/pooltool
USER node
CMD ["pooltool", "--help"]
