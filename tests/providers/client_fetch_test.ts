// ProviderClient with a `fetch` of its own: every request goes through it (never through the
// global one), under the client's deadline, cancellation and key redaction as before.

import assert from "node:assert/strict";
import type { StreamEvent } from "@amber/core";
import { ProviderClient, ProviderError } from "@amber/providers/client";
import { openaiDialect } from "../../providers/openai.ts";

const KEY = "sk-test-SECRET-0123456789";
// Nothing listens here: a request that reached the network instead of the injected fetch fails.
const BASE = "http://127.0.0.1:1/v1";
const REQUEST = {
  model: "gpt-test",
  messages: [{ role: "user" as const, content: "Hi" }],
  tools: [],
};

interface Recorded {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body: string | undefined;
  readonly signal: AbortSignal | undefined;
}

/** A fetch that records each request and answers it with `answer`. */
function recording(answer: (url: string) => Response): {
  readonly fetch: typeof globalThis.fetch;
  readonly requests: Recorded[];
} {
  const requests: Recorded[] = [];
  const fetch: typeof globalThis.fetch = (input, init) => {
    const url = String(input);
    requests.push({
      url,
      method: init?.method ?? "GET",
      headers: new Headers(init?.headers),
      body: typeof init?.body === "string" ? init.body : undefined,
      signal: init?.signal ?? undefined,
    });
    return Promise.resolve(answer(url));
  };
  return { fetch, requests };
}

/** A fetch that never answers: it rejects only when its signal aborts, with the reason. */
const hanging: typeof globalThis.fetch = (_input, init) =>
  new Promise((_resolve, reject) => {
    const signal = init?.signal;
    if (signal?.aborted) reject(signal.reason);
    signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
  });

function sse(frames: readonly string[]): Response {
  return new Response(frames.join(""), { headers: { "content-type": "text/event-stream" } });
}

/** Runs `body` with a global fetch that fails the test if anything calls it. */
async function withoutGlobalFetch(body: () => Promise<void>): Promise<void> {
  const original = globalThis.fetch;
  const calls: string[] = [];
  globalThis.fetch = (input) => {
    calls.push(String(input));
    return Promise.reject(new Error("the global fetch was called"));
  };
  try {
    await body();
  } finally {
    globalThis.fetch = original;
  }
  assert.deepEqual(calls, [], "the global fetch was never called");
}

Deno.test("client fetch: a stream and a listing go through the injected fetch, as sent", async () => {
  await withoutGlobalFetch(async () => {
    const wire = recording((url) =>
      url.endsWith("/models") ? Response.json({ data: [{ id: "b" }, { id: "a" }] }) : sse([
        'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n',
        'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n',
        "data: [DONE]\n\n",
      ])
    );
    const client = new ProviderClient(openaiDialect(), { baseUrl: BASE, apiKey: KEY }, {
      fetch: wire.fetch,
    });
    const events: StreamEvent[] = [];
    const outcome = await client.stream(REQUEST, (event) => events.push(event));
    assert.equal(outcome.status, 200);
    assert.equal(outcome.attempts, 1);
    assert.deepEqual(events.map((e) => e.type), ["text", "finish"]);
    assert.deepEqual(await client.models(), ["a", "b"]);

    const [chat, models] = wire.requests;
    assert.equal(wire.requests.length, 2);
    assert.equal(chat.url, `${BASE}/chat/completions`);
    assert.equal(chat.method, "POST");
    assert.equal(chat.headers.get("authorization"), `Bearer ${KEY}`);
    assert.equal(chat.headers.get("content-type"), "application/json");
    const body = JSON.parse(chat.body ?? "{}");
    assert.equal(body.model, "gpt-test");
    assert.equal(body.stream, true);
    assert.deepEqual(body.messages, [{ role: "user", content: "Hi" }]);
    assert.ok(chat.signal instanceof AbortSignal);
    assert.equal(models.url, `${BASE}/models`);
    assert.equal(models.method, "GET");
    assert.equal(models.body, undefined);
  });
});

Deno.test("client fetch: retries go through the injected fetch too", async () => {
  let calls = 0;
  const client = new ProviderClient(openaiDialect(), { baseUrl: BASE, apiKey: KEY }, {
    fetch: () => {
      calls++;
      return Promise.resolve(
        calls === 1
          ? Response.json({ error: { message: "busy" } }, { status: 503 })
          : sse(['data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n']),
      );
    },
    sleep: () => Promise.resolve(),
  });
  const events: StreamEvent[] = [];
  const outcome = await client.stream(REQUEST, (event) => events.push(event));
  assert.equal(calls, 2);
  assert.equal(outcome.attempts, 2);
  assert.deepEqual(events.at(-1), { type: "finish", reason: "stop", raw: "stop" });
});

Deno.test("client fetch: the deadline holds for an injected fetch, named in the message", async () => {
  const client = new ProviderClient(openaiDialect(), { baseUrl: BASE, apiKey: KEY }, {
    fetch: hanging,
    timeoutMs: 50,
    retry: { maxAttempts: 1 },
  });
  const events: StreamEvent[] = [];
  const outcome = await client.stream(REQUEST, (event) => events.push(event));
  assert.equal(outcome.status, 0);
  assert.equal(outcome.cancelled, false);
  assert.deepEqual(events, [
    {
      type: "error",
      message: `no response from ${BASE}/chat/completions within 50 ms`,
      retryable: true,
    },
    { type: "finish", reason: "error" },
  ]);

  await assert.rejects(client.models(), (error: unknown) => {
    assert.ok(error instanceof ProviderError);
    assert.equal(error.message, `listing models at ${BASE}/models timed out after 50 ms`);
    assert.equal(error.retryable, true);
    assert.equal(error.url, `${BASE}/models`);
    assert.equal((error.cause as Error).name, "FetchTimeoutError");
    return true;
  });
});

Deno.test("client fetch: a cancelled listing says so and is not retryable", async () => {
  const client = new ProviderClient(openaiDialect(), { baseUrl: BASE, apiKey: KEY }, {
    fetch: hanging,
  });
  const controller = new AbortController();
  const listing = client.models(controller.signal);
  controller.abort();
  await assert.rejects(listing, (error: unknown) => {
    assert.ok(error instanceof ProviderError);
    assert.equal(error.message, `listing models at ${BASE}/models was cancelled`);
    assert.equal(error.retryable, false);
    return true;
  });
  // Already aborted: the same, without waiting for anything.
  await assert.rejects(client.models(AbortSignal.abort()), /was cancelled/);
});

Deno.test("client fetch: a key echoed by an injected fetch's failure is redacted", async () => {
  const client = new ProviderClient(openaiDialect(), { baseUrl: BASE, apiKey: KEY }, {
    fetch: () => Promise.reject(new TypeError(`refused for key ${KEY}`)),
    retry: { maxAttempts: 1 },
  });
  await assert.rejects(client.models(), (error: unknown) => {
    assert.ok(error instanceof ProviderError);
    assert.ok(!error.message.includes(KEY), error.message);
    assert.ok(!String((error.cause as Error).message).includes(KEY));
    return true;
  });
  const events: StreamEvent[] = [];
  await client.stream(REQUEST, (event) => events.push(event));
  assert.ok(!JSON.stringify(events).includes(KEY));
  assert.equal(events[0].type, "error");
});
