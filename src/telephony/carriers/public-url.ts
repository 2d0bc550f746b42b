/** The WebSocket origin of an http(s) base URL (PARLEY_BASE_URL): where a carrier opens a call's media stream. */
export function websocketBase(baseUrl: string): string {
  return baseUrl.replace(/^http/, "ws").replace(/\/+$/, "");
}
