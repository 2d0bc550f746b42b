#!/usr/bin/env bash
# npm test: the two lanes of vitest.config.ts in two processes side by side, each running one
# file at a time (a single vitest run shares one pool between its projects, so it would run
# them one after another). Arguments (file filters, -t ...) go to both; fails if either fails.
set -u
cd "$(dirname "$0")/.."
npx vitest run --dir test --project other --passWithNoTests "$@" &
other=$!
npx vitest run --dir test --project realtime --passWithNoTests "$@"
realtime=$?
wait "$other"
other=$?
[ "$realtime" -eq 0 ] && [ "$other" -eq 0 ]
