// Gemini's streams as its documentation describes them (tests/providers/fixtures/gemini): function
// arguments streamed in pieces (`partialArgs`), and the thought signatures a response carries,
// which must go back on the next request where they came from.

import assert from "node:assert/strict";
import type { Message, StreamEvent, ToolCall } from "@amber/core";
import { ProviderClient } from "../../providers/client.ts";
import { geminiDialect } from "../../providers/gemini.ts";
import { assertFinish, decodeWith, ends, text } from "./_e2e.ts";

const BASE = "https://generativelanguage.googleapis.com";
const SKIP = "skip_thought_signature_validator";

function fixture(name: string): string {
  return Deno.readTextFileSync(new URL(`./fixtures/gemini/${name}.sse`, import.meta.url));
}

/** The fixture decoded whole, and again fed in pieces of every size from 1 to 40 characters. */
function decodeFixture(name: string): StreamEvent[] {
  const stream = fixture(name);
  const whole = decodeWith(geminiDialect(), [stream]);
  const strip = (events: StreamEvent[]) =>
    events.map((e) =>
      e.type === "toolCallStart" || e.type === "toolCallEnd" ? { ...e, id: "" } : e
    );
  for (let size = 1; size <= 40; size++) {
    const pieces: string[] = [];
    for (let at = 0; at < stream.length; at += size) pieces.push(stream.slice(at, at + size));
    assert.deepEqual(strip(decodeWith(geminiDialect(), pieces)), strip(whole), `pieces of ${size}`);
  }
  return whole;
}

/** The assistant message a response makes, as the kernel builds it (calls keep signatures). */
type Assistant = Extract<Message, { role: "assistant" }>;

function messageOf(events: readonly StreamEvent[]): Assistant {
  const calls: ToolCall[] = ends(events).map((e) =>
    e.signature === undefined
      ? { id: e.id, name: e.name, arguments: e.arguments }
      : { id: e.id, name: e.name, arguments: e.arguments, signature: e.signature }
  );
  const signed = events.find((e) => e.type === "textSignature");
  return {
    role: "assistant",
    content: text(events),
    ...(signed?.type === "textSignature" ? { textSignature: signed.signature } : {}),
    ...(calls.length > 0 ? { toolCalls: calls } : {}),
  };
}

type Json = Record<string, unknown>;

/** The `model` contents of the request that follows `messages`. */
function modelParts(messages: readonly Message[]): Json[] {
  const spec = geminiDialect().chatRequest({ baseUrl: BASE }, {
    model: "gemini-3-pro-preview",
    messages,
    tools: [],
  });
  const body = JSON.parse(spec.body!) as { contents: { role: string; parts: Json[] }[] };
  return body.contents.filter((c) => c.role === "model").flatMap((c) => c.parts);
}

// ---------------------------------------------------------------------------------------------
// Streamed arguments

Deno.test("gemini: streamed arguments: a string in pieces is joined, one call ends whole", () => {
  const events = decodeFixture("streamed_args_split_string");
  const calls = events.filter((e) => e.type.startsWith("toolCall"));
  assert.deepEqual(calls.map((e) => e.type), ["toolCallStart", "toolCallDelta", "toolCallEnd"]);
  const [call] = ends(events);
  assert.equal(call.name, "write_file");
  assert.deepEqual(JSON.parse(call.arguments), {
    path: "notes/todo.md",
    content: '- buy milk\n- call "Bo" é😀',
  });
  // The one delta is the whole arguments, as for a call that came whole.
  assert.deepEqual(calls[1], { type: "toolCallDelta", index: 0, delta: call.arguments });
  assert.equal(call.signature, "Cs0BAY89a1+wrXk3sig/write==");
  assert.deepEqual(events.find((e) => e.type === "usage"), {
    type: "usage",
    promptTokens: 210,
    completionTokens: 59,
    cachedTokens: 128,
    reasoningTokens: 37,
  });
  assertFinish(events, "tool_calls");
});

Deno.test("gemini: streamed arguments: nested paths, array items, numbers, booleans, null", () => {
  const [call] = ends(decodeFixture("streamed_args_nested"));
  assert.equal(call.name, "search");
  assert.equal(
    call.arguments,
    JSON.stringify({
      query: "TODO",
      options: { depth: 3, follow_links: false, "max size": 1.5 },
      roots: ["src", "tests"],
      filter: null,
      ranges: [{ start: 10, end: -2 }],
    }),
  );
});

Deno.test("gemini: streamed arguments: a whole call and a streamed one in one turn", () => {
  const events = decodeFixture("streamed_args_mixed");
  assert.equal(text(events), "Checking both.");
  const calls = ends(events);
  assert.deepEqual(calls.map((c) => [c.index, c.name, c.arguments, c.signature]), [
    [0, "list_screens", '{"all":true}', "CiQBsig/first=="],
    // The call the issue reports: amber sent `read_screen {}` before.
    [1, "read_screen", '{"id":"A"}', undefined],
  ]);
  assert.ok(!("signature" in calls[1]));
  assert.notEqual(calls[0].id, calls[1].id);
  assertFinish(events, "tool_calls");
});

Deno.test("gemini: streamed arguments: odd pieces are dropped, never put elsewhere", () => {
  const frame = (parts: unknown[], finishReason?: string) =>
    `data: ${
      JSON.stringify({
        candidates: [{
          content: { role: "model", parts },
          ...(finishReason ? { finishReason } : {}),
        }],
      })
    }\r\n\r\n`;
  const pieces = (partialArgs: unknown) => ({
    functionCall: { partialArgs, willContinue: true },
  });
  const events = decodeWith(geminiDialect(), [
    frame([{ functionCall: { name: "f", willContinue: true } }]),
    // What is not a list of pieces, and what in a list is not a piece.
    frame([pieces({ jsonPath: "$.o", numberValue: 1 })]),
    frame([pieces([
      null,
      5,
      { jsonPath: "$.a", stringValue: "x" },
      // Not a path this reader knows, no value, a path through a string, a bad index.
      { jsonPath: "a.b", stringValue: "no" },
      { jsonPath: "$.b" },
      { jsonPath: "$.a.c", numberValue: 1 },
      { jsonPath: "$.list[-1]", numberValue: 1 },
      // An index past the array's end: one short line must not become millions of nulls.
      { jsonPath: "$.list[0]", numberValue: 0 },
      { jsonPath: "$.list[90000000]", numberValue: 1 },
      { jsonPath: "$.deep[5].x", numberValue: 1 },
      { jsonPath: "$.__proto__.polluted", boolValue: true },
      // A second value for a path whose last piece did not say it would go on replaces it.
      { jsonPath: "$.a", stringValue: "y" },
    ])]),
    // Pieces of a call that never opened are not anyone's arguments; the finish closes `f`.
    frame([{ functionCall: {} }, pieces([{ jsonPath: "$.z", numberValue: 2 }])], "STOP"),
  ]);
  assert.deepEqual(ends(events).map((c) => [c.name, c.arguments]), [
    ["f", '{"a":"y","list":[0],"__proto__":{"polluted":true}}'],
  ]);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

Deno.test("gemini: a call still streaming when the response finishes ends with what came", () => {
  const frame = (parts: unknown[], finishReason?: string) =>
    `data: ${
      JSON.stringify({
        candidates: [{
          content: { role: "model", parts },
          ...(finishReason ? { finishReason } : {}),
        }],
      })
    }\r\n\r\n`;
  const events = decodeWith(geminiDialect(), [
    frame([{ functionCall: { name: "f", willContinue: true } }]),
    frame([{
      functionCall: {
        partialArgs: [{ jsonPath: "$.s", stringValue: "ab", willContinue: true }],
        willContinue: true,
      },
    }], "MAX_TOKENS"),
  ]);
  assert.deepEqual(ends(events).map((c) => c.arguments), ['{"s":"ab"}']);
  assertFinish(events, "length");
});

// ---------------------------------------------------------------------------------------------
// Thought signatures, back where they came from

Deno.test("gemini: a call's signature goes back on that call; unsigned parallel calls stay so", () => {
  const events = decodeFixture("streamed_args_mixed");
  const parts = modelParts([{ role: "user", content: "Look" }, messageOf(events)]);
  assert.deepEqual(parts, [
    { text: "Checking both." },
    {
      functionCall: { name: "list_screens", args: { all: true } },
      thoughtSignature: "CiQBsig/first==",
    },
    { functionCall: { name: "read_screen", args: { id: "A" } } },
  ]);
});

Deno.test("gemini: each step's calls go back with their own signatures", () => {
  const first = messageOf(decodeFixture("streamed_args_split_string"));
  const second = messageOf(decodeFixture("streamed_args_nested"));
  const [a] = first.toolCalls!;
  const [b] = second.toolCalls!;
  const parts = modelParts([
    { role: "user", content: "Go" },
    first,
    { role: "tool", toolCallId: a.id, name: a.name, content: "ok" },
    second,
    { role: "tool", toolCallId: b.id, name: b.name, content: "ok" },
  ]);
  assert.deepEqual(parts.map((p) => p.thoughtSignature), [
    "Cs0BAY89a1+wrXk3sig/write==",
    "EqQBsig/search==",
  ]);
});

Deno.test("gemini: a call with no signature of its own gets the documented skip value", () => {
  // A call another provider made before a switch, or from a transcript older than signatures.
  const parts = modelParts([
    { role: "user", content: "Go" },
    {
      role: "assistant",
      content: "",
      toolCalls: [
        { id: "toolu_01", name: "read", arguments: '{"path":"a"}' },
        { id: "toolu_02", name: "read", arguments: '{"path":"b"}' },
      ],
    },
  ]);
  assert.deepEqual(parts.map((p) => p.thoughtSignature), [SKIP, SKIP]);
});

Deno.test("gemini: the text's signature, on a last empty part, goes back on the text", () => {
  const events = decodeFixture("signed_text");
  assert.equal(text(events, "reasoning"), "Weighing the request");
  assert.deepEqual(events.filter((e) => e.type === "textSignature"), [
    { type: "textSignature", signature: "EtoCsig/text==" },
  ]);
  const message = messageOf(events);
  assert.deepEqual(modelParts([{ role: "user", content: "Q" }, message]), [
    { text: "The answer is 42.", thoughtSignature: "EtoCsig/text==" },
  ]);
  // With no text to sign, the signature stays behind: Gemini refuses an empty text part.
  assert.deepEqual(
    modelParts([{ role: "user", content: "Q" }, { ...message, content: "", toolCalls: [] }]),
    [],
  );
});

Deno.test("gemini: a part that is only a signature signs the text too", () => {
  const stream = `data: ${
    JSON.stringify({
      candidates: [{
        content: { role: "model", parts: [{ text: "Hi" }, { thoughtSignature: "Zm9v" }] },
        finishReason: "STOP",
      }],
    })
  }\r\n\r\n`;
  const events = decodeWith(geminiDialect(), [stream]);
  assert.deepEqual(events.slice(0, 2), [
    { type: "text", delta: "Hi" },
    { type: "textSignature", signature: "Zm9v" },
  ]);
});

// ---------------------------------------------------------------------------------------------
// End to end: the client over HTTP, the stream cut into small pieces

Deno.test("gemini e2e: streamed arguments and signatures survive a two-step turn", async () => {
  const served = ["streamed_args_mixed", "signed_text"];
  const bodies: string[] = [];
  const encoder = new TextEncoder();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    bodies.push(await req.text());
    const bytes = encoder.encode(fixture(served[bodies.length - 1]));
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(at, at += 13));
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  });
  try {
    const client = new ProviderClient(geminiDialect(), {
      baseUrl: `http://127.0.0.1:${server.addr.port}`,
      apiKey: "AIza-test",
    });
    const messages: Message[] = [{ role: "user", content: "Read screen A" }];
    const step = async (): Promise<StreamEvent[]> => {
      const events: StreamEvent[] = [];
      await client.stream(
        { model: "gemini-3-pro-preview", messages, tools: [] },
        (event) => events.push(event),
      );
      return events;
    };
    const first = messageOf(await step());
    assert.deepEqual(first.toolCalls!.map((c) => [c.name, c.arguments]), [
      ["list_screens", '{"all":true}'],
      ["read_screen", '{"id":"A"}'],
    ]);
    messages.push(first);
    for (const call of first.toolCalls!) {
      messages.push({ role: "tool", toolCallId: call.id, name: call.name, content: "ok" });
    }
    const second = await step();
    assert.equal(text(second), "The answer is 42.");
    const sent = JSON.parse(bodies[1]) as { contents: { role: string; parts: Json[] }[] };
    assert.deepEqual(sent.contents[1], {
      role: "model",
      parts: [
        { text: "Checking both." },
        {
          functionCall: { name: "list_screens", args: { all: true } },
          thoughtSignature: "CiQBsig/first==",
        },
        { functionCall: { name: "read_screen", args: { id: "A" } } },
      ],
    });
    assert.deepEqual(sent.contents[2].parts.map((p) => p.functionResponse), [
      { name: "list_screens", response: { output: "ok" } },
      { name: "read_screen", response: { output: "ok" } },
    ]);
  } finally {
    await server.shutdown();
  }
});
