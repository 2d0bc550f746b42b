/** A minimal client of the service's REST API for the benchmark: JSON in and out, errors thrown with the body. */
export type RestClient = (method: string, urlPath: string, body?: unknown) => Promise<any>;

export function restClient(baseUrl: string, key: string): RestClient {
  return async (method, urlPath, body) => {
    const res = await fetch(baseUrl + urlPath, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = res.status === 204 ? null : await res.json();
    if (!res.ok) throw new Error(`${method} ${urlPath}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}
