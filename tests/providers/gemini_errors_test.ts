// The Gemini dialect's answers about failures and models: error messages, retryable statuses
// and their delays, context overflow, and the model list.

import assert from "node:assert/strict";
import { geminiDialect } from "../../providers/gemini.ts";

const BASE = "https://generativelanguage.googleapis.com";

const QUOTA_BODY = JSON.stringify({
  error: {
    code: 429,
    message: "You exceeded your current quota.\nPlease retry in 34.4s.",
    status: "RESOURCE_EXHAUSTED",
    details: [
      { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [] },
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "34.4s" },
    ],
  },
});

Deno.test("gemini: error messages quote the provider with status and status name", () => {
  const dialect = geminiDialect();
  assert.equal(
    dialect.errorMessage(429, QUOTA_BODY),
    "429 RESOURCE_EXHAUSTED: You exceeded your current quota. Please retry in 34.4s.",
  );
  assert.equal(
    dialect.errorMessage(400, '[{"error":{"code":400,"message":"API key not valid."}}]'),
    "400 INVALID_ARGUMENT: API key not valid.",
  );
  assert.equal(
    dialect.errorMessage(502, "<html>Bad Gateway</html>"),
    "502: Bad Gateway (an HTML page)",
  );
  assert.equal(dialect.errorMessage(503, ""), "503: empty response body");
});

Deno.test("gemini: 408, 429 and 5xx are retryable; the body's RetryInfo gives the delay", () => {
  const dialect = geminiDialect();
  for (const status of [408, 429, 500, 503, 504]) {
    assert.equal(dialect.isRetryable(status, ""), true);
  }
  for (const status of [400, 401, 403, 404]) assert.equal(dialect.isRetryable(status, ""), false);
  assert.equal(dialect.retryDelayMs!(429, QUOTA_BODY), 34400);
  assert.equal(
    dialect.retryDelayMs!(
      429,
      '{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":2,"nanos":500000000}}]}}',
    ),
    2500,
  );
  assert.equal(dialect.retryDelayMs!(429, '{"error":{"code":429}}'), undefined);
  assert.equal(dialect.retryDelayMs!(503, "not json"), undefined);
});

Deno.test("gemini: a context overflow is recognised by its message", () => {
  const dialect = geminiDialect();
  const error = (message: string) => JSON.stringify({ error: { code: 400, message } });
  assert.equal(
    dialect.isContextOverflow(
      400,
      error(
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
      ),
    ),
    true,
  );
  assert.equal(dialect.isContextOverflow(400, error("API key not valid.")), false);
  assert.equal(dialect.isContextOverflow(429, error("token count exceeds")), false);
});

Deno.test("gemini: models are listed with the key header and read without models/", () => {
  const dialect = geminiDialect();
  const spec = dialect.modelsRequest!({ baseUrl: BASE, apiKey: "AIza" });
  assert.equal(spec.method, "GET");
  assert.equal(spec.url, `${BASE}/v1beta/models?pageSize=1000`);
  assert.deepEqual(spec.headers, { "x-goog-api-key": "AIza" });
  assert.deepEqual(dialect.modelsRequest!({ baseUrl: BASE, apiKey: "" }).headers, {});
  assert.deepEqual(
    dialect.parseModels!(JSON.stringify({
      models: [
        { name: "models/gemini-2.5-pro", supportedGenerationMethods: ["generateContent"] },
        { name: "models/text-embedding-004", supportedGenerationMethods: ["embedContent"] },
        { name: "models/gemini-2.5-flash" },
        { displayName: "no name" },
      ],
    })),
    ["gemini-2.5-flash", "gemini-2.5-pro"],
  );
  assert.throws(() => dialect.parseModels!("{}"), /no models/);
});
