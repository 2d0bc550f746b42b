/** Voices: `GET /v1/voices`, the voices of the configured speech providers (an agent's `voice_id` names one). */
import type { ListItem, QueryParams } from "../operation-types.js";
import type { ParleyApi } from "../parley-api.js";
import { fetchOptions, type RequestOptions } from "../request-options.js";
import { unwrap } from "../unwrap.js";

export type Voice = ListItem<"listVoices">;

export function voicesResource(api: ParleyApi) {
  return {
    /** Every voice (`language` filters); the API answers them on one page. */
    list: async (query?: QueryParams<"listVoices">, options?: RequestOptions): Promise<Voice[]> =>
      (await unwrap(api.GET("/v1/voices", { ...(query ? { params: { query } } : {}), ...fetchOptions(options) }))).data,
  };
}

export type VoicesResource = ReturnType<typeof voicesResource>;
