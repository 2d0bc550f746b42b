import type { Services } from "../../services/container.js";
import { TEST_AUDIO_LIMITS } from "../../services/test-audio.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { deletedSchema } from "../schemas/common.js";
import { listTestAudioQuery, testAudioIdParam, testAudioListSchema, testAudioSchema, uploadTestAudioQuery } from "../schemas/test-audio.js";

const TAG = "Agent test runs";

/** Recordings for test runs' callers (docs/test-runs.md). */
export function testAudioRoutes({ testAudio }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/v1/test-audio",
      operationId: "uploadTestAudio",
      summary: `Upload a recording a test run's caller can play as a line (the body is a WAV file: PCM16, 8 to 48 kHz, mono or stereo, at most ${TEST_AUDIO_LIMITS.maxSeconds} s and 5 MiB)`,
      tag: TAG,
      permission: "agents:write",
      query: uploadTestAudioQuery,
      rawBody: { types: ["audio/wav", "audio/x-wav", "audio/wave"], limitBytes: TEST_AUDIO_LIMITS.uploadBytes, description: "The WAV file's bytes" },
      response: testAudioSchema,
      status: 201,
      errors: ["invalid_request", "invalid_audio", "test_audio_limit_reached", "payload_too_large", "unsupported_media_type"],
      handler: async ({ auth, query, body }) => testAudio.upload(auth.account.id, query.name, body as unknown as Buffer),
    }),
    defineRoute({
      method: "get",
      path: "/v1/test-audio",
      operationId: "listTestAudio",
      summary: "List the account's test audio",
      tag: TAG,
      permission: "agents:read",
      query: listTestAudioQuery,
      response: testAudioListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor"],
      handler: async ({ auth, query }) => testAudio.list(auth.account.id, query),
    }),
    defineRoute({
      method: "get",
      path: "/v1/test-audio/:audio_id",
      operationId: "getTestAudio",
      summary: "Get a test audio clip's details",
      tag: TAG,
      permission: "agents:read",
      params: testAudioIdParam,
      response: testAudioSchema,
      status: 200,
      errors: ["invalid_request", "test_audio_not_found"],
      handler: async ({ auth, params }) => testAudio.get(auth.account.id, params.audio_id),
    }),
    defineRoute({
      method: "delete",
      path: "/v1/test-audio/:audio_id",
      operationId: "deleteTestAudio",
      summary: "Delete a test audio clip (a run that names it afterwards ends the scenario error)",
      tag: TAG,
      permission: "agents:write",
      params: testAudioIdParam,
      response: deletedSchema,
      status: 200,
      errors: ["invalid_request", "test_audio_not_found"],
      handler: async ({ auth, params }) => {
        await testAudio.delete(auth.account.id, params.audio_id);
        return { id: params.audio_id, deleted: true as const };
      },
    }),
  ];
}
