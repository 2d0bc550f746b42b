// The frame around every page: skip link, navigation, sign-out, and each page's heading.
import { useEffect } from "preact/hooks";
import { html } from "./html.js";
import { BASE } from "../lib/router.js";

const SECTIONS = [
  ["/agents", "Agents"],
  ["/calls", "Calls"],
  ["/phone-numbers", "Phone numbers"],
  ["/webhooks", "Webhooks"],
  ["/campaigns", "Campaigns"],
  ["/account", "Account"],
];

export function Layout({ path, onSignOut, children }) {
  return html`
    <a class="skip-link" href="#main">Skip to content</a>
    <header class="topbar">
      <a class="brand" href=${`${BASE}/agents`}><img src=${new URL("../favicon.svg", import.meta.url).href} alt="" width="24" height="24" /> Parley</a>
      <nav aria-label="Sections">
        <ul>
          ${SECTIONS.map(
            ([to, text]) => html`<li><a href=${BASE + to} aria-current=${path === to || path.startsWith(`${to}/`) ? "page" : undefined}>${text}</a></li>`,
          )}
        </ul>
      </nav>
      <button type="button" class="secondary small-button" onClick=${onSignOut}>Sign out</button>
    </header>
    <main id="main" tabindex="-1">${children}</main>
  `;
}

/** The page's heading (focused after each navigation, for keyboards and screen readers) and its actions. */
export function PageHeader({ title, subtitle, children }) {
  useEffect(() => {
    document.title = `${title} · Parley console`;
  }, [title]);
  return html`
    <div class="page-header">
      <div>
        <h1 tabindex="-1">${title}</h1>
        ${subtitle ? html`<p class="muted">${subtitle}</p>` : null}
      </div>
      ${children ? html`<div class="actions">${children}</div>` : null}
    </div>
  `;
}
