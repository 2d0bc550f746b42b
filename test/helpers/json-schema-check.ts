/**
 * A small JSON Schema checker for the subset the OpenAPI document uses in its responses
 * (type, const, enum, anyOf, properties, required, additionalProperties, items, minimum,
 * maximum): enough to say whether an answer has the shape the document promises. Formats and
 * patterns are not checked. Returns the problems found, each with the JSON path it is at.
 */
export type JsonSchema = Record<string, any>;

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function typeMatches(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

export function schemaProblems(schema: JsonSchema, value: unknown, at = "$"): string[] {
  if (schema === undefined || Object.keys(schema).length === 0) return [];
  if (schema.anyOf) {
    const branches = (schema.anyOf as JsonSchema[]).map((s) => schemaProblems(s, value, at));
    return branches.some((b) => b.length === 0) ? [] : [`${at}: matches no anyOf branch (${branches.map((b) => b[0]).join("; ")})`];
  }
  if (schema.type !== undefined) {
    const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(value, t))) return [`${at}: expected ${types.join("|")}, got ${typeOf(value)}`];
  }
  if ("const" in schema && value !== schema.const) return [`${at}: expected ${JSON.stringify(schema.const)}`];
  if (schema.enum && !(schema.enum as unknown[]).includes(value)) return [`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`];
  const problems: string[] = [];
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${at}: ${value} < minimum ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${at}: ${value} > maximum ${schema.maximum}`);
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => problems.push(...schemaProblems(schema.items, item, `${at}[${i}]`)));
  }
  if (typeOf(value) === "object") {
    const object = value as Record<string, unknown>;
    const properties: Record<string, JsonSchema> = schema.properties ?? {};
    for (const name of schema.required ?? []) if (!(name in object)) problems.push(`${at}.${name}: missing`);
    for (const [name, v] of Object.entries(object)) {
      if (properties[name]) problems.push(...schemaProblems(properties[name], v, `${at}.${name}`));
      else if (schema.additionalProperties === false) problems.push(`${at}.${name}: not in the schema`);
      else if (typeof schema.additionalProperties === "object") problems.push(...schemaProblems(schema.additionalProperties, v, `${at}.${name}`));
    }
  }
  return problems;
}
