import type { ApiError } from "../../src/core/api-error.js";
import type { TestScenario } from "../../src/services/test-run-scenario.js";
import type { StartedTestRun } from "../../src/services/test-runs.js";
import type { TestApp } from "./test-app.js";

/**
 * Has `app` carry its test runs out by only recording them (no engine, no calls): the test
 * ends each with the results it wants (`testRuns.finish`). `refusal` stands for the engine's
 * own checks of the scenarios. Returns the runs started so far, in order.
 */
export function recordTestRuns(app: TestApp, refusal: (scenarios: readonly TestScenario[]) => ApiError | null = () => null): StartedTestRun[] {
  const started: StartedTestRun[] = [];
  app.parley.services.testRuns.carryOutWith({ refusal, start: (run) => void started.push(run) });
  return started;
}
