import { afterAll, beforeAll, describe, expect, it } from "vitest";
import dgram from "node:dgram";
import { fileURLToPath } from "node:url";
import { startKamailio, type Kamailio } from "../helpers/kamailio.js";
import { rawRequest, runCleanups } from "../helpers/sip-agents.js";
import { requestText } from "../helpers/sip-raw-peer.js";
import { freeUdpPort, startSipp } from "../helpers/sipp.js";
import { SIP_HOST as HOST, startSipService } from "../helpers/sip-service.js";
import type { TestAccount, TestApp } from "../helpers/test-app.js";

// SIP across nodes: Kamailio with the shipped docs/deploy/kamailio.cfg spreads sipp's calls over
// two Parley nodes on loopback (each its own SQLite for now, the same number provisioned on
// both), probes them with OPTIONS, and once a stopped node fails its probe sends every call to
// the node left. ACK and BYE reach the answering node through the proxy (Record-Route).

const NUMBER = "+14155550188";
const SCENARIO = fileURLToPath(new URL("./sipp/uac-via-proxy.xml", import.meta.url));

interface Node {
  app: TestApp;
  acct: TestAccount;
  sipPort: number;
}

let nodeA: Node;
let nodeB: Node;
let kamailio: Kamailio;
let nodeBStopped = false;

async function startNode(rtpPorts: string): Promise<Node> {
  const { app, sipPort } = await startSipService(rtpPorts);
  const acct = await app.account({ credits: 100 });
  const agent = await app.request("POST", "/v1/agents", {
    key: acct.key,
    body: { name: "Front desk", system_prompt: "You answer calls for Acme Dental.", voice_id: "flite-kal", first_message: "Acme Dental, hello." },
  });
  await app.activeNumber(acct.key, { phone_number: NUMBER, country: "US", default_agent_id: agent.body.id });
  return { app, acct, sipPort };
}

beforeAll(async () => {
  nodeA = await startNode("36000-36099");
  nodeB = await startNode("36100-36199");
  kamailio = await startKamailio([`${HOST}:${nodeA.sipPort}`, `${HOST}:${nodeB.sipPort}`]);
}, 60_000);

afterAll(async () => {
  await kamailio?.stop();
  await nodeA?.app.close();
  if (!nodeBStopped) await nodeB?.app.close();
});

/** `count` calls from sipp to the number through `proxy`, `limit` at a time, each about a second and a half. */
async function callThroughProxy(count: number, limit = 2, proxy = kamailio): Promise<void> {
  const sipp = await startSipp([
    `${proxy.host}:${proxy.port}`, "-sf", SCENARIO, "-s", NUMBER.slice(1), "-m", String(count), "-l", String(limit), "-r", "10",
    "-d", "1500", "-rtp_echo", "-i", HOST, "-p", String(await freeUdpPort()), "-mp", String(await freeUdpPort()),
  ]);
  try {
    const exit = await sipp.exited;
    expect(exit.code, `${exit.output}\nkamailio:\n${proxy.output().slice(-3000)}`).toBe(0);
  } finally {
    await sipp.cleanup();
  }
}

/** The node's inbound calls but those in `except` (ids), once none of them is still in progress. */
async function endedCalls(node: Node, except: ReadonlySet<string> = new Set()): Promise<any[]> {
  let calls: any[] = [];
  for (let i = 0; i < 100; i++) {
    const listed: any[] = (await node.app.request("GET", "/v1/calls?direction=inbound&limit=100", { key: node.acct.key })).body.data;
    calls = listed.filter((c) => !except.has(c.id));
    if (calls.every((c) => c.status !== "in_progress")) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return calls;
}

async function callIds(node: Node): Promise<Set<string>> {
  return new Set((await endedCalls(node)).map((c) => c.id));
}

/**
 * A stand-in node on loopback: answers the proxy's OPTIONS probes with 200 and counts the
 * INVITEs it gets, answering them 503 + Retry-After (a node at capacity) or not at all (a node
 * that hangs).
 */
async function stubNode(invites: "busy" | "silent") {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, HOST, resolve));
  let received = 0;
  socket.on("message", (data, from) => {
    const text = data.toString();
    const method = /^(\w+) /.exec(text)?.[1];
    if (method !== "OPTIONS" && method !== "INVITE") return;
    if (method === "INVITE") received++;
    if (method === "INVITE" && invites === "silent") return;
    const copied = text.split("\r\n").filter((line) => /^(Via|From|To|Call-ID|CSeq):/i.test(line));
    const [status, extra] = method === "OPTIONS" ? ["200 OK", []] : ["503 Service Unavailable", ["Retry-After: 5"]];
    const response = [`SIP/2.0 ${status}`, ...copied.map((line) => (/^To:/i.test(line) ? `${line};tag=stub` : line)), ...extra, "Content-Length: 0", "", ""];
    socket.send(Buffer.from(response.join("\r\n")), from.port, from.address);
  });
  return {
    address: `${HOST}:${socket.address().port}`,
    invites: () => received,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

describe("SIP across nodes (Kamailio)", () => {
  it("tries the next node when one answers 503 (at capacity) or does not answer the INVITE at all, takes the silent one back once it answers probes, answers 503 + Retry-After when all are full", async () => {
    const busy = await stubNode("busy");
    const silent = await stubNode("silent");
    const proxy = await startKamailio([busy.address, silent.address, `${HOST}:${nodeA.sipPort}`]);
    try {
      const before = await callIds(nodeA);
      // One at a time: round-robin makes each of the three the first choice once, so the busy node
      // and the silent one each get an INVITE, and node A ends up with every call.
      await callThroughProxy(3, 1, proxy);
      expect(busy.invites()).toBeGreaterThan(0);
      expect(silent.invites()).toBeGreaterThan(0);
      const calls = await endedCalls(nodeA, before);
      expect(calls).toHaveLength(3);
      for (const call of calls) expect(call).toMatchObject({ status: "completed", phone_number: NUMBER });
      // The silent node was taken out on its timeout; it still answers probes, so it is back in.
      await proxy.printed(new RegExp(`node OPTIONS sip:${silent.address} up`));
    } finally {
      await proxy.stop();
    }
    // Every node full: the carrier gets 503 with the node's Retry-After (relayed, it would be a 500 without it).
    const full = await startKamailio([busy.address]);
    try {
      const answer = await rawRequest(full.port, (port) => requestText(port, "z9hG4bKfull", { user: NUMBER.slice(1) }));
      expect(answer.status).toBe(503);
      expect(answer.headers.get("Retry-After")).toBe("5");
    } finally {
      await runCleanups();
      await full.stop();
      await proxy.stop();
      await busy.close();
      await silent.close();
    }
  }, 60_000);

  it("spreads calls over both nodes, and sends every call to the node left once the other stops answering its probes", async () => {
    const earlier = await callIds(nodeA);
    await callThroughProxy(6);
    const onA = await endedCalls(nodeA, earlier);
    const onB = await endedCalls(nodeB);
    // Round-robin: both nodes took calls, each one completed (its ACK and BYE came through the proxy).
    expect(onA.length + onB.length).toBe(6);
    expect(onA.length).toBeGreaterThan(0);
    expect(onB.length).toBeGreaterThan(0);
    for (const call of [...onA, ...onB]) expect(call).toMatchObject({ direction: "inbound", status: "completed", phone_number: NUMBER });

    nodeBStopped = true;
    await nodeB.app.close();
    await kamailio.printed(new RegExp(`node OPTIONS sip:${HOST}:${nodeB.sipPort} down`));
    await callThroughProxy(4);
    const after = await endedCalls(nodeA, earlier);
    expect(after).toHaveLength(onA.length + 4);
    for (const call of after) expect(call).toMatchObject({ status: "completed", phone_number: NUMBER });
  }, 90_000);
});
