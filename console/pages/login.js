// Sign-in: an API key, checked against the API and then kept in sessionStorage (this tab only).
import { useEffect } from "preact/hooks";
import { html } from "../components/html.js";
import { FormError, TextField, useForm } from "../components/form.js";
import { api } from "../lib/api.js";

export function LoginPage({ reason, onSignedIn }) {
  const form = useForm({ key: "" });
  useEffect(() => {
    document.title = "Sign in · Parley console";
    document.getElementById("api-key")?.focus();
  }, []);

  const submit = async (event) => {
    event.preventDefault();
    const key = form.values.key.trim();
    const problems = key ? {} : { key: ["Enter an API key (sk_parley_...)"] };
    // GET /v1/voices needs only a valid key, whatever its permissions.
    const ok = await form.submit(async () => {
      await api("GET", "/v1/voices", { key });
      return true;
    }, problems, event.currentTarget);
    if (ok) onSignedIn(key);
  };

  return html`
    <main id="main" class="login">
      <form class="card login-card" onSubmit=${submit} novalidate>
        <h1>Parley console</h1>
        <p class="muted">Sign in with an API key. Keys are made with <code>parley admin key create</code>.</p>
        ${reason ? html`<div class="alert alert-warn" role="status">${reason}</div>` : null}
        <${FormError} error=${form.error} fields=${["key"]} />
        <${TextField}
          form=${form}
          name="key"
          id="api-key"
          label="API key"
          type="password"
          autocomplete="off"
          spellcheck="false"
          hint="Kept in this tab's session storage only, and sent to this service's API alone. Closing the tab forgets it."
        />
        <button type="submit" disabled=${form.busy}>${form.busy ? "Checking…" : "Sign in"}</button>
      </form>
    </main>
  `;
}
