/**
 * `unwrap`: from openapi-fetch's `{data, error, response}` to the data, or a thrown
 * `ParleyApiError`. The resource helpers use it on every call; use it on `client.api` calls
 * too when you want exceptions rather than checking `error` yourself:
 *
 *   const voices = await unwrap(client.api.GET("/v1/voices"));
 */
import { ParleyApiError } from "./parley-api-error.js";

/** The shape every openapi-fetch call resolves to (a union of a success and an error arm). */
export interface ApiResult<Data> {
  data?: Data;
  error?: unknown;
  response: Response;
}

export async function unwrap<Data>(pending: Promise<ApiResult<Data>>): Promise<Data> {
  const { data, error, response } = await pending;
  if (!response.ok) throw ParleyApiError.fromResponse(response, error);
  return data as Data;
}
