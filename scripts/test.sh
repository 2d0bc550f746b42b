#!/usr/bin/env bash
# npm test: the lanes of vitest.config.ts in two processes side by side, each running one file
# at a time (a single vitest run shares one pool between its projects, so it would run them one
# after another). Beside the realtime lane: the few files that need modules of their own
# (isolated), the other lane, then the postgres lane (the API suites again on PostgreSQL).
# Arguments (file filters, -t ...) go to every lane; fails if any fails.
set -u
cd "$(dirname "$0")/.."
(
  npx vitest run --dir test --project isolated --passWithNoTests "$@"
  isolated=$?
  npx vitest run --dir test --project other --passWithNoTests "$@"
  other=$?
  npx vitest run --dir test --project postgres --passWithNoTests "$@"
  postgres=$?
  [ "$isolated" -eq 0 ] && [ "$other" -eq 0 ] && [ "$postgres" -eq 0 ]
) &
beside=$!
npx vitest run --dir test --project realtime --passWithNoTests "$@"
realtime=$?
wait "$beside"
beside=$?
[ "$realtime" -eq 0 ] && [ "$beside" -eq 0 ]
