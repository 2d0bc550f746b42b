import { defineConfig } from "vitest/config";

/**
 * Two lanes, run side by side by `npm test` (scripts/test.sh), one test file at a time in each
 * (the machine has two cores):
 * - `realtime`: files that run calls against the clock (audio paced in real time through the
 *   engine, SIP peers, the benchmark, the browser). Two of them at once on two cores make each
 *   other late enough to change what the recognizer hears, so they never overlap each other.
 *   The API throughput test is here too: its load generator and two servers take both cores
 *   for seconds, the load this lane keeps away from calls paced in real time.
 * - `other`: unit, API, CLI and client tests, and end-to-end tests whose calls carry no audio
 *   to recognize (limits, restarts, webhooks, the data directory) or whose checks do not rest on
 *   what is recognized (the carriers' signalling and streams, SIP against sipp and Kamailio),
 *   which run meanwhile.
 */
const NOT_REALTIME_E2E = [
  "test/e2e/admission-control.test.ts",
  "test/e2e/call-content-deletion.test.ts",
  "test/e2e/campaign-restart.test.ts",
  "test/e2e/campaign-thousand.test.ts",
  "test/e2e/custom-tools.test.ts",
  "test/e2e/data-directory.test.ts",
  "test/e2e/handoffs.test.ts",
  "test/e2e/knowledge-bases.test.ts",
  "test/e2e/list-pages-bench.test.ts",
  "test/e2e/log-hygiene.test.ts",
  "test/e2e/media-endpoint-limits.test.ts",
  "test/e2e/multi-node.test.ts",
  "test/e2e/provider-fallback.test.ts",
  "test/e2e/remote-providers.test.ts",
  "test/e2e/service-process.test.ts",
  "test/e2e/session-workers.test.ts",
  "test/e2e/sip-kamailio.test.ts",
  "test/e2e/sipp.test.ts",
  "test/e2e/telnyx-carrier.test.ts",
  "test/e2e/twilio-carrier.test.ts",
  "test/e2e/vonage-carrier.test.ts",
  "test/e2e/web-calls.test.ts",
  "test/e2e/webhook-bench.test.ts",
  "test/e2e/webhook-delivery.test.ts",
  "test/browser/console-static.test.ts",
  "test/browser/console-supervision.test.ts",
  "test/browser/console-test-runs.test.ts",
  "test/browser/firefox.test.ts",
  "test/browser/resampler.test.ts",
];
const REALTIME = ["test/e2e/**/*.test.ts", "test/browser/**/*.test.ts"];
/**
 * The suites that run a second time on PostgreSQL (the `postgres` lane, beside the realtime
 * one): the API's (agents, calls, campaigns, webhooks and their deliveries...) and the browser
 * calls' end to end. Calls, campaigns and webhooks across two real nodes on PostgreSQL are
 * test/e2e/multi-node.test.ts (other lane, its own cluster).
 */
const ON_POSTGRES = ["test/api/**/*.test.ts", "test/e2e/web-calls.test.ts"];
/** Files that replace a module (vi.mock) and so need one of their own: they run isolated, in the `isolated` lane. */
const OWN_MODULES = ["test/unit/engine/providers/tts/flite-tts-workers.test.ts"];
/** SQLite's own: its query plans. */
const SQLITE_ONLY = ["test/api/list-query-plans.test.ts"];

export default defineConfig({
  test: {
    projects: [
      { test: { name: "realtime", include: REALTIME, exclude: NOT_REALTIME_E2E, maxWorkers: 1 } },
      // isolate: false: the files of these two lanes share one module cache instead of importing
      // the service afresh each (which took 187 s of the other lane and 95 s of the postgres one);
      // each file still starts its own apps, databases and servers.
      { test: { name: "other", include: ["test/!(e2e|browser)/**/*.test.ts", ...NOT_REALTIME_E2E], exclude: OWN_MODULES, maxWorkers: 1, isolate: false } },
      { test: { name: "isolated", include: OWN_MODULES, maxWorkers: 1 } },
      { test: { name: "postgres", include: ON_POSTGRES, exclude: SQLITE_ONLY, maxWorkers: 1, isolate: false, globalSetup: ["test/helpers/postgres-global-setup.ts"] } },
    ],
  },
});
