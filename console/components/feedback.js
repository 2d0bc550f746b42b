// Small shared pieces: errors, notices, status badges, empty states, "load more".
import { html } from "./html.js";
import { label } from "../lib/format.js";

export function ErrorNotice({ error, what }) {
  if (!error) return null;
  const lacks = error.code === "forbidden";
  return html`
    <div class="alert alert-error" role="alert">
      <p>${what ? `${what}: ` : ""}${error.message} ${error.code ? html`<code>${error.code}</code>` : null}</p>
      ${lacks ? html`<p class="small">This API key lacks the permission for it; sign in with a key that holds it.</p>` : null}
      ${error.requestId ? html`<p class="muted small">Request ${error.requestId}</p>` : null}
    </div>
  `;
}

export function Notice({ children, kind = "info" }) {
  return html`<div class=${`alert alert-${kind}`} role="status">${children}</div>`;
}

const TONES = {
  completed: "ok", active: "ok", delivered: "ok", running: "info", in_progress: "info", ringing: "info", sending: "info",
  queued: "wait", scheduled: "wait", pending: "wait", paused: "wait", calling: "info",
  failed: "bad", busy: "bad", no_answer: "bad", failing: "bad", cancelled: "muted", inactive: "muted", skipped: "muted",
  transferred: "ok", do_not_call: "bad", passed: "ok", error: "bad",
};

export function StatusBadge({ status }) {
  return html`<span class=${`badge badge-${TONES[status] ?? "muted"}`}>${label(status)}</span>`;
}

export function Loading({ text = "Loading…" }) {
  return html`<p class="muted" role="status">${text}</p>`;
}

export function LoadMore({ page, onMore, busy }) {
  if (!page?.has_more) return null;
  return html`<p><button type="button" class="secondary" onClick=${onMore} disabled=${busy}>Load more</button></p>`;
}
