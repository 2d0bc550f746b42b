import type { Duplex } from "node:stream";
import { STATUS_CODES } from "node:http";
import { ApiError } from "../core/api-error.js";
import { newId } from "../core/ids.js";

/** Refuses a WebSocket upgrade with a plain HTTP answer in the API's error envelope (with the error's headers, such as Retry-After). */
export function refuseUpgrade(socket: Duplex, err: unknown): void {
  const error = err instanceof ApiError ? err : new ApiError(500, "internal_error", "Internal error");
  const body = JSON.stringify({
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
    meta: { request_id: newId("request") },
  });
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? "Error"}\r\n` +
      "Content-Type: application/json\r\n" +
      Object.entries(error.headers ?? {})
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join("") +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      "Connection: close\r\n\r\n" +
      body,
  );
}
