/**
 * `ParleyApi`: the openapi-fetch client typed by the generated schema, `client.api` of a
 * `ParleyClient`. Every path, parameter, body and answer of the OpenAPI document is checked
 * at compile time: `client.api.GET("/v1/agents/{agent_id}", { params: { path: { agent_id } } })`.
 * It answers `{data, error, response}` as openapi-fetch does (no exception on a 4xx); wrap a
 * call in `unwrap()` to get the data or a thrown `ParleyApiError`.
 */
import type { Client } from "openapi-fetch";
import type { paths } from "./schema.js";

export type ParleyApi = Client<paths>;
