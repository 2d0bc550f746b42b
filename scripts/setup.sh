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

echo "setup: npm ci (native modules build from source; this takes a minute or two)"
# onnxruntime-node's install script would download a GPU runtime Parley does not use; the
# environment variable skips it (as a key in .npmrc it made npm warn on every command).
ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund

echo "setup: building TypeScript"
npm run build --silent

echo "setup: building the native speech recognizer"
bash scripts/build-native.sh

echo "setup: migrating the database"
node dist/src/cli/main.js migrate

echo "setup: done. Start the service with: npm start"
