// An agent's Tests tab (issue 32): the scenarios as the JSON POST /v1/agents/{id}/test-runs
// takes, kept in this browser per agent; the runs, newest first; the selected run's results,
// polled every second while it runs. Everything the server wrote is rendered as text.
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "../components/html.js";
import { FormError, TextArea, useForm } from "../components/form.js";
import { ErrorNotice, Loading, StatusBadge } from "../components/feedback.js";
import { api } from "../lib/api.js";
import { formatClock, formatDateTime, formatMs, label } from "../lib/format.js";

const POLL_MS = 1000;

/** What the editor holds the first time: one scenario, two lines, one phrase the agent must say. */
const EXAMPLE = JSON.stringify(
  {
    scenarios: [
      {
        name: "asks the opening hours",
        caller: { lines: ["what are your opening hours", "goodbye"] },
        expect: { must_say: ["open"] },
      },
    ],
  },
  null,
  2,
);

const storageName = (agentId) => `parley.testScenarios.${agentId}`;

// Storage may be off (private modes, a policy): the editor then simply starts from the example.
function loadScenarios(agentId) {
  try {
    return localStorage.getItem(storageName(agentId));
  } catch {
    return null;
  }
}

function storeScenarios(agentId, text) {
  try {
    localStorage.setItem(storageName(agentId), text);
  } catch {
    // Not kept; the text stays in the page.
  }
}

/** `2 passed, 1 failed` (and errors, and those still to play while it runs). */
export function runSummary(run) {
  const count = (status) => run.scenarios.filter((s) => s.status === status).length;
  const parts = [`${count("passed")} passed`, `${count("failed")} failed`];
  if (count("error")) parts.push(`${count("error")} error`);
  const toGo = count("pending") + count("running");
  if (toGo) parts.push(`${toGo} to go`);
  return parts.join(", ");
}

/** An expectation's expected or seen value as text: JSON (strings quoted), `none` for null. */
function shown(value) {
  return value === null || value === undefined ? "none" : JSON.stringify(value);
}

/** Polls are worth retrying after these errors (the network, a limit, the server); not after a 4xx. */
const transient = (error) => error.status === 0 || error.status === 429 || error.status >= 500;

/**
 * The run `runId` as the API has it now, read again every second while it is `running` (and
 * the tab is visible). Stops when it ends, when another run is selected and when the page goes
 * (no timer left).
 */
function usePolledRun(agentId, runId) {
  const [state, setState] = useState({ id: null, run: null, error: null });
  useEffect(() => {
    if (!runId) return undefined;
    let timer;
    let stopped = false;
    const load = async () => {
      // A tab in the background waits (as the other pages' polling does) and reads it once shown.
      if (document.visibilityState === "hidden") {
        timer = setTimeout(load, POLL_MS);
        return;
      }
      try {
        const run = await api("GET", `/v1/agents/${agentId}/test-runs/${runId}`);
        if (stopped) return;
        setState({ id: runId, run, error: null });
        if (run.status === "running") timer = setTimeout(load, POLL_MS);
      } catch (error) {
        if (stopped) return;
        setState((previous) => ({ id: runId, run: previous.id === runId ? previous.run : null, error }));
        if (transient(error)) timer = setTimeout(load, POLL_MS);
      }
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [agentId, runId]);
  return state.id === runId ? state : { id: runId, run: null, error: null };
}

function Expectations({ expectations }) {
  if (!expectations.length) return null;
  // Failed ones first, each group in the API's order.
  const ordered = [...expectations.filter((e) => !e.passed), ...expectations.filter((e) => e.passed)];
  return html`
    <div class="table-wrap">
      <table class="numbers expectations">
        <caption>Expectations</caption>
        <thead><tr><th scope="col">Expectation</th><th scope="col">Result</th><th scope="col">Expected</th><th scope="col">Seen</th></tr></thead>
        <tbody>
          ${ordered.map(
            (e) => html`
              <tr class=${e.passed ? "expectation-passed" : "expectation-failed"}>
                <th scope="row" class="mono">${e.name}</th>
                <td><span aria-hidden="true">${e.passed ? "✓ " : "✗ "}</span>${e.passed ? "passed" : "failed"}</td>
                <td class="mono expected">${shown(e.expected)}</td>
                <td class="mono seen">${shown(e.seen)}</td>
              </tr>
            `,
          )}
        </tbody>
      </table>
    </div>
  `;
}

function Turns({ turns }) {
  if (!turns.length) return null;
  return html`
    <div class="table-wrap">
      <table class="numbers turns">
        <caption>Answer time per caller line (voice to voice)</caption>
        <thead><tr><th scope="col">Caller line</th><th scope="col" class="num">Voice to voice</th></tr></thead>
        <tbody>
          ${turns.map((t) => html`<tr><td>${t.line + 1}</td><td class="num">${t.voice_to_voice_ms === null ? "no answer" : formatMs(t.voice_to_voice_ms)}</td></tr>`)}
        </tbody>
      </table>
    </div>
  `;
}

function ScenarioTranscript({ transcript, headingId }) {
  if (!transcript?.length) return null;
  return html`
    <h4 id=${headingId}>Transcript</h4>
    <ol class="transcript test-transcript" aria-labelledby=${headingId}>
      ${transcript.map(
        (s) => html`
          <li class=${`line line-${s.role}`}>
            <span class="when">${formatClock(s.timestamp)}</span> <span class="who">${s.role === "agent" ? "Agent" : "Caller"}</span> <span class="what">${s.content}</span>
          </li>
        `,
      )}
    </ol>
  `;
}

function ScenarioResult({ scenario, index, runId }) {
  const id = `${runId}-scenario-${index}`;
  return html`
    <article class=${`scenario scenario-${scenario.status}`} aria-labelledby=${id}>
      <h3 id=${id}>${scenario.name} <${StatusBadge} status=${scenario.status} /></h3>
      ${scenario.error ? html`<p class="error-text">Error: ${scenario.error}</p>` : null}
      ${scenario.outcome ? html`<p>Outcome: ${label(scenario.outcome)}</p>` : null}
      <${Expectations} expectations=${scenario.expectations} />
      <${Turns} turns=${scenario.turns} />
      <${ScenarioTranscript} transcript=${scenario.transcript} headingId=${`${id}-transcript`} />
      ${scenario.status === "pending" ? html`<p class="muted">Not played yet.</p>` : null}
      ${scenario.status === "running" ? html`<p class="muted">Playing…</p>` : null}
    </article>
  `;
}

function RunDetail({ run, error }) {
  return html`
    <section class="card test-run" aria-labelledby="test-run-heading">
      <div class="section-head">
        <h2 id="test-run-heading">Run <span class="mono">${run.id}</span></h2>
        <${StatusBadge} status=${run.status} />
      </div>
      <p class="run-progress" role="status">${run.status === "running" ? "Running" : `Ended ${label(run.status)}`}: ${runSummary(run)}.</p>
      <p class="muted small">Started ${formatDateTime(run.created_at)}${run.completed_at ? html`, ended ${formatDateTime(run.completed_at)}` : null}</p>
      ${run.error ? html`<p class="error-text">Error: ${run.error}</p>` : null}
      <${ErrorNotice} error=${error} what="The run could not be read again" />
      ${run.scenarios.map((scenario, index) => html`<${ScenarioResult} scenario=${scenario} index=${index} runId=${run.id} />`)}
    </section>
  `;
}

function RunsList({ runs, selectedId, onSelect, onRefresh }) {
  return html`
    <section class="card" aria-labelledby="test-runs-heading">
      <div class="section-head">
        <h2 id="test-runs-heading">Runs</h2>
        <button type="button" class="secondary small-button" onClick=${onRefresh} disabled=${runs.loading}>Refresh</button>
      </div>
      <${ErrorNotice} error=${runs.error} what="The runs could not be loaded" />
      ${!runs.data && !runs.error ? html`<${Loading} />` : null}
      ${runs.data && runs.data.data.length === 0 ? html`<p class="empty">No runs yet.</p>` : null}
      ${runs.data?.data.length
        ? html`
            <div class="table-wrap">
              <table class="list test-runs">
                <caption class="visually-hidden">Test runs, newest first</caption>
                <thead><tr><th scope="col">Started</th><th scope="col">Status</th><th scope="col">Scenarios</th></tr></thead>
                <tbody>
                  ${runs.data.data.map(
                    (run) => html`
                      <tr class=${run.id === selectedId ? "selected" : ""} data-run=${run.id}>
                        <td data-label="Started">
                          <button type="button" class="link-button" aria-current=${run.id === selectedId ? "true" : undefined} onClick=${() => onSelect(run.id)}>
                            ${formatDateTime(run.created_at, true)}
                          </button>
                          <div class="muted small mono">${run.id}</div>
                        </td>
                        <td data-label="Status"><${StatusBadge} status=${run.status} /></td>
                        <td data-label="Scenarios" class="run-summary">${runSummary(run)}</td>
                      </tr>
                    `,
                  )}
                </tbody>
              </table>
            </div>
            ${runs.data.has_more ? html`<p class="muted small">The ${runs.data.data.length} newest of ${runs.data.total} runs.</p>` : null}
          `
        : null}
    </section>
  `;
}

/** The Tests tab of agent `agentId`; `runId` and `onRunChange` keep the selected run in the address. */
export function AgentTests({ agentId, runId, onRunChange }) {
  const initial = useRef(loadScenarios(agentId) ?? EXAMPLE);
  const form = useForm({ scenarios: initial.current });
  const runs = useRuns(agentId);
  const [chosen, setChosen] = useState(runId ?? null);
  const selectedId = chosen ?? runs.data?.data[0]?.id ?? null;
  const polled = usePolledRun(agentId, selectedId);

  // Kept per agent once edited, so a reload (or coming back) finds the scenarios as they were.
  useEffect(() => {
    if (form.values.scenarios !== initial.current) storeScenarios(agentId, form.values.scenarios);
  }, [agentId, form.values.scenarios]);

  // The list shows each run as last read.
  useEffect(() => {
    if (polled.run) runs.replace(polled.run);
  }, [polled.run]);

  const select = (id) => {
    setChosen(id);
    onRunChange?.(id);
  };

  const start = async (event) => {
    event.preventDefault();
    let body;
    const problems = {};
    try {
      body = JSON.parse(form.values.scenarios);
    } catch (err) {
      problems.scenarios = [`is not valid JSON (${err.message})`];
    }
    const created = await form.submit(() => api("POST", `/v1/agents/${agentId}/test-runs`, { body }), problems, event.currentTarget);
    if (!created) return;
    runs.add(created);
    select(created.id);
  };

  const selected = polled.run ?? runs.data?.data.find((r) => r.id === selectedId) ?? null;
  return html`
    <form class="card test-editor" onSubmit=${start} novalidate aria-labelledby="test-scenarios-heading">
      <h2 id="test-scenarios-heading">Scenarios</h2>
      <${FormError} error=${form.error} fields=${["scenarios"]} />
      <${TextArea}
        form=${form}
        name="scenarios"
        id="test-scenarios"
        class="mono"
        rows="14"
        spellcheck="false"
        label="Scenarios (JSON)"
        hint=${html`A body for POST /v1/agents/{id}/test-runs: <code>{"scenarios": [...]}</code>, up to 10, each a name, the caller's lines and what to expect (docs/test-runs.md). Kept in this browser for this agent.`}
      />
      <div class="form-actions">
        <button type="submit" disabled=${form.busy}>${form.busy ? "Starting…" : "Run"}</button>
        <span class="muted small">Each scenario is a call of real length, played one after another.</span>
      </div>
    </form>
    <${RunsList} runs=${runs} selectedId=${selectedId} onSelect=${select} onRefresh=${runs.reload} />
    ${selected ? html`<${RunDetail} run=${selected} error=${polled.error} />` : polled.error ? html`<${ErrorNotice} error=${polled.error} what="The run could not be loaded" />` : null}
  `;
}

/** The agent's runs, newest first (the first page), with the runs this page made or read again merged in. */
function useRuns(agentId) {
  const [state, setState] = useState({ data: undefined, error: null, loading: true });
  const generation = useRef(0);
  const reload = async () => {
    const mine = ++generation.current;
    setState((previous) => ({ ...previous, loading: true }));
    try {
      const data = await api("GET", `/v1/agents/${agentId}/test-runs`, { query: { limit: 20 } });
      if (mine === generation.current) setState({ data, error: null, loading: false });
    } catch (error) {
      if (mine === generation.current) setState((previous) => ({ ...previous, error, loading: false }));
    }
  };
  useEffect(() => {
    void reload();
    return () => {
      generation.current++;
    };
  }, [agentId]);
  const update = (change) => setState((previous) => (previous.data ? { ...previous, data: change(previous.data) } : previous));
  return {
    ...state,
    reload,
    add: (run) => update((page) => ({ ...page, data: [run, ...page.data.filter((r) => r.id !== run.id)], total: page.total + 1 })),
    replace: (run) => update((page) => ({ ...page, data: page.data.map((r) => (r.id === run.id ? run : r)) })),
  };
}
