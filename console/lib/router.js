// History routing under /console: /console/agents, /console/calls/call_..., ... The server
// answers every such path with the same page, so links can be opened, shared and reloaded.
import { useEffect, useState } from "preact/hooks";

export const BASE = "/console";

const listeners = new Set();

function notify() {
  for (const listener of listeners) listener();
}

/** The route part of the current address: `/calls/call_1` for `/console/calls/call_1`. */
export function currentPath() {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return path.replace(/\/+$/, "") || "/";
}

export function currentQuery() {
  return new URLSearchParams(location.search);
}

/** Goes to a route (`/agents/agent_1`, with an optional query string); `state` travels with it. */
export function navigate(to, { replace = false, state = null } = {}) {
  const url = BASE + (to.startsWith("/") ? to : `/${to}`);
  if (replace) history.replaceState(state, "", url);
  else history.pushState(state, "", url);
  notify();
}

/** Rewrites the query string of the current route (filters), without a new history entry. */
export function setQuery(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== "") search.set(name, value);
  const text = search.toString();
  history.replaceState(history.state, "", location.pathname + (text ? `?${text}` : ""));
}

/** Matches `path` against patterns like `/agents/:id`; returns the params or null. */
export function match(pattern, path) {
  const want = pattern.split("/").filter(Boolean);
  const have = path.split("/").filter(Boolean);
  if (want.length !== have.length) return null;
  const params = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(":")) params[want[i].slice(1)] = decodeURIComponent(have[i]);
    else if (want[i] !== have[i]) return null;
  }
  return params;
}

/** Re-renders the caller on every navigation; returns the current path. */
export function useLocation() {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return path;
}

/** Plain links to /console/... navigate in the page (a modified click still opens a new tab). */
export function interceptLinks() {
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = event.target.closest?.("a[href]");
    if (!link || link.target || link.hasAttribute("download") || link.getAttribute("href").startsWith("#")) return;
    const url = new URL(link.href, location.href);
    if (url.origin !== location.origin || !(url.pathname === BASE || url.pathname.startsWith(`${BASE}/`))) return;
    event.preventDefault();
    navigate(url.pathname.slice(BASE.length) + url.search);
  });
}
