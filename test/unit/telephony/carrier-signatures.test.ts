import { createHash, createHmac, generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import twilio from "twilio";
import { TelnyxWebhook } from "telnyx/lib/webhooks";
import { tokenGenerate, verifySignature } from "@vonage/jwt";
import { isTwilioSignatureValid, twilioSignature, type TwilioParams } from "../../../src/telephony/carriers/twilio/request-signature.js";
import { isTelnyxSignatureValid, telnyxPublicKey } from "../../../src/telephony/carriers/telnyx/webhook-signature.js";
import { verifyVonageSignedWebhook, vonageApiToken, VONAGE_TOKEN_TTL_SECONDS } from "../../../src/telephony/carriers/vonage/jwt.js";

// The URLs below are only strings that get signed: nothing here opens a connection.

describe("Twilio request signatures", () => {
  const authToken = "12345";
  const url = "https://parley.test/carriers/twilio/voice?number=pn_1";
  const params = { CallSid: "CA1234567890ABCDE", Caller: "+12349013030", Digits: "1234", From: "+12349013030", To: "+18005551212" };

  it("computes the example in Twilio's documentation", () => {
    expect(twilioSignature(authToken, "https://mycompany.com/myapp.php?foo=1&bar=2", params)).toBe("0/KCTR6DLpKmkAf8muzZqo1nDgQ=");
  });

  it("accepts the signature Twilio's library makes, and the library accepts ours", () => {
    const theirs = twilio.getExpectedTwilioSignature(authToken, url, params);
    expect(isTwilioSignatureValid(authToken, url, params, theirs)).toBe(true);
    const ours = twilioSignature(authToken, url, params);
    expect(ours).toBe(theirs);
    expect(twilio.validateRequest(authToken, ours, url, params)).toBe(true);
  });

  it("agrees with the library on repeated names and on parameters in another order", () => {
    const repeated: TwilioParams = { To: "+18005551212", StatusCallbackEvent: ["ringing", "answered", "completed"], From: "+12349013030" };
    const theirs = twilio.getExpectedTwilioSignature(authToken, url, repeated as Record<string, unknown>);
    expect(isTwilioSignatureValid(authToken, url, repeated, theirs)).toBe(true);
    expect(twilio.validateRequest(authToken, twilioSignature(authToken, url, repeated), url, repeated as Record<string, unknown>)).toBe(true);
    // The signed string follows the names' order, not the body's.
    const reversed = Object.fromEntries(Object.entries(params).reverse());
    expect(isTwilioSignatureValid(authToken, url, reversed, twilio.getExpectedTwilioSignature(authToken, url, params))).toBe(true);
  });

  it("refuses forged signatures", () => {
    const signature = twilio.getExpectedTwilioSignature(authToken, url, params);
    const refused = (token: string, u: string, p: TwilioParams, header: string | undefined | null) => {
      expect(isTwilioSignatureValid(token, u, p, header)).toBe(false);
      if (header) expect(twilio.validateRequest(token, header, u, p as Record<string, unknown>)).toBe(false);
    };
    refused("54321", url, params, signature); // another account's token
    refused(authToken, url, { ...params, To: "+18005550000" }, signature); // a changed parameter
    refused(authToken, url, { ...params, From: params.To, To: params.From }, signature); // values moved between names
    refused(authToken, url, { ...params, AnsweredBy: "human" }, signature); // an extra parameter
    const { Digits: _digits, ...withoutDigits } = params;
    refused(authToken, url, withoutDigits, signature); // a parameter left out
    refused(authToken, url, { ...params, Digits: "", To: `${params.To}Digits1234` }, signature); // the same characters, split otherwise
    refused(authToken, url.replace("number=pn_1", "number=pn_2"), params, signature); // another URL
    refused(authToken, "https://parley.test/carriers/twilio/status?number=pn_1", params, signature);
    refused(authToken, url, params, twilio.getExpectedTwilioSignature(authToken, url, params, "HMAC_SHA256")); // another algorithm
  });

  it("refuses missing and malformed headers, an empty auth token and non-form parameters, without throwing", () => {
    const signature = twilioSignature(authToken, url, params);
    for (const header of [undefined, null, "", " ", signature.slice(0, -1), `${signature} `, signature.toLowerCase(), "not a signature", "A".repeat(28)]) {
      expect(isTwilioSignatureValid(authToken, url, params, header)).toBe(false);
    }
    // With an empty key anyone can compute the HMAC: an unset token must not verify anything.
    expect(isTwilioSignatureValid("", url, params, twilioSignature("", url, params))).toBe(false);
    const nested = { ...params, Extra: { a: "b" } } as unknown as TwilioParams;
    expect(isTwilioSignatureValid(authToken, url, nested, signature)).toBe(false);
    expect(isTwilioSignatureValid(authToken, url, { ...params, To: [1, 2] } as unknown as TwilioParams, signature)).toBe(false);
  });
});

describe("Telnyx webhook signatures", () => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  // Telnyx's portal shows the key as base64 of its raw 32 bytes: the SPKI DER without its 12-byte prefix.
  const portalKey = publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("base64");
  const other = generateKeyPairSync("ed25519");
  const otherPortalKey = other.publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("base64");
  const rawBody = JSON.stringify({ data: { event_type: "call.initiated", id: "0ccc7b54", payload: { call_control_id: "v3:abc", to: "+18005551212" }, record_type: "event" } });

  /** What Telnyx sends: an ed25519 signature of `${timestamp}|${body}`, base64, with the timestamp in unix seconds. */
  function telnyxSigned(body: string, timestamp: number, key = privateKey) {
    return { signature: sign(null, Buffer.from(`${timestamp}|${body}`), key).toString("base64"), timestamp: String(timestamp) };
  }
  async function libraryAccepts(key: string, body: string, headers: { signature: string; timestamp: string }): Promise<boolean> {
    try {
      await new TelnyxWebhook(key).verify(body, { "telnyx-signature-ed25519": headers.signature, "telnyx-timestamp": headers.timestamp });
      return true;
    } catch {
      return false;
    }
  }

  it("accepts a signature the Telnyx library accepts, with the portal's key or a key object, body as text or bytes", async () => {
    const now = Date.now();
    const headers = telnyxSigned(rawBody, Math.floor(now / 1000));
    expect(await libraryAccepts(portalKey, rawBody, headers)).toBe(true);
    expect(isTelnyxSignatureValid({ publicKey: portalKey, ...headers, rawBody, now })).toBe(true);
    expect(isTelnyxSignatureValid({ publicKey: portalKey, ...headers, rawBody: Buffer.from(rawBody), now })).toBe(true);
    const keyObject = telnyxPublicKey(portalKey);
    expect(keyObject).not.toBeNull();
    expect(isTelnyxSignatureValid({ publicKey: keyObject!, ...headers, rawBody, now })).toBe(true);
    // The example key in the Telnyx library's documentation parses too.
    expect(telnyxPublicKey("eu2zvPjhY6odxV34Z/EsRiERvTodkev4Fq0SlK90Izg=")).not.toBeNull();
  });

  it("refuses, as the Telnyx library does, another key, a changed body, a moved timestamp and stale or future timestamps", async () => {
    const now = Date.now();
    const seconds = Math.floor(now / 1000);
    const headers = telnyxSigned(rawBody, seconds);
    const cases: Array<{ key: string; body: string; headers: { signature: string; timestamp: string } }> = [
      { key: otherPortalKey, body: rawBody, headers },
      { key: portalKey, body: rawBody, headers: telnyxSigned(rawBody, seconds, other.privateKey) },
      { key: portalKey, body: rawBody.replace("+18005551212", "+18005550000"), headers },
      { key: portalKey, body: `${rawBody} `, headers },
      { key: portalKey, body: rawBody, headers: { ...headers, timestamp: String(seconds - 1) } },
      { key: portalKey, body: rawBody, headers: telnyxSigned(rawBody, seconds - 301) },
      { key: portalKey, body: rawBody, headers: telnyxSigned(rawBody, seconds + 301) },
    ];
    for (const c of cases) {
      expect(await libraryAccepts(c.key, c.body, c.headers)).toBe(false);
      expect(isTelnyxSignatureValid({ publicKey: c.key, ...c.headers, rawBody: c.body, now })).toBe(false);
    }
  });

  it("holds the timestamp to the tolerance around the given time", () => {
    const now = 1_750_000_000_000;
    const seconds = now / 1000;
    const check = (timestamp: number, toleranceSeconds?: number) =>
      isTelnyxSignatureValid({ publicKey: portalKey, ...telnyxSigned(rawBody, timestamp), rawBody, now, ...(toleranceSeconds === undefined ? {} : { toleranceSeconds }) });
    expect(check(seconds - 300)).toBe(true);
    expect(check(seconds + 300)).toBe(true);
    expect(check(seconds - 301)).toBe(false); // a replay of a webhook six minutes old
    expect(check(seconds + 301)).toBe(false);
    expect(check(seconds - 3600)).toBe(false);
    expect(check(seconds - 30, 10)).toBe(false);
    expect(check(seconds - 30, Number.NaN)).toBe(false);
  });

  it("refuses malformed headers and keys without throwing", () => {
    const now = 1_750_000_000_000;
    const headers = telnyxSigned(rawBody, now / 1000);
    const check = (over: Partial<Parameters<typeof isTelnyxSignatureValid>[0]>) => isTelnyxSignatureValid({ publicKey: portalKey, ...headers, rawBody, now, ...over });
    expect(check({})).toBe(true);
    for (const signature of [undefined, null, "", "not base64!", headers.signature.slice(0, -4), `${headers.signature}AAAA`, Buffer.alloc(64).toString("base64"), Buffer.from(headers.signature, "base64").toString("hex")]) {
      expect(check({ signature })).toBe(false);
    }
    for (const timestamp of [undefined, null, "", "-5", "1.75e9", `${headers.timestamp}.0`, ` ${headers.timestamp}x`, "9".repeat(20)]) {
      expect(check({ timestamp })).toBe(false);
    }
    for (const key of ["", "garbage", portalKey.slice(0, -4), Buffer.alloc(31).toString("base64"), publicKey.export({ format: "pem", type: "spki" }).toString()]) {
      expect(check({ publicKey: key })).toBe(false);
    }
    expect(check({ publicKey: privateKey })).toBe(false); // a private key is not a verifying key here
    expect(check({ now: Number.NaN })).toBe(false);
  });
});

describe("Vonage tokens and signed webhooks", () => {
  const applicationId = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  const publicKeyPem = publicKey.export({ format: "pem", type: "spki" }).toString();
  const signatureSecret = "a-signature-secret-of-the-account";
  const rawBody = JSON.stringify({ uuid: "63f61863", conversation_uuid: "CON-f972836a", status: "answered", direction: "outbound", timestamp: "2025-06-15T12:00:00.000Z" });

  function decode(token: string): { header: Record<string, unknown>; claims: Record<string, unknown> } {
    const [header, claims] = token.split(".") as [string, string];
    return { header: JSON.parse(Buffer.from(header, "base64url").toString()), claims: JSON.parse(Buffer.from(claims, "base64url").toString()) };
  }

  it("makes a Voice API token the Vonage library verifies, shaped as the library's own", () => {
    const now = Date.now();
    const ours = vonageApiToken({ applicationId, privateKeyPem, now });
    expect(verifySignature(ours, publicKeyPem)).toBe(true);
    expect(verifySignature(ours, generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "pem", type: "spki" }))).toBe(false);
    const theirs = decode(tokenGenerate(applicationId, privateKeyPem));
    const mine = decode(ours);
    expect(mine.header).toEqual(theirs.header);
    expect(Object.keys(mine.claims).sort()).toEqual(Object.keys(theirs.claims).sort());
    expect(mine.claims).toMatchObject({ application_id: applicationId, iat: Math.floor(now / 1000), exp: Math.floor(now / 1000) + VONAGE_TOKEN_TTL_SECONDS });
    expect(theirs.claims.exp).toBe((theirs.claims.iat as number) + VONAGE_TOKEN_TTL_SECONDS);
    expect(mine.claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(decode(vonageApiToken({ applicationId, privateKeyPem, now })).claims.jti).not.toBe(mine.claims.jti);
  });

  it("refuses to sign with a key that is not an RSA private key", () => {
    expect(() => vonageApiToken({ applicationId, privateKeyPem: publicKeyPem, now: Date.now() })).toThrow();
    const ed = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    expect(() => vonageApiToken({ applicationId, privateKeyPem: ed, now: Date.now() })).toThrow(/RSA/);
    expect(() => vonageApiToken({ applicationId: "", privateKeyPem, now: Date.now() })).toThrow();
  });

  /** What Vonage sends: an HS256 JWT keyed with the signature secret, the body's hash in payload_hash. */
  function vonageSigned(claims: Record<string, unknown>, secret = signatureSecret, header: Record<string, unknown> = { alg: "HS256", typ: "JWT" }): string {
    const signed = `${Buffer.from(JSON.stringify(header)).toString("base64url")}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}`;
    return `${signed}.${createHmac("sha256", secret).update(signed).digest("base64url")}`;
  }
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
  const webhookClaims = (now: number, body = rawBody) => ({ iat: Math.floor(now / 1000), jti: "5b3c8b5e-8e0a-4a1f", iss: "Vonage", payload_hash: sha256(body), api_key: "abcd1234", application_id: applicationId });

  it("accepts a webhook token the Vonage library verifies with the signature secret", () => {
    const now = Date.now();
    const token = vonageSigned(webhookClaims(now));
    expect(verifySignature(token, signatureSecret)).toBe(true);
    expect(verifyVonageSignedWebhook({ authorization: `Bearer ${token}`, signatureSecret, rawBody, now })).toBe(true);
    expect(verifyVonageSignedWebhook({ authorization: `bearer ${token}`, signatureSecret, rawBody: Buffer.from(rawBody), now, applicationId })).toBe(true);
    // A GET (the answer webhook) has no body: a token without payload_hash is enough there.
    const { payload_hash: _hash, ...withoutHash } = webhookClaims(now);
    expect(verifyVonageSignedWebhook({ authorization: `Bearer ${vonageSigned(withoutHash)}`, signatureSecret, rawBody: "", now })).toBe(true);
  });

  it("refuses forged, stale, replayed-elsewhere and malformed webhook tokens", () => {
    const now = 1_750_000_000_000;
    const check = (authorization: string | undefined | null, over: Partial<Parameters<typeof verifyVonageSignedWebhook>[0]> = {}) =>
      verifyVonageSignedWebhook({ authorization, signatureSecret, rawBody, now, ...over });
    const good = vonageSigned(webhookClaims(now));
    expect(check(`Bearer ${good}`)).toBe(true);

    const wrongSecret = vonageSigned(webhookClaims(now), "another-secret");
    expect(verifySignature(wrongSecret, signatureSecret)).toBe(false);
    expect(check(`Bearer ${wrongSecret}`)).toBe(false);
    expect(check(`Bearer ${good}`, { signatureSecret: "another-secret" })).toBe(false);
    expect(check(`Bearer ${vonageSigned(webhookClaims(now), "")}`, { signatureSecret: "" })).toBe(false); // no secret set
    // The body changed under a genuine token.
    expect(check(`Bearer ${good}`, { rawBody: rawBody.replace("answered", "completed") })).toBe(false);
    // A token without payload_hash (taken from a GET) with a body of someone else's choosing.
    const { payload_hash: _hash, ...withoutHash } = webhookClaims(now);
    expect(check(`Bearer ${vonageSigned(withoutHash)}`)).toBe(false);
    expect(check(`Bearer ${vonageSigned({ ...webhookClaims(now), payload_hash: 42 })}`)).toBe(false);
    // Issued too long ago, or in the future, or expired.
    expect(check(`Bearer ${vonageSigned(webhookClaims(now - 301_000))}`)).toBe(false);
    expect(check(`Bearer ${vonageSigned(webhookClaims(now + 301_000))}`)).toBe(false);
    expect(check(`Bearer ${vonageSigned(webhookClaims(now - 299_000))}`)).toBe(true);
    expect(check(`Bearer ${vonageSigned({ ...webhookClaims(now), exp: now / 1000 - 1 })}`)).toBe(false);
    expect(check(`Bearer ${vonageSigned({ ...webhookClaims(now), iat: String(now / 1000) })}`)).toBe(false);
    const { iat: _iat, ...withoutIat } = webhookClaims(now);
    expect(check(`Bearer ${vonageSigned(withoutIat)}`)).toBe(false);
    expect(check(`Bearer ${good}`, { toleranceSeconds: Number.NaN })).toBe(false);
    // Another application of the same account.
    expect(check(`Bearer ${good}`, { applicationId: "ffffffff-bbbb-4ccc-8ddd-eeeeeeeeeeee" })).toBe(false);
    // Only HS256: not "none", not a header claiming another algorithm.
    const claimsPart = Buffer.from(JSON.stringify(webhookClaims(now))).toString("base64url");
    expect(check(`Bearer ${Buffer.from('{"alg":"none"}').toString("base64url")}.${claimsPart}.`)).toBe(false);
    expect(check(`Bearer ${vonageSigned(webhookClaims(now), signatureSecret, { alg: "HS512", typ: "JWT" })}`)).toBe(false);
    // Malformed headers.
    const [h, c, s] = good.split(".") as [string, string, string];
    for (const authorization of [undefined, null, "", good, `Basic ${good}`, "Bearer ", `Bearer ${h}.${c}`, `Bearer ${h}.${c}.${s}.x`, `Bearer ${h}.${c}.${s.slice(0, -2)}`, `Bearer ${h}.${c}!.${s}`, `Bearer ${good} extra`]) {
      expect(check(authorization)).toBe(false);
    }
    // Header and claims that are not JSON objects, signed with the right secret.
    const signedRaw = (header: string, claims: string) => {
      const part = `${Buffer.from(header).toString("base64url")}.${Buffer.from(claims).toString("base64url")}`;
      return `Bearer ${part}.${createHmac("sha256", signatureSecret).update(part).digest("base64url")}`;
    };
    expect(check(signedRaw('{"alg":"HS256"}', "[1,2]"))).toBe(false);
    expect(check(signedRaw('{"alg":"HS256"}', "not json"))).toBe(false);
    expect(check(signedRaw("null", JSON.stringify(webhookClaims(now))))).toBe(false);
    expect(check(signedRaw('{"alg":"HS256"}', JSON.stringify(webhookClaims(now))))).toBe(true);
  });
});
