import { z } from "zod";
import { ApiError, type FieldProblem } from "../core/api-error.js";

/**
 * Fields that have an error code of their own in the reference. Any other bad, missing or
 * unknown field is `invalid_request`. When several fields fail, the first field (in the
 * order zod reports them) with its own code decides the code; `details.fields` lists all.
 */
const FIELD_CODES: Record<string, string> = {
  voice_id: "invalid_voice_id",
  system_prompt: "invalid_system_prompt",
  language: "invalid_language",
  phone_number: "invalid_phone_number",
  from_number: "invalid_from_number",
  url: "invalid_url",
  events: "invalid_events",
  status: "invalid_status",
  country: "invalid_country",
  from_date: "invalid_date_format",
  to_date: "invalid_date_format",
  cursor: "invalid_cursor",
};

export type RequestPart = "body" | "query" | "params";

function problemsOf(error: z.ZodError): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) problems.push({ field: [...issue.path, key].join("."), message: "unknown field" });
      continue;
    }
    const field = issue.path.join(".") || "(body)";
    const missing = issue.code === "invalid_type" && issue.input === undefined;
    problems.push({ field, message: missing ? "is required" : issue.message });
  }
  return problems;
}

export function validationError(part: RequestPart, error: z.ZodError): ApiError {
  const fields = problemsOf(error);
  const topLevel = (f: FieldProblem) => f.field.split(".")[0] ?? "";
  const own = fields.find((f) => FIELD_CODES[topLevel(f)] !== undefined);
  const code = own ? FIELD_CODES[topLevel(own)]! : "invalid_request";
  const first = own ?? fields[0];
  const where = part === "body" ? "" : ` (${part === "query" ? "query parameter" : "path parameter"})`;
  const message = first ? `${first.field}${where}: ${first.message}` : "Invalid request";
  return new ApiError(400, code, message, { fields });
}

export function parsePart<S extends z.ZodType>(schema: S, part: RequestPart, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(part, result.error);
  return result.data;
}
