import { createHash, createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stand-in for an S3-compatible service, on 127.0.0.1: PutObject, GetObject, HeadObject and
 * DeleteObject, path-style (`/<bucket>/<key>`), objects in memory. Every request must carry
 * an AWS Signature Version 4 `Authorization` header that the known secret reproduces (else
 * 403 SignatureDoesNotMatch, as S3 answers); a signed payload hash must match the body.
 */
export interface S3StandIn {
  /** `http://127.0.0.1:<port>`: PARLEY_RECORDINGS_S3_ENDPOINT. */
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** The objects stored, by key (without the bucket). */
  objects: Map<string, { body: Buffer; contentType: string | undefined }>;
  /** Every request, as `<method> <key>` and the status answered. */
  requests: Array<{ method: string; key: string; status: number }>;
  /** The next `count` requests (after signature checks) are answered 500 InternalError. */
  failNext(count: number): void;
  close(): Promise<void>;
}

export async function startS3StandIn(options: { bucket?: string; accessKeyId?: string; secretAccessKey?: string; region?: string } = {}): Promise<S3StandIn> {
  const bucket = options.bucket ?? "parley-recordings";
  const accessKeyId = options.accessKeyId ?? "AKIDSTANDIN0000000001";
  const secretAccessKey = options.secretAccessKey ?? "standin-secret-key-0123456789abcdefghij";
  const region = options.region ?? "us-east-1";
  const objects: S3StandIn["objects"] = new Map();
  const requests: S3StandIn["requests"] = [];
  let failures = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? "/", "http://standin");
      const [, pathBucket = "", ...rest] = url.pathname.split("/");
      const key = decodeURIComponent(rest.join("/"));
      const answer = (status: number, code?: string, message?: string) => {
        requests.push({ method: req.method ?? "", key, status });
        if (!code) return res.writeHead(status).end();
        // HEAD answers carry no body.
        const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message ?? code}</Message><Key>${key}</Key></Error>`;
        res.writeHead(status, { "content-type": "application/xml" }).end(req.method === "HEAD" ? undefined : xml);
      };

      const refusal = checkSignature(req, body, { accessKeyId, secretAccessKey, region });
      if (refusal) return answer(refusal.status, refusal.code, refusal.message);
      if (failures > 0) {
        failures--;
        return answer(500, "InternalError", "We encountered an internal error. Please try again.");
      }
      if (pathBucket !== bucket) return answer(404, "NoSuchBucket", "The specified bucket does not exist");
      if (!key) return answer(400, "InvalidRequest", "The stand-in serves objects only");

      const object = objects.get(key);
      switch (req.method) {
        case "PUT":
          objects.set(key, { body, contentType: req.headers["content-type"] });
          requests.push({ method: "PUT", key, status: 200 });
          return res.writeHead(200, { etag: `"${createHash("md5").update(body).digest("hex")}"` }).end();
        case "GET":
        case "HEAD":
          if (!object) return answer(404, "NoSuchKey", "The specified key does not exist.");
          requests.push({ method: req.method, key, status: 200 });
          res.writeHead(200, { "content-type": object.contentType ?? "binary/octet-stream", "content-length": String(object.body.length) });
          return res.end(req.method === "GET" ? object.body : undefined);
        case "DELETE":
          objects.delete(key);
          return answer(204);
        default:
          return answer(405, "MethodNotAllowed", "The specified method is not allowed against this resource.");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId,
    secretAccessKey,
    region,
    objects,
    requests,
    failNext(count) {
      failures = count;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Recomputes the request's SigV4 signature (AWS4-HMAC-SHA256, service s3) with the known
 * secret; the refusal S3 would answer, or null when it matches.
 */
function checkSignature(
  req: http.IncomingMessage,
  body: Buffer,
  keys: { accessKeyId: string; secretAccessKey: string; region: string },
): { status: number; code: string; message: string } | null {
  const denied = (code: string, message: string) => ({ status: 403, code, message });
  const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(req.headers.authorization ?? "");
  if (!auth) return denied("AccessDenied", "A SigV4 Authorization header is required");
  const [, accessKeyId, date, region, signedHeaders, signature] = auth as unknown as string[];
  if (accessKeyId !== keys.accessKeyId) return denied("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.");
  if (region !== keys.region) return denied("AuthorizationHeaderMalformed", `the region '${region}' is wrong; expecting '${keys.region}'`);
  const amzDate = String(req.headers["x-amz-date"] ?? "");
  if (!amzDate.startsWith(date!)) return denied("AccessDenied", "x-amz-date does not match the credential's date");

  const payloadHash = String(req.headers["x-amz-content-sha256"] ?? "");
  if (payloadHash.startsWith("STREAMING-")) return { status: 501, code: "NotImplemented", message: "the stand-in does not decode aws-chunked payloads" };
  if (payloadHash !== "UNSIGNED-PAYLOAD" && payloadHash !== createHash("sha256").update(body).digest("hex")) {
    return { status: 400, code: "XAmzContentSHA256Mismatch", message: "The provided 'x-amz-content-sha256' header does not match what was computed." };
  }

  const names = signedHeaders!.split(";");
  if (!names.includes("host") || !names.includes("x-amz-date")) return denied("AccessDenied", "host and x-amz-date must be signed");
  const url = new URL(req.url ?? "/", "http://standin");
  const canonicalQuery = [...url.searchParams.entries()]
    .map(([k, v]) => [rfc3986(k), rfc3986(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const canonicalHeaders = names.map((name) => `${name}:${headerValue(req, name)}\n`).join("");
  // S3 signs the path as sent (no normalisation, no second encoding).
  const canonicalRequest = [req.method, url.pathname, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join("\n");
  const scope = `${date}/${region}/s3/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, createHash("sha256").update(canonicalRequest).digest("hex")].join("\n");
  let signingKey: Buffer = Buffer.from(`AWS4${keys.secretAccessKey}`);
  for (const part of [date!, region!, "s3", "aws4_request"]) signingKey = createHmac("sha256", signingKey).update(part).digest();
  const expected = createHmac("sha256", signingKey).update(stringToSign).digest("hex");
  if (expected !== signature) return denied("SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.");
  return null;
}

function headerValue(req: http.IncomingMessage, name: string): string {
  const value = req.headers[name];
  return (Array.isArray(value) ? value.join(",") : (value ?? "")).trim().replace(/\s+/g, " ");
}

function rfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
