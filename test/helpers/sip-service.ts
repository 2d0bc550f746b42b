import { freeUdpPort } from "./sipp.js";
import { startTestApp, type TestApp } from "./test-app.js";

export const SIP_HOST = "127.0.0.1";

/**
 * The service with its engine on and SIP listening on a free loopback port, taking INVITEs
 * from 127.0.0.0/8, its RTP ports in `rtpPorts` (each test file its own range), plus `settings`.
 */
export async function startSipService(rtpPorts: string, settings: Record<string, string> = {}): Promise<{ app: TestApp; sipPort: number }> {
  const sipPort = await freeUdpPort(SIP_HOST);
  const app = await startTestApp(
    {},
    { PARLEY_ENGINE: "1", PARLEY_SIP_PORT: String(sipPort), PARLEY_SIP_HOST: SIP_HOST, PARLEY_SIP_ALLOW: "127.0.0.0/8", PARLEY_RTP_PORTS: rtpPorts, ...settings },
  );
  return { app, sipPort };
}
