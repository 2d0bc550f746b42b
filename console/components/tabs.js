// A tab list (WAI-ARIA tabs pattern): buttons with role=tab, the arrow keys, Home and End move
// between them and select (automatic activation). The page renders the selected panel only.
import { html } from "./html.js";

/** `tabs`: `[{id, label}]`; the panel of tab `x` is the element with id `${idPrefix}-panel-x`. */
export function Tabs({ tabs, selected, onSelect, label, idPrefix }) {
  const move = (event, index) => {
    const last = tabs.length - 1;
    const next = { ArrowRight: index === last ? 0 : index + 1, ArrowLeft: index === 0 ? last : index - 1, Home: 0, End: last }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    onSelect(tabs[next].id);
    // The new tab's button keeps the focus (it is re-rendered as the selected one).
    setTimeout(() => document.getElementById(`${idPrefix}-tab-${tabs[next].id}`)?.focus(), 0);
  };
  return html`
    <div class="tabs" role="tablist" aria-label=${label}>
      ${tabs.map(
        (tab, index) => html`
          <button
            type="button"
            role="tab"
            id=${`${idPrefix}-tab-${tab.id}`}
            class="tab"
            aria-selected=${tab.id === selected ? "true" : "false"}
            aria-controls=${tab.id === selected ? `${idPrefix}-panel-${tab.id}` : undefined}
            tabindex=${tab.id === selected ? "0" : "-1"}
            onClick=${() => onSelect(tab.id)}
            onKeyDown=${(event) => move(event, index)}
          >
            ${tab.label}
          </button>
        `,
      )}
    </div>
  `;
}

/** The selected tab's panel, labelled by its tab. */
export function TabPanel({ idPrefix, tab, children }) {
  return html`<div role="tabpanel" id=${`${idPrefix}-panel-${tab}`} aria-labelledby=${`${idPrefix}-tab-${tab}`} class="tab-panel">${children}</div>`;
}
