// Choosing a webhook's events: every event ("*"), or some of them.
import { html } from "./html.js";
import { EVENT_NAMES } from "../lib/api-values.js";

/** The `events` field from the form values `all` (boolean) and `events` (names). */
export function eventsFromChoice(values) {
  return values.all ? ["*"] : values.events;
}

export function EventChoice({ form, idPrefix }) {
  const errors = form.errors.events;
  const toggle = (name, on) => form.set("events", on ? [...form.values.events, name] : form.values.events.filter((n) => n !== name));
  return html`
    <fieldset class=${`events-choice${errors?.length ? " has-error" : ""}`} aria-describedby=${errors?.length ? `${idPrefix}-events-error` : undefined}>
      <legend>Events</legend>
      <div class="field field-inline">
        <input id=${`${idPrefix}-events-all`} type="checkbox" checked=${form.values.all} onChange=${(e) => form.set("all", e.currentTarget.checked)} />
        <label for=${`${idPrefix}-events-all`}>Every event (<code>*</code>)</label>
      </div>
      ${form.values.all
        ? null
        : html`<div class="checks">
            ${EVENT_NAMES.map(
              (name) => html`<div class="field field-inline">
                <input id=${`${idPrefix}-event-${name}`} type="checkbox" checked=${form.values.events.includes(name)} onChange=${(e) => toggle(name, e.currentTarget.checked)} />
                <label for=${`${idPrefix}-event-${name}`}><code>${name}</code></label>
              </div>`,
            )}
          </div>`}
      ${errors?.length ? html`<p class="field-error" id=${`${idPrefix}-events-error`}>${errors.join(" ")}</p>` : null}
    </fieldset>
  `;
}
