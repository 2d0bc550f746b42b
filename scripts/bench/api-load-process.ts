/**
 * The benchmark's API load, run as its own process (so its CPU does not disturb the callers'
 * clock): autocannon against list endpoints until SIGTERM, then one JSON line of results.
 * Arguments: BASE_URL CONNECTIONS PATH... ; the key comes in PARLEY_API_KEY.
 */
import autocannon from "autocannon";

const [baseUrl, connections, ...paths] = process.argv.slice(2);
const instance = autocannon(
  {
    url: baseUrl!,
    connections: Number(connections),
    headers: { authorization: `Bearer ${process.env.PARLEY_API_KEY ?? ""}` },
    // Each connection cycles through the paths.
    requests: paths.map((p) => ({ method: "GET" as const, path: p })),
    // Until stopped: the benchmark stops it when the calls it accompanies are over.
    duration: 24 * 3600,
  },
  (err, result) => {
    if (err) {
      process.stderr.write(`api load: ${(err as Error).message}\n`);
      process.exit(1);
    }
    process.stdout.write(
      JSON.stringify({
        requests: result.requests.total,
        duration_s: result.duration,
        requests_per_s: result.requests.total / Math.max(0.001, result.duration),
        latency_p50_ms: result.latency.p50,
        latency_p99_ms: result.latency.p99,
        non_2xx: result.non2xx,
        errors: result.errors,
      }) + "\n",
    );
    process.exit(0);
  },
);
process.on("SIGTERM", () => instance.stop());
