// What every wire must survive, end to end (ProviderClient against the fake provider): no key, a
// dropped connection, a malformed chunk, an error in the middle of the stream, a slow first byte,
// and the models listing. One suite, run for each of the four protocols; a protocol's own cases stay
// in its <wire>_e2e_test.ts. Where the protocols differ (how many frames come before the text,
// the provider's error wording, where the listing lives), the table below says so.

import assert from "node:assert/strict";
import type { ChatRequest } from "@amber/core";
import { anthropicDialect } from "../../providers/anthropic.ts";
import { geminiDialect } from "../../providers/gemini.ts";
import { openaiDialect } from "../../providers/openai.ts";
import { openaiResponsesDialect } from "../../providers/openai_responses.ts";
import { anthropicEncoder } from "../../providers/testing/anthropic.ts";
import { geminiEncoder } from "../../providers/testing/gemini.ts";
import { openaiEncoder } from "../../providers/testing/openai.ts";
import { openaiResponsesEncoder } from "../../providers/testing/openai_responses.ts";
import { assertFinish, errorOf, startHarness, text, type Wire } from "./_e2e.ts";

interface Fault {
  readonly text: string;
  readonly chunkSize: number;
  readonly afterEvents: number;
  readonly kept: string;
}

interface WireCase {
  readonly name: string;
  readonly wire: Wire;
  readonly apiKey: string;
  // Each fault comes after `afterEvents` frames: the wire's own frames before the text, then
  // deltas of `chunkSize` characters; `kept` is the text that got through.
  readonly drop: Fault;
  readonly malformed: Fault;
  readonly streamError: Fault & {
    readonly message: string;
    readonly expected: string | RegExp;
    readonly status?: number;
  };
  readonly models: {
    readonly served: readonly string[];
    readonly listed: readonly string[];
    readonly path: string;
    /** The header the key goes in, on the listing and on every chat request. */
    readonly keyHeader: string;
    readonly keyValue: string;
  };
}

const CUT = "This answer will be cut off halfway through.";
const chat = (model: string) => (): ChatRequest => ({
  model,
  messages: [{ role: "user", content: "Hi" }],
  tools: [],
});

const WIRES: readonly WireCase[] = [
  {
    name: "openai",
    wire: {
      dialect: openaiDialect,
      encoder: openaiEncoder,
      basePath: "/v1",
      request: chat("gpt-4.1"),
    },
    apiKey: "sk-fake",
    drop: { text: CUT, chunkSize: 4, afterEvents: 4, kept: "This answer " },
    malformed: { text: "abcdefgh", chunkSize: 2, afterEvents: 2, kept: "ab" },
    streamError: {
      text: "abcdefgh",
      chunkSize: 2,
      afterEvents: 3,
      kept: "abcd",
      message: "The server had an error while processing your request.",
      expected: /The server had an error while processing your request\./,
    },
    models: {
      served: ["zeta-1", "alpha-2", "mid-3"],
      listed: ["alpha-2", "mid-3", "zeta-1"],
      path: "/v1/models",
      keyHeader: "authorization",
      keyValue: "Bearer sk-fake",
    },
  },
  {
    name: "openai_responses",
    wire: {
      dialect: openaiResponsesDialect,
      encoder: openaiResponsesEncoder,
      basePath: "/v1",
      request: chat("gpt-5"),
    },
    apiKey: "sk-fake",
    // created, in_progress, item, part, then two deltas.
    drop: { text: "abcdefghijkl", chunkSize: 2, afterEvents: 6, kept: "abcd" },
    malformed: { text: "abcdefghijkl", chunkSize: 2, afterEvents: 6, kept: "abcd" },
    streamError: {
      text: "abcdefghijkl",
      chunkSize: 2,
      afterEvents: 6,
      kept: "abcd",
      message: "An error occurred while processing.",
      expected: "server_error: An error occurred while processing.",
    },
    models: {
      served: ["gpt-5", "gpt-4.1", "o3"],
      listed: ["gpt-4.1", "gpt-5", "o3"],
      path: "/v1/models",
      keyHeader: "authorization",
      keyValue: "Bearer sk-fake",
    },
  },
  {
    name: "anthropic",
    wire: {
      dialect: anthropicDialect,
      encoder: anthropicEncoder,
      request: chat("claude-sonnet-4-5"),
    },
    apiKey: "sk-ant-fake",
    // message_start, block start, ping, then two deltas.
    drop: { text: CUT, chunkSize: 4, afterEvents: 5, kept: "This ans" },
    malformed: { text: "abcdefgh", chunkSize: 2, afterEvents: 4, kept: "ab" },
    streamError: {
      text: "abcdefgh",
      chunkSize: 2,
      afterEvents: 5,
      kept: "abcd",
      message: "Overloaded, try again soon",
      expected: "overloaded_error: Overloaded, try again soon",
    },
    models: {
      served: ["claude-sonnet-4-5", "claude-haiku-4-5"],
      listed: ["claude-haiku-4-5", "claude-sonnet-4-5"],
      path: "/v1/models?limit=1000",
      keyHeader: "x-api-key",
      keyValue: "sk-ant-fake",
    },
  },
  {
    name: "gemini",
    wire: { dialect: geminiDialect, encoder: geminiEncoder, request: chat("gemini-2.5-flash") },
    apiKey: "AIza-fake",
    drop: { text: CUT, chunkSize: 4, afterEvents: 3, kept: "This answer " },
    malformed: { text: "abcdefgh", chunkSize: 2, afterEvents: 1, kept: "ab" },
    // Gemini sends a mid-stream error as a raw JSON line, not as an SSE event.
    streamError: {
      text: "abcdefgh",
      chunkSize: 2,
      afterEvents: 2,
      kept: "abcd",
      message: "Internal error encountered.",
      expected: "INTERNAL: Internal error encountered.",
      status: 500,
    },
    models: {
      served: ["gemini-2.5-pro", "gemini-2.5-flash"],
      listed: ["gemini-2.5-flash", "gemini-2.5-pro"],
      path: "/v1beta/models?pageSize=1000",
      keyHeader: "x-goog-api-key",
      keyValue: "AIza-fake",
    },
  },
];

for (const c of WIRES) {
  const harness = (key: { apiKey?: string } = { apiKey: c.apiKey }) => startHarness(c.wire, key);

  Deno.test(`${c.name} e2e: no key, or an empty one, reaches the server as no header`, async () => {
    for (const key of [{}, { apiKey: "" }]) {
      await using h = await harness(key);
      h.server.script({ text: "ok" });
      assertFinish((await h.run()).events, "stop");
      assert.equal(c.models.keyHeader in h.server.chats[0].headers, false);
    }
  });

  Deno.test(`${c.name} e2e: a dropped connection is one error and one finish`, async () => {
    await using h = await harness();
    const { text: answer, chunkSize, afterEvents } = c.drop;
    h.server.script({ text: answer, chunkSize, fault: { kind: "drop", afterEvents } });
    const { events } = await h.run();
    assert.equal(text(events), c.drop.kept);
    assert.equal(errorOf(events).retryable, true);
    assertFinish(events, "error");
  });

  Deno.test(`${c.name} e2e: a malformed chunk is reported as such`, async () => {
    await using h = await harness();
    const { text: answer, chunkSize, afterEvents } = c.malformed;
    h.server.script({ text: answer, chunkSize, fault: { kind: "malformed", afterEvents } });
    const { events } = await h.run();
    assert.equal(text(events), c.malformed.kept);
    assert.match(errorOf(events).message, /^malformed chunk from the provider/);
    assertFinish(events, "error");
  });

  Deno.test(`${c.name} e2e: an in-stream error carries the provider's message`, async () => {
    await using h = await harness();
    const { text: answer, chunkSize, afterEvents, message } = c.streamError;
    h.server.script({
      text: answer,
      chunkSize,
      fault: { kind: "streamError", afterEvents, message },
    });
    const { events } = await h.run();
    assert.equal(text(events), c.streamError.kept);
    const error = errorOf(events);
    if (typeof c.streamError.expected === "string") {
      assert.equal(error.message, c.streamError.expected);
    } else {
      assert.match(error.message, c.streamError.expected);
    }
    assert.equal(error.retryable, true);
    if (c.streamError.status !== undefined) assert.equal(error.status, c.streamError.status);
    assertFinish(events, "error");
  });

  Deno.test(`${c.name} e2e: a slow first byte is waited for`, async () => {
    await using h = await harness();
    h.server.script({ text: "eventually", fault: { kind: "slowFirstByte", delayMs: 150 } });
    const started = performance.now();
    const { events } = await h.run();
    assert.ok(performance.now() - started >= 140);
    assert.equal(text(events), "eventually");
    assertFinish(events, "stop");
  });

  Deno.test(`${c.name} e2e: models() lists the server's models, sorted`, async () => {
    await using h = await harness();
    h.server.models = [...c.models.served];
    assert.deepEqual(await h.client.models(), c.models.listed);
    const listing = h.server.requests.at(-1)!;
    assert.equal(listing.method, "GET");
    assert.equal(listing.path, c.models.path);
    assert.equal(listing.headers[c.models.keyHeader], c.models.keyValue);
    assert.equal(listing.flavor, c.wire.encoder.flavor);
  });
}
