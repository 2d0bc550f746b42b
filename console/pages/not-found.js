import { html } from "../components/html.js";
import { PageHeader } from "../components/layout.js";
import { BASE } from "../lib/router.js";

export function NotFoundPage() {
  return html`
    <${PageHeader} title="Page not found" />
    <p>There is no console page at this address. <a href=${`${BASE}/agents`}>Go to the agents</a>.</p>
  `;
}
