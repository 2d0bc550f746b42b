/**
 * Types read from the generated schema (schema.ts) by operation id, so that the helpers and
 * the names exported for callers (`Agent`, `CallListItem`, ...) follow the OpenAPI document
 * and never drift from it: regenerate the schema and these types change with it.
 */
import type { operations } from "./schema.js";

/** Every operation id of the document (`createAgent`, `listCalls`, ...). */
export type OperationId = keyof operations;

type JsonContent<T> = T extends { content: { "application/json": infer Body } } ? Body : never;

/** The JSON body an operation answers with `status` (its success status unless told). */
export type ResponseBody<Op extends OperationId, Status extends keyof operations[Op]["responses"] = SuccessStatus<Op>> = JsonContent<
  operations[Op]["responses"][Status]
>;

/** The 2xx status the document lists for an operation (200 or 201). */
export type SuccessStatus<Op extends OperationId> = Extract<keyof operations[Op]["responses"], 200 | 201>;

/** The JSON request body of an operation. */
export type RequestBody<Op extends OperationId> = JsonContent<NonNullable<operations[Op]["requestBody"]>>;

/** The query parameters of an operation (an empty object type when it has none). */
export type QueryParams<Op extends OperationId> = operations[Op]["parameters"] extends { query?: infer Q } ? ([Q] extends [never] ? Record<string, never> : NonNullable<Q>) : Record<string, never>;

/** The item type of a list operation's `data`. */
export type ListItem<Op extends OperationId> = ResponseBody<Op> extends { data: Array<infer Item> } ? Item : never;

/** A list operation's filters as the helpers take them: the document's query parameters without `cursor` (the iterator follows cursors itself). */
export type ListFilters<Op extends OperationId> = Omit<QueryParams<Op>, "cursor">;
