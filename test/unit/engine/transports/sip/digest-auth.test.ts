import { describe, expect, it } from "vitest";
import { answerChallenge, digestAuthorization, parseDigestChallenge } from "../../../../../engine/transports/sip/digest-auth.js";
import { SipHeaders } from "../../../../../engine/transports/sip/sip-headers.js";
import type { SipResponse } from "../../../../../engine/transports/sip/sip-message.js";

/** RFC 2617 3.5's challenge: quoted commas in qop, plus opaque. */
const RFC2617_CHALLENGE =
  'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"';
const MUFASA = { username: "Mufasa", password: "Circle Of Life" };

/** The parameters of an Authorization value, unquoted. */
function fields(value: string): Record<string, string> {
  expect(value.startsWith("Digest ")).toBe(true);
  const out: Record<string, string> = {};
  for (const [, name, quoted, token] of value.slice(7).matchAll(/([a-z]+)=(?:"((?:[^"\\]|\\.)*)"|([^,\s]+))/g)) out[name!] = quoted ?? token!;
  return out;
}

function challengeResponse(status: number, headers: [string, string][]): SipResponse {
  return { kind: "response", status, reason: status === 401 ? "Unauthorized" : "Proxy Authentication Required", headers: new SipHeaders(headers.map(([name, value]) => ({ name, value }))), body: Buffer.alloc(0) };
}

describe("digest authentication", () => {
  it("parses a challenge with commas inside quoted strings and escapes", () => {
    expect(parseDigestChallenge(RFC2617_CHALLENGE)).toEqual({
      realm: "testrealm@host.com",
      nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093",
      opaque: "5ccc069c403ebaf9f0171e9517f40e41",
      algorithm: "MD5",
      qop: ["auth", "auth-int"],
    });
    expect(parseDigestChallenge('digest realm="a, \\"b\\"",nonce=abc , algorithm=SHA-256,stale=FALSE')).toEqual({ realm: 'a, "b"', nonce: "abc", algorithm: "SHA-256", qop: [] });
    expect(parseDigestChallenge('Basic realm="x"')).toBeUndefined();
    expect(parseDigestChallenge('Digest nonce="n"')).toBeUndefined();
  });

  it("computes RFC 2617 3.5's response (MD5, qop auth, nc 00000001)", () => {
    const value = digestAuthorization(parseDigestChallenge(RFC2617_CHALLENGE)!, MUFASA, { method: "GET", uri: "/dir/index.html" }, "0a4f113b");
    expect(fields(value)).toEqual({
      username: "Mufasa",
      realm: "testrealm@host.com",
      nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093",
      uri: "/dir/index.html",
      response: "6629fae49393a05397450978507c4ef1",
      algorithm: "MD5",
      cnonce: "0a4f113b",
      qop: "auth",
      nc: "00000001",
      opaque: "5ccc069c403ebaf9f0171e9517f40e41",
    });
  });

  it("computes RFC 7616 3.9.1's MD5 and SHA-256 responses", () => {
    const challenge = (algorithm: string) =>
      parseDigestChallenge(`Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=${algorithm}, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`)!;
    const answer = (algorithm: string) =>
      fields(digestAuthorization(challenge(algorithm), { username: "Mufasa", password: "Circle of Life" }, { method: "GET", uri: "/dir/index.html" }, "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"));
    expect(answer("MD5").response).toBe("8ca523f5e9506fed4657c9700eebdbec");
    expect(answer("SHA-256")).toMatchObject({ response: "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1", algorithm: "SHA-256" });
  });

  it("hashes nonce and cnonce into HA1 for -sess, and answers SHA-512-256 (expected values computed with Python's hashlib)", () => {
    const answer = (algorithm: string) =>
      fields(digestAuthorization(parseDigestChallenge(`${RFC2617_CHALLENGE}, algorithm=${algorithm}`)!, MUFASA, { method: "GET", uri: "/dir/index.html" }, "0a4f113b"));
    expect(answer("MD5-sess")).toMatchObject({ algorithm: "MD5-sess", response: "8e3825c57e897f5a0dec6c2d4e5059d0" });
    expect(answer("SHA-512-256").response).toBe("f23c08ec7334a881f8286e68450ddbd9f0cd91c41481f0e1433604da8113c6dc");
  });

  it("answers a challenge without qop RFC 2069 style: no cnonce, nc or qop", () => {
    const value = fields(digestAuthorization(parseDigestChallenge('Digest realm="parley.test", nonce="abc"')!, { username: "trunk", password: "s3cret" }, { method: "INVITE", uri: "sip:+15551234@127.0.0.1:5070" }));
    expect(Object.keys(value).sort()).toEqual(["algorithm", "nonce", "realm", "response", "uri", "username"]);
    // MD5(MD5("trunk:parley.test:s3cret") ":abc:" MD5("INVITE:sip:+15551234@127.0.0.1:5070")), computed with Python's hashlib.
    expect(value.response).toBe("a50e68fd241188ed096a59e84ae847de");
  });

  it("answers a 407 with Proxy-Authorization and a 401 with Authorization, each from its own challenge header", () => {
    const invite = { method: "INVITE", uri: "sip:+15551234@trunk.example.com" };
    const proxy = answerChallenge(challengeResponse(407, [["Proxy-Authenticate", 'Digest realm="proxy", nonce="p1", qop="auth"']]), invite, MUFASA);
    expect(proxy?.[0]).toBe("Proxy-Authorization");
    expect(fields(proxy![1])).toMatchObject({ realm: "proxy", nonce: "p1", uri: invite.uri, qop: "auth", nc: "00000001" });
    const www = answerChallenge(challengeResponse(401, [["WWW-Authenticate", 'Digest realm="www", nonce="w1"']]), invite, MUFASA);
    expect(www?.[0]).toBe("Authorization");
    expect(fields(www![1])).toMatchObject({ realm: "www", nonce: "w1" });
    // A 401 is answered only from WWW-Authenticate, a 407 only from Proxy-Authenticate.
    expect(answerChallenge(challengeResponse(401, [["Proxy-Authenticate", 'Digest realm="proxy", nonce="p1"']]), invite, MUFASA)).toBeUndefined();
    expect(answerChallenge(challengeResponse(403, [["WWW-Authenticate", 'Digest realm="www", nonce="w1"']]), invite, MUFASA)).toBeUndefined();
  });

  it("skips challenges it cannot answer for the first one it can", () => {
    const response = challengeResponse(401, [
      ["WWW-Authenticate", 'Digest realm="a", nonce="1", algorithm=SHA-999'],
      ["WWW-Authenticate", 'Digest realm="b", nonce="2", qop="auth-int"'],
      ["WWW-Authenticate", 'Digest realm="c", nonce="3", algorithm=MD5-sess'],
      ["WWW-Authenticate", 'Digest realm="d", nonce="4", algorithm=SHA-256, qop="auth"'],
    ]);
    expect(fields(answerChallenge(response, { method: "INVITE", uri: "sip:x@y" }, MUFASA)![1])).toMatchObject({ realm: "d", algorithm: "SHA-256" });
    expect(answerChallenge(challengeResponse(401, response.headers.lines().slice(0, 3).map(({ name, value }) => [name, value])), { method: "INVITE", uri: "sip:x@y" }, MUFASA)).toBeUndefined();
  });

  it("with a realm set, answers only a challenge naming it", () => {
    const invite = { method: "INVITE", uri: "sip:x@y" };
    const response = challengeResponse(401, [
      ["WWW-Authenticate", 'Digest realm="elsewhere", nonce="1", qop="auth"'],
      ["WWW-Authenticate", 'Digest realm="trunk.example", nonce="2", qop="auth"'],
    ]);
    expect(fields(answerChallenge(response, invite, { ...MUFASA, realm: "trunk.example" })![1])).toMatchObject({ realm: "trunk.example", nonce: "2" });
    expect(answerChallenge(challengeResponse(401, [["WWW-Authenticate", 'Digest realm="elsewhere", nonce="1"']]), invite, { ...MUFASA, realm: "trunk.example" })).toBeUndefined();
  });
});
