// The Anthropic dialect's answers about failures and models: error messages, retryable
// statuses, context overflow, and the model list.

import assert from "node:assert/strict";
import { anthropicDialect } from "../../providers/anthropic.ts";

const BASE = "https://api.anthropic.com";

Deno.test("anthropic: error messages quote the provider with status, type and request id", () => {
  const dialect = anthropicDialect();
  assert.equal(
    dialect.errorMessage(
      429,
      '{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"},"request_id":"req_011"}',
    ),
    "429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit (request req_011)",
  );
  assert.equal(
    dialect.errorMessage(
      400,
      '{"type":"error","error":{"type":"invalid_request_error","message":"a\\n  b"}}',
    ),
    "400 invalid_request_error: a b",
  );
  assert.equal(
    dialect.errorMessage(502, "<html>\n<h1>Bad Gateway</h1></html>"),
    "502: Bad Gateway (an HTML page)",
  );
  assert.equal(dialect.errorMessage(503, ""), "503: empty response body");
  assert.ok(dialect.errorMessage(500, "x".repeat(2000)).length < 520);
});

Deno.test("anthropic: 408, 409, 429, 529 and 5xx are retryable, other 4xx are not", () => {
  const dialect = anthropicDialect();
  for (const status of [408, 409, 429, 500, 502, 503, 529]) {
    assert.equal(dialect.isRetryable(status, ""), true, `${status}`);
  }
  for (const status of [400, 401, 403, 404, 413]) {
    assert.equal(dialect.isRetryable(status, ""), false, `${status}`);
  }
  // A proxy that rewrote an overload's status still says so in the body.
  assert.equal(
    dialect.isRetryable(418, '{"type":"error","error":{"type":"overloaded_error","message":"x"}}'),
    true,
  );
});

Deno.test("anthropic: a context overflow is recognised by its message", () => {
  const dialect = anthropicDialect();
  const overflow = (message: string, type = "invalid_request_error") =>
    JSON.stringify({ type: "error", error: { type, message } });
  assert.equal(
    dialect.isContextOverflow(400, overflow("prompt is too long: 210000 tokens > 200000 maximum")),
    true,
  );
  assert.equal(
    dialect.isContextOverflow(
      400,
      overflow("input length and `max_tokens` exceed context limit: 190000 + 20000 > 200000"),
    ),
    true,
  );
  assert.equal(dialect.isContextOverflow(400, overflow("messages: roles must alternate")), false);
  assert.equal(dialect.isContextOverflow(429, overflow("prompt is too long")), false);
  assert.equal(dialect.isContextOverflow(400, "Prompt is too long"), true);
});

Deno.test("anthropic: models are listed with the same headers and read from data[].id", () => {
  const dialect = anthropicDialect();
  const spec = dialect.modelsRequest!({ baseUrl: BASE, apiKey: "sk-ant" });
  assert.equal(spec.method, "GET");
  assert.equal(spec.url, "https://api.anthropic.com/v1/models?limit=1000");
  assert.equal(spec.headers["x-api-key"], "sk-ant");
  assert.equal(spec.headers["anthropic-version"], "2023-06-01");
  assert.equal("x-api-key" in dialect.modelsRequest!({ baseUrl: BASE, apiKey: "" }).headers, false);
  assert.deepEqual(
    dialect.parseModels!(
      '{"data":[{"type":"model","id":"claude-sonnet-4-5"},{"id":"claude-haiku-4-5"},{"id":""},{}],"has_more":false}',
    ),
    ["claude-haiku-4-5", "claude-sonnet-4-5"],
  );
  assert.throws(() => dialect.parseModels!('{"error":{}}'), /no data/);
});
