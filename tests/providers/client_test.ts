import assert from "node:assert/strict";
import type { StreamEvent } from "@amber/core";
import { ProviderClient, ProviderError } from "@amber/providers/client";
import {
  closedPort,
  finishes,
  harness,
  HI,
  json,
  KEY,
  rawServer,
  REQUEST,
  serve,
  sse,
  testDialect,
} from "./_client_harness.ts";

Deno.test("a 2xx stream is decoded into the sink, with one finish", async () => {
  await using s = serve(() => sse(HI));
  const h = harness(s.url);
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.deepEqual(h.events, [
    { type: "text", delta: "hi" },
    { type: "text", delta: " there" },
    { type: "finish", reason: "stop" },
  ]);
  assert.equal(outcome.status, 200);
  assert.equal(outcome.attempts, 1);
  assert.equal(outcome.cancelled, false);
  assert.equal(outcome.url, `${s.url}/v1/chat/completions`);
  assert.equal(outcome.headers.get("content-type"), "text/event-stream");
  assert.equal(s.requests.length, 1);
  assert.equal(s.requests[0].method, "POST");
  assert.equal(s.requests[0].path, "/v1/chat/completions");
  assert.equal(s.requests[0].headers.get("authorization"), `Bearer ${KEY}`);
  assert.deepEqual(JSON.parse(s.requests[0].body), { model: "m", stream: true });
  assert.deepEqual(h.delays, []);
});

Deno.test("an unframed line mid-stream reaches the decoder", async () => {
  await using s = serve(() => sse(['data: {"t":"a"}\n\n', '{"error":{"code":500}}\n']));
  const h = harness(s.url);
  await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.deepEqual(h.events, [
    { type: "text", delta: "a" },
    { type: "error", message: 'unframed: {"error":{"code":500}}', retryable: false },
    { type: "finish", reason: "stop" },
  ]);
});

Deno.test("a 429 with retry-after-ms waits as asked, then the retry succeeds", async () => {
  await using s = serve((_r, i) =>
    i === 0 ? json(429, { error: "slow down" }, { "retry-after-ms": "1234" }) : sse(HI)
  );
  const h = harness(s.url);
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.deepEqual(h.delays, [1234]);
  assert.equal(h.retries.length, 1);
  assert.equal(h.retries[0].attempt, 1);
  assert.equal(h.retries[0].status, 429);
  assert.equal(h.retries[0].delayMs, 1234);
  assert.match(h.retries[0].message, /slow down/);
  assert.equal(outcome.attempts, 2);
  assert.equal(outcome.status, 200);
  assert.deepEqual(h.events.map((e) => e.type), ["text", "text", "finish"]);
});

Deno.test("retry-after in seconds and as an HTTP date", async () => {
  const date = new Date(Date.now() + 10_000).toUTCString();
  await using s = serve((_r, i) =>
    i === 0
      ? json(503, {}, { "retry-after": "2" })
      : i === 1
      ? json(503, {}, { "retry-after": date })
      : sse(HI)
  );
  const h = harness(s.url);
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.equal(outcome.attempts, 3);
  assert.equal(h.delays[0], 2_000);
  // The date has a whole-second resolution: somewhere in the 10 s before it.
  assert.ok(h.delays[1] > 8_000 && h.delays[1] <= 10_000, String(h.delays[1]));
  assert.equal(finishes(h.events), 1);
});

Deno.test("without headers, the dialect's body delay is used", async () => {
  await using s = serve((_r, i) =>
    i === 0 ? json(429, { error: { details: [{ retryDelay: "3s" }] } }) : sse(HI)
  );
  const h = harness(s.url);
  await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.deepEqual(h.delays, [3_000]);
});

Deno.test("a server asking for a longer wait than the cap gets the error reported at once", async () => {
  await using s = serve(() => json(429, { error: "quota" }, { "retry-after": "120" }));
  const h = harness(s.url);
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.equal(outcome.attempts, 1);
  assert.deepEqual(h.delays, []);
  assert.deepEqual(h.events, [
    {
      type: "error",
      message: 'test API error 429: {"error":"quota"}',
      retryable: true,
      status: 429,
      retryAfterMs: 120_000,
    },
    { type: "finish", reason: "error" },
  ]);
});

Deno.test("5xx retries back off exponentially up to the cap, with full jitter", async () => {
  await using s = serve((_r, i) => (i < 4 ? json(500, { error: "boom" }) : sse(HI)));
  const h = harness(s.url, { retry: { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 1_500 } });
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.equal(outcome.attempts, 5);
  // random() = 0.999: just under each step's ceiling 500, 1000, 1500 (capped), 1500.
  assert.deepEqual(h.delays, [499, 999, 1_498, 1_498]);
  assert.deepEqual(h.events.map((e) => e.type), ["text", "text", "finish"]);

  // Full jitter: a random() of 0 waits not at all.
  await using t = serve((_r, i) => (i < 2 ? json(500, {}) : sse(HI)));
  const zero = harness(t.url, { random: () => 0 });
  await zero.client.stream(REQUEST, () => {});
  assert.deepEqual(zero.delays, [0, 0]);
});

Deno.test("a non-retryable 400 gives one error then finish, and no retry", async () => {
  await using s = serve(() => json(400, { error: "bad request" }));
  const h = harness(s.url);
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.equal(outcome.attempts, 1);
  assert.equal(outcome.status, 400);
  assert.equal(outcome.cancelled, false);
  assert.equal(s.requests.length, 1);
  assert.deepEqual(h.retries, []);
  assert.deepEqual(h.events, [
    {
      type: "error",
      message: 'test API error 400: {"error":"bad request"}',
      retryable: false,
      status: 400,
    },
    { type: "finish", reason: "error" },
  ]);
});

Deno.test("attempts exhausted: the dialect's message for the last failure", async () => {
  await using s = serve((_r, i) => json(503, { error: `overloaded ${i}` }));
  const h = harness(s.url);
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.equal(outcome.attempts, 4);
  assert.equal(s.requests.length, 4);
  assert.equal(h.delays.length, 3);
  assert.deepEqual(h.events, [
    {
      type: "error",
      message: 'test API error 503: {"error":"overloaded 3"}',
      retryable: true,
      status: 503,
    },
    { type: "finish", reason: "error" },
  ]);
});

Deno.test("x-should-retry overrides the dialect both ways", async () => {
  await using s = serve(() => json(503, { error: "no" }, { "x-should-retry": "false" }));
  const h = harness(s.url);
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.equal(outcome.attempts, 1);
  assert.deepEqual(h.events[0], {
    type: "error",
    message: 'test API error 503: {"error":"no"}',
    retryable: false,
    status: 503,
  });

  await using t = serve((_r, i) =>
    i === 0 ? json(409, { error: "lock" }, { "x-should-retry": "true" }) : sse(HI)
  );
  const again = harness(t.url);
  assert.equal((await again.client.stream(REQUEST, (e) => again.events.push(e))).attempts, 2);
  assert.deepEqual(again.events.map((e) => e.type), ["text", "text", "finish"]);
});

Deno.test("connection refused is retried, then reported naming the URL", async () => {
  const base = `http://127.0.0.1:${closedPort()}`;
  const h = harness(base, { retry: { maxAttempts: 2 } });
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.equal(outcome.attempts, 2);
  assert.equal(outcome.status, 0);
  assert.equal(h.delays.length, 1);
  assert.equal(h.retries[0].status, undefined);
  assert.deepEqual(h.events, [
    {
      type: "error",
      message: `cannot reach ${base}/v1/chat/completions: connection refused`,
      retryable: true,
    },
    { type: "finish", reason: "error" },
  ]);
});

Deno.test("no response headers within the timeout is a retryable failure", async () => {
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  await using s = serve(async () => {
    await released;
    return json(200, {});
  });
  try {
    const h = harness(s.url, { timeoutMs: 50, retry: { maxAttempts: 1 } });
    const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
    assert.equal(outcome.status, 0);
    assert.deepEqual(h.events, [
      {
        type: "error",
        message: `no response from ${s.url}/v1/chat/completions within 50 ms`,
        retryable: true,
      },
      { type: "finish", reason: "error" },
    ]);
  } finally {
    release();
  }
});

Deno.test("a connection dropped mid-stream: an error naming the URL, then exactly one finish", async () => {
  await using s = rawServer(() => ['data: {"t":"partial"}\n\n', 'data: {"t":"cut'], () => true);
  const h = harness(s.url);
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.equal(outcome.attempts, 1, "no retry once the body has started");
  assert.equal(s.served(), 1);
  assert.equal(h.events.length, 3);
  assert.deepEqual(h.events[0], { type: "text", delta: "partial" });
  const error = h.events[1];
  assert.equal(error.type, "error");
  assert.ok(error.type === "error" && error.retryable);
  assert.ok(error.type === "error" && error.message.includes(`${s.url}/v1/chat/completions`));
  assert.match((error as { message: string }).message, /dropped mid-stream/);
  assert.deepEqual(h.events[2], { type: "finish", reason: "error" });
});

Deno.test("a 2xx body that breaks before its first byte is retried", async () => {
  await using s = rawServer((i) => (i === 0 ? [] : HI), (i) => i === 0);
  const h = harness(s.url);
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.equal(outcome.attempts, 2);
  assert.equal(s.served(), 2);
  assert.match(
    h.retries[0].message,
    /^the connection to http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions dropped/,
  );
  assert.deepEqual(h.events.map((e) => e.type), ["text", "text", "finish"]);
});

Deno.test("a stream that goes quiet past the idle timeout is reported as dropped", async () => {
  await using s = serve(() => sse(['data: {"t":"hi"}\n\n'], "stall"));
  const h = harness(s.url, { idleTimeoutMs: 50 });
  const outcome = await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.equal(outcome.attempts, 1);
  assert.equal(outcome.cancelled, false);
  assert.deepEqual(h.events, [
    { type: "text", delta: "hi" },
    {
      type: "error",
      message:
        `no data from ${s.url}/v1/chat/completions for 50 ms; the connection dropped mid-stream`,
      retryable: true,
    },
    { type: "finish", reason: "error" },
  ]);
});

Deno.test("an abort mid-stream stops at once: cancelled, nothing more reaches the sink", async () => {
  await using s = serve(() => sse(['data: {"t":"one"}\n\ndata: {"t":"two"}\n\n'], "stall"));
  const controller = new AbortController();
  const h = harness(s.url);
  const outcome = await h.client.stream(REQUEST, (e) => {
    h.events.push(e);
    controller.abort(); // from inside the sink: the next event of the same chunk is dropped
  }, controller.signal);
  assert.equal(outcome.cancelled, true);
  assert.deepEqual(h.events, [{ type: "text", delta: "one" }]);

  // An abort while the client waits for the next chunk.
  const later = new AbortController();
  const events: StreamEvent[] = [];
  const pending = h.client.stream(REQUEST, (e) => {
    events.push(e);
    setTimeout(() => later.abort(), 10);
  }, later.signal);
  const second = await pending;
  assert.equal(second.cancelled, true);
  assert.deepEqual(events, [{ type: "text", delta: "one" }, { type: "text", delta: "two" }]);
});

Deno.test("an abort during a retry wait stops at once, with nothing sent to the sink", async () => {
  await using s = serve(() => json(429, {}, { "retry-after-ms": "30000" }));
  const controller = new AbortController();
  // The real sleep: the abort must cut a 30 s wait short.
  const client = new ProviderClient(testDialect(), { baseUrl: s.url, apiKey: KEY }, {
    onRetry: () => setTimeout(() => controller.abort(), 10),
  });
  const events: StreamEvent[] = [];
  const outcome = await client.stream(REQUEST, (e) => events.push(e), controller.signal);
  assert.equal(outcome.cancelled, true);
  assert.equal(outcome.attempts, 1);
  assert.equal(s.requests.length, 1);
  assert.equal(events.length, 0);

  // An already-aborted signal sends nothing at all.
  const outcome2 = await client.stream(REQUEST, (e) => events.push(e), AbortSignal.abort());
  assert.deepEqual(
    { cancelled: outcome2.cancelled, attempts: outcome2.attempts, requests: s.requests.length },
    { cancelled: true, attempts: 0, requests: 1 },
  );
  assert.deepEqual(events, []);
});

Deno.test("an API key echoed back is redacted from every event, retry note and error", async () => {
  const echo = `Incorrect API key provided: ${KEY}.`;
  await using s = serve((_r, i) =>
    i === 0
      ? json(429, { error: echo }, { "retry-after-ms": "1" })
      : i === 1
      ? json(401, { error: echo })
      : i === 2
      ? sse([`data: ${JSON.stringify({ error: echo })}\n\n`])
      : json(403, { error: echo })
  );
  const h = harness(s.url);
  await h.client.stream(REQUEST, (e) => h.events.push(e));
  await h.client.stream(REQUEST, (e) => h.events.push(e));
  await assert.rejects(h.client.models(), (error: ProviderError) => {
    assert.ok(!error.message.includes(KEY), error.message);
    assert.match(error.message, /\[redacted\]/);
    return true;
  });
  const texts = JSON.stringify([h.events, h.retries]);
  assert.ok(!texts.includes(KEY), texts);
  assert.equal(h.retries.length, 1);
  assert.match(h.retries[0].message, /Incorrect API key provided: \[redacted\]/);
  assert.deepEqual(h.events.filter((e) => e.type === "error").length, 2);
  for (const e of h.events) {
    if (e.type === "error") assert.match(e.message, /\[redacted\]/);
  }

  // A key carried in the URL (some APIs take ?key=) is scrubbed from the URL and the message.
  const inUrl = testDialect({
    chatRequest: (settings) => ({
      url: `${settings.baseUrl}/v1/stream?key=${settings.apiKey}`,
      method: "POST",
      headers: {},
      body: "{}",
    }),
  });
  const refused = harness(
    `http://127.0.0.1:${closedPort()}`,
    { retry: { maxAttempts: 1 } },
    {},
    inUrl,
  );
  const outcome = await refused.client.stream(REQUEST, (e) => refused.events.push(e));
  assert.ok(!outcome.url.includes(KEY));
  assert.ok(!JSON.stringify(refused.events).includes(KEY), JSON.stringify(refused.events));
});

Deno.test("an empty credential header is never sent", async () => {
  await using s = serve(() => sse(HI));
  for (const apiKey of [undefined, "", "  "]) {
    const h = harness(s.url, {}, { apiKey });
    await h.client.stream(REQUEST, () => {});
    await h.client.models().catch(() => {});
  }
  assert.equal(s.requests.length, 6);
  for (const request of s.requests) {
    assert.equal(request.headers.get("authorization"), null);
    assert.equal(request.headers.get("x-api-key"), null);
  }
  assert.equal(s.requests[0].headers.get("content-type"), "application/json");
});

Deno.test("a decoder that fails on what the server sent is reported, once", async () => {
  await using s = serve(() => sse(['data: {"t":"ok"}\n\n', "data: {not json\n\n", HI[0]]));
  const h = harness(s.url);
  await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.deepEqual(h.events.map((e) => e.type), ["text", "error", "finish"]);
  assert.match((h.events[1] as { message: string }).message, /could not be decoded/);
  assert.deepEqual(h.events[2], { type: "finish", reason: "error" });
});

Deno.test("a decoder that never finishes still yields one finish", async () => {
  const silent = testDialect({ decoder: () => ({ event() {}, end() {} }) });
  await using s = serve(() => sse(HI));
  const h = harness(s.url, {}, {}, silent);
  await h.client.stream(REQUEST, (e) => h.events.push(e));
  assert.deepEqual(h.events, [{ type: "finish", reason: "other" }]);
});

Deno.test("a sink that throws surfaces its own error", async () => {
  await using s = serve(() => sse(HI, "stall"));
  const h = harness(s.url);
  const bug = new RangeError("consumer bug");
  await assert.rejects(
    h.client.stream(REQUEST, () => {
      throw bug;
    }),
    (error) => error === bug,
  );
});

Deno.test("models() lists the ids", async () => {
  await using s = serve(() => json(200, { data: [{ id: "a" }, { id: "b" }] }));
  const h = harness(s.url);
  assert.deepEqual(await h.client.models(), ["a", "b"]);
  assert.equal(s.requests[0].method, "GET");
  assert.equal(s.requests[0].path, "/v1/models");
  assert.equal(s.requests[0].headers.get("authorization"), `Bearer ${KEY}`);
});

Deno.test("models() failures throw a ProviderError naming the URL", async () => {
  await using s = serve((_r, i) => (i === 0 ? json(500, { error: "down" }) : new Response("nope")));
  const h = harness(s.url);
  await assert.rejects(h.client.models(), (error: unknown) => {
    assert.ok(error instanceof ProviderError);
    assert.equal(error.name, "ProviderError");
    assert.equal(error.status, 500);
    assert.equal(error.retryable, true);
    assert.equal(error.url, `${s.url}/v1/models`);
    assert.equal(
      error.message,
      `listing models at ${s.url}/v1/models failed: test API error 500: {"error":"down"}`,
    );
    return true;
  });
  await assert.rejects(h.client.models(), (error: ProviderError) => {
    assert.match(
      error.message,
      new RegExp(`^the models listing from ${s.url}/v1/models could not be read`),
    );
    assert.ok(error.cause instanceof SyntaxError);
    return true;
  });

  const base = `http://127.0.0.1:${closedPort()}`;
  await assert.rejects(harness(base).client.models(), (error: ProviderError) => {
    assert.equal(error.message, `cannot reach ${base}/v1/models: connection refused`);
    assert.equal(error.retryable, true);
    assert.equal(error.status, undefined);
    return true;
  });

  const bare = testDialect({ modelsRequest: undefined, parseModels: undefined });
  await assert.rejects(harness(base, {}, {}, bare).client.models(), (error: ProviderError) => {
    assert.equal(error.message, "the test protocol cannot list models");
    assert.equal(error.retryable, false);
    return true;
  });
});
