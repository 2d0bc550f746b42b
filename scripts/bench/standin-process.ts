import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { StandinDelays } from "../standins/standin-server.js";

/** The cloud stand-ins as a child process (scripts/standins/serve-standins.ts), measured apart. */
export interface StandinProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), "../standins/serve-standins.js");

export function startStandinProcess(delays: StandinDelays): Promise<StandinProcess> {
  const args = [
    ENTRY,
    "--asr-final-ms", String(delays.asrFinalMs),
    "--llm-first-token-ms", String(delays.llmFirstTokenMs),
    "--llm-token-ms", String(delays.llmTokenMs),
    "--tts-first-byte-ms", String(delays.ttsFirstByteMs),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("exit", (code) => reject(new Error(`the stand-in server exited ${code}: ${stderr.trim()}`)));
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      const line = stdout.split("\n").find((l) => l.startsWith("{"));
      if (!line) return;
      resolve({
        url: (JSON.parse(line) as { url: string }).url,
        pid: child.pid!,
        stop: () => {
          child.kill("SIGTERM");
          return exited;
        },
      });
    });
  });
}
