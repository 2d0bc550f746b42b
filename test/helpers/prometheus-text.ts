/** One sample of a Prometheus text exposition (format 0.0.4). */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed exposition: its samples, and the metric names its `# TYPE` lines declare. */
export interface Exposition {
  samples: Sample[];
  /** Declared metric names (a histogram's base name, without _bucket/_sum/_count). */
  declared: Set<string>;
  /** The value of the one sample of `name` whose labels include `labels`; 0 when none (an untouched counter). */
  value(name: string, labels?: Record<string, string>): number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const declared = new Set<string>();
  for (const line of text.split("\n")) {
    if (line.startsWith("# TYPE ")) declared.add(line.split(" ")[2]!);
    if (line === "" || line.startsWith("#")) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const value = (name: string, want: Record<string, string> = {}) => {
    const found = samples.filter((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v));
    if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(want)}`);
    return found[0]?.value ?? 0;
  };
  return { samples, declared, value };
}

/** The service's `GET /metrics` (served to loopback without a token), parsed. */
export async function scrapeMetrics(baseUrl: string, token?: string): Promise<Exposition> {
  const res = await fetch(`${baseUrl}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${await res.text()}`);
  return parseExposition(await res.text());
}
