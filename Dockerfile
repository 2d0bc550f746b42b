# Parley in a container: docs/operating.md, "Container recipe". Not built by this repository's CI
# (its machine has no container engine): written from scripts/setup.sh.

# Build: the native modules (better-sqlite3, @discordjs/opus) compile from source against the
# image's own Node headers (/usr/local/include/node: no download), and the pocketsphinx
# recognizer is a small C program linked against Debian's libpocketsphinx.
FROM node:24-bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libpocketsphinx-dev pkg-config && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/parley
COPY . .
# onnxruntime-node would otherwise download a GPU runtime Parley does not use.
RUN ONNXRUNTIME_NODE_INSTALL=skip npm_config_nodedir=/usr/local npm ci --no-audit --no-fund \
 && npm run build \
 && node dist/scripts/check-native-modules.js \
 && bash scripts/build-native.sh \
 && npm prune --omit=dev

# Run: the recognizer needs pocketsphinx's libraries and its US-English model; the Festival and
# eSpeak NG voices need their programs. sox (for `parley talk` on a terminal), sip-tester,
# tcpdump, the browsers, PostgreSQL and Kamailio, which setup also installs, are for the tests.
FROM node:24-bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      pocketsphinx pocketsphinx-en-us festival festvox-kallpc16k festvox-us-slt-hts espeak-ng \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/parley
COPY --from=build /opt/parley /opt/parley
ENV PARLEY_DATA_DIR=/var/lib/parley \
    PARLEY_RTP_PORTS=10000-10199
RUN install -d -o node -g node -m 0700 /var/lib/parley
USER node
VOLUME /var/lib/parley
EXPOSE 8080/tcp 5060/udp 10000-10199/udp
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/cli/main.js", "serve"]
