#!/usr/bin/env bash
# Builds the native helpers the engine runs as child processes:
#   dist/native/pocketsphinx-recognizer  (from engine/providers/asr/pocketsphinx/recognizer.c)
# Needs gcc, pkg-config and libpocketsphinx-dev (npm run setup installs the last one).
set -euo pipefail
cd "$(dirname "$0")/.."

SOURCE=engine/providers/asr/pocketsphinx/recognizer.c
OUTPUT=dist/native/pocketsphinx-recognizer

fail() {
  echo "build-native: $*" >&2
  exit 1
}

command -v gcc >/dev/null 2>&1 || fail "gcc not found: install gcc (Debian: apt-get install gcc)"
command -v pkg-config >/dev/null 2>&1 || fail "pkg-config not found: install pkg-config (Debian: apt-get install pkg-config)"
if ! FLAGS=$(pkg-config --cflags --libs pocketsphinx sphinxbase 2>/dev/null); then
  fail "pocketsphinx/sphinxbase headers not found by pkg-config: install libpocketsphinx-dev (Debian: apt-get install libpocketsphinx-dev), or run npm run setup"
fi

echo "build-native: compiling $SOURCE -> $OUTPUT"
mkdir -p "$(dirname "$OUTPUT")"
# Build beside the target and rename: concurrent builds never expose a half-written binary.
TEMP=$(mktemp "$OUTPUT.XXXXXX")
trap 'rm -f "$TEMP"' EXIT
# shellcheck disable=SC2086 # FLAGS is a list of compiler flags
gcc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -o "$TEMP" "$SOURCE" $FLAGS \
  || fail "gcc could not compile $SOURCE (see the messages above)"
chmod 755 "$TEMP"
mv -f "$TEMP" "$OUTPUT"
trap - EXIT
echo "build-native: built $OUTPUT"
