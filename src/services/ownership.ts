import { ApiError } from "../core/api-error.js";

/**
 * The one rule for reaching a resource by id: unknown is 404 with the resource's own code;
 * another account's is 403 `unauthorized`.
 */
export function findOwned<T extends { account_id: string }>(
  row: T | undefined,
  accountId: string,
  notFound: { code: string; message: string },
): T {
  if (!row) throw new ApiError(404, notFound.code, notFound.message);
  if (row.account_id !== accountId) throw new ApiError(403, "unauthorized", "This resource belongs to another account");
  return row;
}
