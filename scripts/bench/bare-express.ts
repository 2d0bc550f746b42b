/**
 * The yardstick of `npm run bench:api`: a bare Express app, in its own process, answering each
 * path it is given with the JSON body Parley answered it with (no key check, no rate limit,
 * no query, no logging). Told its routes over IPC (`{ routes: [{ path, body }] }`); replies
 * `{ port }` once it listens on loopback.
 */
import express from "express";

interface Routes {
  routes: Array<{ path: string; body: unknown }>;
}

process.once("message", (message: Routes) => {
  const app = express();
  // The textbook app: each route answers res.json(body), so it serialises the same body Parley does.
  // Left as Express ships it (app.listen, so each request and response gets Express's prototypes
  // per request), unlike Parley's server (src/http/express-messages.ts): that is the yardstick named.
  for (const { path, body } of message.routes) app.get(path, (_req, res) => res.json(body));
  const server = app.listen(0, "127.0.0.1", () => {
    const address = server.address();
    process.send!({ port: typeof address === "object" && address ? address.port : 0 });
  });
});
process.on("disconnect", () => process.exit(0));
