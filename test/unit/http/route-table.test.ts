import { describe, expect, it } from "vitest";
import { RouteTable } from "../../../src/http/route-table.js";

// The API's routes are found by a RouteTable (src/http/app.ts): the same rules as the Express
// router it replaced, which the API's clients may rely on.

const table = new RouteTable([
  { method: "post", path: "/v1/calls", route: "createCall" },
  { method: "get", path: "/v1/calls", route: "listCalls" },
  { method: "post", path: "/v1/calls/web", route: "createWebCall" },
  { method: "get", path: "/v1/calls/:call_id", route: "getCall" },
  { method: "delete", path: "/v1/calls/:call_id", route: "deleteCall" },
  { method: "post", path: "/v1/calls/:call_id/end", route: "endCall" },
  { method: "get", path: "/v1/campaigns/:campaign_id/results.csv", route: "campaignResults" },
  { method: "get", path: "/v1/account", route: "getAccount" },
]);

describe("RouteTable", () => {
  it("finds a fixed path, and a parameterised one with its parameter", () => {
    expect(table.lookup("GET", "/v1/calls")).toEqual({ found: { route: "listCalls", params: {} } });
    expect(table.lookup("GET", "/v1/calls/call_123")).toEqual({ found: { route: "getCall", params: { call_id: "call_123" } } });
    expect(table.lookup("POST", "/v1/calls/call_123/end")).toEqual({ found: { route: "endCall", params: { call_id: "call_123" } } });
    expect(table.lookup("GET", "/v1/account")).toEqual({ found: { route: "getAccount", params: {} } });
  });

  it("takes the first route registered when two match (a fixed segment before a parameter)", () => {
    expect(table.lookup("POST", "/v1/calls/web")).toEqual({ found: { route: "createWebCall", params: {} } });
  });

  it("allows one trailing slash, no more, and no empty segment", () => {
    expect(table.lookup("GET", "/v1/calls/")).toEqual({ found: { route: "listCalls", params: {} } });
    expect(table.lookup("GET", "/v1/calls/call_123/")).toEqual({ found: { route: "getCall", params: { call_id: "call_123" } } });
    expect(table.lookup("GET", "/v1/calls/call_123//")).toBeUndefined();
    expect(table.lookup("GET", "/v1/calls//")).toBeUndefined();
    expect(table.lookup("GET", "/v1//calls")).toBeUndefined();
  });

  it("is case-sensitive and matches dots literally", () => {
    expect(table.lookup("GET", "/V1/calls")).toBeUndefined();
    expect(table.lookup("GET", "/v1/Calls")).toBeUndefined();
    expect(table.lookup("GET", "/v1/campaigns/cmp_1/results.csv")).toEqual({ found: { route: "campaignResults", params: { campaign_id: "cmp_1" } } });
    expect(table.lookup("GET", "/v1/campaigns/cmp_1/resultsXcsv")).toBeUndefined();
  });

  it("decodes a parameter after matching: an encoded slash stays inside it", () => {
    expect(table.lookup("GET", "/v1/calls/a%2Fb")).toEqual({ found: { route: "getCall", params: { call_id: "a/b" } } });
    expect(table.lookup("GET", "/v1/calls/%63all_1")).toEqual({ found: { route: "getCall", params: { call_id: "call_1" } } });
  });

  it("answers HEAD with the GET route", () => {
    expect(table.lookup("HEAD", "/v1/calls/call_1")).toEqual({ found: { route: "getCall", params: { call_id: "call_1" } } });
  });

  it("names the methods a known path takes when asked another, in the order they were registered", () => {
    expect(table.lookup("PUT", "/v1/calls")).toEqual({ allowed: ["POST", "GET"] });
    expect(table.lookup("PATCH", "/v1/calls/call_1")).toEqual({ allowed: ["GET", "DELETE"] });
    expect(table.lookup("GET", "/v1/calls/call_1/end")).toEqual({ allowed: ["POST"] });
  });

  it("knows nothing of paths outside its routes (the app's other handlers take them)", () => {
    expect(table.lookup("GET", "/v1/calls/call_1/recording")).toBeUndefined();
    expect(table.lookup("GET", "/v1/openapi.json")).toBeUndefined();
    expect(table.lookup("GET", "/healthz")).toBeUndefined();
    expect(table.lookup("GET", "/")).toBeUndefined();
  });

  it("refuses a route whose first two segments are not fixed (it could not be grouped)", () => {
    expect(() => new RouteTable([{ method: "get", path: "/v1/:resource", route: "x" }])).toThrow(/first two segments/);
  });
});
