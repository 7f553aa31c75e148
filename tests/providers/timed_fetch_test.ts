import assert from "node:assert/strict";
import { durationText, FetchTimeoutError, TimedFetch } from "../../providers/_timed_fetch.ts";

const URL_ = "http://127.0.0.1:1/v1/models";

/** A fetch that never answers: it settles only when its signal aborts, with the reason. */
function hanging(seen: { signal?: AbortSignal } = {}): typeof globalThis.fetch {
  return (_input, init) => {
    const signal = init?.signal ?? undefined;
    seen.signal = signal;
    return new Promise((_resolve, reject) => {
      if (signal?.aborted) reject(signal.reason);
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  };
}

Deno.test("timed fetch: the deadline rejects with an error naming the URL and the limit", async () => {
  using request = new TimedFetch(URL_, { timeoutMs: 30, fetch: hanging() });
  await assert.rejects(request.fetch(), (error: unknown) => {
    assert.ok(error instanceof FetchTimeoutError);
    assert.equal(error.name, "FetchTimeoutError");
    assert.equal(error.message, `the request to ${URL_} timed out after 30 ms`);
    assert.equal(error.url, URL_);
    assert.equal(error.timeoutMs, 30);
    return true;
  });
  assert.equal(request.timedOut, true);
});

Deno.test("timed fetch: the caller's abort rejects with its reason, not a timeout", async () => {
  const controller = new AbortController();
  const reason = new Error("the user pressed Esc");
  using request = new TimedFetch(URL_, {
    timeoutMs: 60_000,
    signal: controller.signal,
    fetch: hanging(),
  });
  const pending = request.fetch();
  controller.abort(reason);
  await assert.rejects(pending, (error) => error === reason);
  assert.equal(request.timedOut, false);
});

Deno.test("timed fetch: a signal aborted before the call aborts the request at once", async () => {
  const seen: { signal?: AbortSignal } = {};
  const reason = new Error("already gone");
  using request = new TimedFetch(URL_, {
    timeoutMs: 60_000,
    signal: AbortSignal.abort(reason),
    fetch: hanging(seen),
  });
  await assert.rejects(request.fetch(), (error) => error === reason);
  assert.equal(seen.signal?.aborted, true);
});

Deno.test("timed fetch: disposal clears the timer and lets go of the caller's signal", async () => {
  const controller = new AbortController();
  const seen: { signal?: AbortSignal } = {};
  const answer: typeof globalThis.fetch = (_input, init) => {
    seen.signal = init?.signal ?? undefined;
    return Promise.resolve(new Response("ok"));
  };
  let timedOut: () => boolean;
  {
    using request = new TimedFetch(URL_, {
      timeoutMs: 20,
      signal: controller.signal,
      fetch: answer,
    });
    timedOut = () => request.timedOut;
    assert.equal(await (await request.fetch()).text(), "ok");
  }
  // Past the deadline, and a caller aborting late: neither reaches a request that is over.
  await new Promise((resolve) => setTimeout(resolve, 40));
  controller.abort();
  assert.equal(timedOut(), false);
  assert.equal(seen.signal?.aborted, false);
});

Deno.test("timed fetch: a stopped clock never fires; abort still ends the request", async () => {
  const seen: { signal?: AbortSignal } = {};
  using request = new TimedFetch(URL_, {
    timeoutMs: 20,
    fetch: (_input, init) => {
      seen.signal = init?.signal ?? undefined;
      return Promise.resolve(new Response("ok"));
    },
  });
  await request.fetch();
  request.stopClock();
  await new Promise((resolve) => setTimeout(resolve, 40));
  assert.equal(request.timedOut, false);
  assert.equal(seen.signal?.aborted, false);
  request.abort();
  assert.equal(seen.signal?.aborted, true);
});

Deno.test("timed fetch: the deadline covers a body read before the clock stops", async () => {
  let stall: ReturnType<typeof setTimeout> | undefined;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("partial"));
        stall = setTimeout(() => controller.close(), 5_000);
      },
      cancel() {
        clearTimeout(stall);
      },
    });
    return new Response(body);
  });
  try {
    const url = `http://127.0.0.1:${server.addr.port}/slow`;
    using request = new TimedFetch(url, { timeoutMs: 100 });
    const response = await request.fetch();
    assert.equal(response.status, 200);
    await assert.rejects(response.text(), FetchTimeoutError);
    assert.equal(request.timedOut, true);
  } finally {
    clearTimeout(stall);
    await server.shutdown();
  }
});

Deno.test("timed fetch: a fetch that throws synchronously rejects like any failure", async () => {
  const bug = new TypeError("bad header");
  using request = new TimedFetch(URL_, {
    timeoutMs: 1_000,
    fetch: () => {
      throw bug;
    },
  });
  await assert.rejects(request.fetch(), (error) => error === bug);
});

Deno.test("timed fetch: the global fetch is looked up at each call", async () => {
  const original = globalThis.fetch;
  const asked: string[] = [];
  using request = new TimedFetch(URL_, { timeoutMs: 1_000 });
  globalThis.fetch = (input) => {
    asked.push(String(input));
    return Promise.resolve(new Response("from the stub"));
  };
  try {
    assert.equal(await (await request.fetch({ method: "GET" })).text(), "from the stub");
  } finally {
    globalThis.fetch = original;
  }
  assert.deepEqual(asked, [URL_]);
});

Deno.test("timed fetch: limits read as people write them", () => {
  assert.equal(durationText(50), "50 ms");
  assert.equal(durationText(1_000), "1 s");
  assert.equal(durationText(1_500), "1.5 s");
  assert.equal(durationText(60_000), "60 s");
});
