import WebSocket from "ws";

/**
 * An upgrade's outcome: 101, the open socket and the text messages it receives (collected
 * from the start: the first may come with the 101), or the refusal's status, headers and body.
 */
export interface UpgradeOutcome {
  status: number;
  socket?: WebSocket;
  messages: any[];
  headers?: Record<string, string | string[] | undefined>;
  body?: any;
}

/** Attempts a WebSocket upgrade. */
export function upgrade(url: string, headers: Record<string, string> = {}): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const messages: any[] = [];
    ws.on("message", (data, isBinary) => {
      if (!isBinary) messages.push(JSON.parse(data.toString()));
    });
    ws.once("open", () => resolve({ status: 101, socket: ws, messages }));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, messages, headers: res.headers, body: JSON.parse(body || "null") }));
    });
    ws.once("error", reject);
  });
}
