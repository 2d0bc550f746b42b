import { IncomingMessage, request, ServerResponse } from "node:http";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { expressMessageClasses } from "../../../src/http/express-messages.js";
import { listen, type RunningServer } from "../../../src/http/server.js";

describe("requests and responses born with Express's prototypes", () => {
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it("reach the listener of a server made by listen() with app.request and app.response as prototypes, and Express serves them", async () => {
    const app = express();
    app.get("/things/:id", (req, res) => {
      res.json({ id: req.params.id, path: req.path, query: req.query, isRequest: req instanceof IncomingMessage, isResponse: res instanceof ServerResponse });
    });
    const seen: Array<{ request: boolean; response: boolean }> = [];
    running = await listen(
      {
        listener: (req, res) => {
          seen.push({ request: Object.getPrototypeOf(req) === app.request, response: Object.getPrototypeOf(res) === app.response });
          app(req, res);
        },
        messages: expressMessageClasses(app),
      },
      0,
      "127.0.0.1",
    );
    const base = `http://127.0.0.1:${running.port}`;
    // Two requests on one kept-alive connection, and a body that Express reads.
    const first = await fetch(`${base}/things/42?x=1`);
    const second = await fetch(`${base}/things/43`);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await first.json()).toEqual({ id: "42", path: "/things/42", query: { x: "1" }, isRequest: true, isResponse: true });
    expect(await second.json()).toMatchObject({ id: "43" });
    expect(seen).toEqual([
      { request: true, response: true },
      { request: true, response: true },
    ]);
  });

  it("gives an upgrade request Express's request prototype too, as a plain IncomingMessage underneath", async () => {
    const app = express();
    running = await listen({ listener: app, messages: expressMessageClasses(app) }, 0, "127.0.0.1");
    const upgraded = new Promise<IncomingMessage>((resolve) => {
      running!.server.once("upgrade", (req: IncomingMessage, socket) => {
        socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
        resolve(req);
      });
    });
    request({ port: running.port, host: "127.0.0.1", path: "/media", headers: { connection: "upgrade", upgrade: "websocket" } })
      .on("error", () => undefined)
      .on("upgrade", (_res, socket) => socket.destroy())
      .on("response", (res) => res.resume())
      .end();
    const req = await upgraded;
    expect(Object.getPrototypeOf(req)).toBe(app.request);
    expect(req.headers.upgrade).toBe("websocket");
  });
});
