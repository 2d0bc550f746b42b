/** Why a request to a chat model service failed, whatever its wire format: the single source of the chat errors' codes. */
export const CHAT_ERROR_CODES = [
  /** The server answered with an HTTP error status (see `status`). */
  "http_status",
  /** No connection, or the connection broke (a stream ending before its last event too). */
  "network",
  /** No byte within `requestTimeoutMs`, first or between later ones. */
  "timeout",
  /** The server reported an error inside the stream (e.g. Anthropic's `overloaded_error`). */
  "stream_error",
  /** The server sent something that is not a stream of its protocol. */
  "invalid_response",
] as const;

export type ChatErrorCode = (typeof CHAT_ERROR_CODES)[number];
