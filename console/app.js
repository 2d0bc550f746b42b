// The console's entry: sign-in gate, routes, layout.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { html } from "./components/html.js";
import { Layout } from "./components/layout.js";
import { session } from "./lib/api.js";
import { interceptLinks, match, navigate, useLocation } from "./lib/router.js";
import { LoginPage } from "./pages/login.js";
import { AgentsPage } from "./pages/agents.js";
import { AgentPage } from "./pages/agent.js";
import { TalkPage } from "./pages/talk.js";
import { CallsPage } from "./pages/calls.js";
import { CallPage } from "./pages/call.js";
import { PhoneNumbersPage } from "./pages/phone-numbers.js";
import { WebhooksPage } from "./pages/webhooks.js";
import { WebhookPage } from "./pages/webhook.js";
import { CampaignsPage } from "./pages/campaigns.js";
import { AccountPage } from "./pages/account.js";
import { NotFoundPage } from "./pages/not-found.js";

const ROUTES = [
  ["/agents", AgentsPage],
  ["/agents/new", AgentPage],
  ["/agents/:id", AgentPage],
  ["/agents/:id/talk", TalkPage],
  ["/calls", CallsPage],
  ["/calls/:id", CallPage],
  ["/phone-numbers", PhoneNumbersPage],
  ["/webhooks", WebhooksPage],
  ["/webhooks/:id", WebhookPage],
  ["/campaigns", CampaignsPage],
  ["/account", AccountPage],
];

function resolve(path) {
  for (const [pattern, Page] of ROUTES) {
    const params = match(pattern, path);
    if (params) return { Page, params };
  }
  return { Page: NotFoundPage, params: {} };
}

function App() {
  const path = useLocation();
  const [key, setKey] = useState(session.key);
  const [signedOutReason, setSignedOutReason] = useState(null);

  useEffect(() => {
    const onSignedOut = () => {
      setKey(null);
      setSignedOutReason("You were signed out: the service refused the key (revoked, or wrong).");
    };
    window.addEventListener("parley:signed-out", onSignedOut);
    return () => window.removeEventListener("parley:signed-out", onSignedOut);
  }, []);

  useEffect(() => {
    if (key && path === "/") navigate("/agents", { replace: true });
  }, [key, path]);

  // After each navigation, the new page's heading takes the focus.
  useEffect(() => {
    const heading = document.querySelector("main h1");
    if (heading && document.activeElement !== heading && !document.activeElement?.closest?.("main")) heading.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  }, [path, Boolean(key)]);

  if (!key) {
    return html`<${LoginPage}
      reason=${signedOutReason}
      onSignedIn=${(newKey) => {
        session.signIn(newKey);
        setSignedOutReason(null);
        setKey(newKey);
      }}
    />`;
  }
  const { Page, params } = resolve(path);
  return html`
    <${Layout} path=${path} onSignOut=${() => {
      session.signOut();
      setSignedOutReason(null);
    }}>
      <${Page} key=${path} params=${params} />
    <//>
  `;
}

interceptLinks();
const root = document.getElementById("app");
root.textContent = "";
render(html`<${App} />`, root);
