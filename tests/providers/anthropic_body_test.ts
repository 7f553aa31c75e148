// The Anthropic request body as the dialect writes it: byte for byte JSON.stringify of
// anthropicBody, however the conversation grows, and each committed message read once.

import assert from "node:assert/strict";
import type { ChatRequest, Message, ProviderSettings, ToolDefinition } from "@amber/core";
import { anthropicBody, anthropicDialect } from "../../providers/anthropic.ts";

const TOOLS: readonly ToolDefinition[] = [
  Object.freeze({
    name: "read",
    description: "Reads a file.",
    parameters: { type: "object", properties: { path: { type: "string" } } },
  }),
  // No object schema, no description: the dialect fills in the schema.
  { name: "now", description: "", parameters: {} },
];

const PNG = { mimeType: "image/png", data: "iVBORw0KGgo=" };
const BMP = { mimeType: "image/bmp", data: "Qk0=" };

/** Step `i` of a varied session: what the kernel commits after the model's turn. */
function step(i: number): Message[] {
  const id = `toolu_${i}`;
  switch (i % 6) {
    case 0:
      return [
        {
          role: "assistant",
          content: `Looking ${i}.`,
          toolCalls: [{ id, name: "read", arguments: `{"path":"${i}.ts"}` }],
        },
        { role: "tool", toolCallId: id, name: "read", content: `export const n = ${i};` },
      ];
    case 1:
      // Thinking with its signature, an empty input, an error result.
      return [
        {
          role: "assistant",
          content: "",
          reasoning: `Why ${i}? "quoted" \u2028 é😀`,
          reasoningSignature: `c2ln${i}`,
          toolCalls: [{ id, name: "now", arguments: "" }],
        },
        { role: "tool", toolCallId: id, name: "now", content: "no clock", isError: true },
      ];
    case 2:
      // Images, sent or described depending on the settings; an empty text beside them.
      return [
        { role: "assistant", content: "", toolCalls: [{ id, name: "read", arguments: "{bad" }] },
        { role: "tool", toolCallId: id, name: "read", content: "", images: [PNG, BMP] },
        { role: "user", content: "And the screenshot?" },
      ];
    case 3:
      // Two calls, results apart; unsigned reasoning; a nameless call the dialect drops.
      return [
        {
          role: "assistant",
          content: "Two at once.",
          reasoning: "unsigned",
          toolCalls: [
            { id: `${id}a`, name: "read", arguments: "[1]" },
            { id: `${id}b`, name: "read", arguments: '{"path":"b"}' },
            { id: `${id}c`, name: "", arguments: "{}" },
          ],
        },
        { role: "tool", toolCallId: `${id}a`, name: "read", content: "a", images: [PNG] },
        { role: "tool", toolCallId: `${id}b`, name: "read", content: "" },
      ];
    case 4:
      // Empty messages and a system note in the middle.
      return [
        { role: "assistant", content: "" },
        { role: "system", content: `Note ${i}.` },
        { role: "user", content: "" },
        { role: "assistant", content: "Shall I go on?" },
        { role: "user", content: "Yes." },
      ];
    default:
      // Two assistant messages in a row merge into one turn.
      return [
        { role: "assistant", content: "Part one." },
        { role: "assistant", content: "", toolCalls: [{ id, name: "read", arguments: "{}" }] },
        { role: "tool", toolCallId: id, name: "read", content: "done" },
      ];
  }
}

function request(messages: readonly Message[], tools = TOOLS): ChatRequest {
  return { model: "claude-sonnet-4-5", messages, tools, reasoningEffort: "low" };
}

function assertSame(
  dialect: ReturnType<typeof anthropicDialect>,
  req: ChatRequest,
  settings: Pick<ProviderSettings, "images">,
  label: string,
): void {
  const sent = dialect.chatRequest({ baseUrl: "https://x", ...settings }, req).body;
  assert.equal(sent, JSON.stringify(anthropicBody(req, settings)), label);
}

Deno.test("anthropic body: byte for byte anthropicBody as a session grows, images on and off", () => {
  for (const images of [true, false]) {
    const dialect = anthropicDialect();
    const history: Message[] = [
      Object.freeze({ role: "system", content: "You are amber." }),
      Object.freeze({ role: "user", content: "Fix everything." }),
    ];
    for (let i = 0; i < 30; i++) {
      assertSame(dialect, request(history), { images }, `step ${i}, images ${images}`);
      // The kernel commits frozen messages; every fifth step leaves one unfrozen.
      for (const message of step(i)) history.push(i % 5 === 4 ? message : Object.freeze(message));
    }
    assertSame(dialect, request(history, []), { images }, "no tools");
  }
});

Deno.test("anthropic body: a compacted, edited or switched history starts over, still exact", () => {
  const dialect = anthropicDialect();
  const history: Message[] = [Object.freeze({ role: "user", content: "Go." })];
  for (let i = 0; i < 12; i++) history.push(...step(i).map((m) => Object.freeze(m)));
  assertSame(dialect, request(history), { images: true }, "before");
  // Compaction: a summary replaces the old turns, the recent ones stay.
  const compacted = [
    Object.freeze<Message>({ role: "user", content: "Summary of the work so far." }),
    ...history.slice(-7),
  ];
  assertSame(dialect, request(compacted), { images: true }, "compacted");
  assertSame(dialect, request(history), { images: true }, "the old one again");
  // The same messages, images now off: a different encoding.
  assertSame(dialect, request(history), { images: false }, "images off");
  // A history that continues a turn the last request had settled: the user turn merges.
  const cut = history.slice(0, 12);
  assertSame(dialect, request(cut), {}, "cut");
  const continued = [...cut, Object.freeze<Message>({ role: "user", content: "More." })];
  assertSame(dialect, request(continued), {}, "continued");
  const merged = [
    ...history.slice(0, 9),
    Object.freeze<Message>({ role: "tool", toolCallId: "x", name: "read", content: "late" }),
  ];
  assertSame(dialect, request(merged), {}, "merged");
  assertSame(dialect, request([]), {}, "empty");
  // Settled: the first user and assistant turns. A history that goes on from them with another
  // assistant message must merge it into the settled turn.
  const f = (message: Message) => Object.freeze(message);
  const start = [f({ role: "user", content: "u0" }), f({ role: "assistant", content: "a0" })];
  const three = [
    ...start,
    f({ role: "user", content: "u1" }),
    f({ role: "assistant", content: "a1" }),
    f({ role: "user", content: "u2" }),
  ];
  assertSame(dialect, request(three), {}, "three user turns");
  const edited = [...start, f({ role: "assistant", content: "a0, continued" }), three[2]];
  assertSame(dialect, request(edited), {}, "edited");
  const body = JSON.parse(dialect.chatRequest({ baseUrl: "https://x" }, request(edited)).body!);
  assert.deepEqual(body.messages[1].content.map((b: { text: string }) => b.text), [
    "a0",
    "a0, continued",
  ]);
});

Deno.test("anthropic body: each committed message is read once, however many requests follow", () => {
  const reads = new Map<number, number>();
  /** A frozen message that counts how often its content is read. */
  const counted = (n: number, message: Message): Message => {
    const { content, ...rest } = message;
    return Object.freeze({
      ...rest,
      get content() {
        reads.set(n, (reads.get(n) ?? 0) + 1);
        return content;
      },
    }) as Message;
  };
  const dialect = anthropicDialect();
  const history: Message[] = [counted(0, { role: "user", content: "Go." })];
  const settled: number[] = [];
  for (let i = 0; i < 60; i++) {
    dialect.chatRequest({ baseUrl: "https://x" }, request(history));
    if (i === 20) { for (const [n, count] of reads) settled[n] = count; }
    for (const message of step(i % 6 === 4 ? 0 : i)) history.push(counted(history.length, message));
  }
  // The messages of the first 20 steps were read when first sent, and never again.
  for (let n = 0; n < 40; n++) assert.equal(reads.get(n), settled[n], `message ${n}`);
});

Deno.test("anthropic body: the prompt's fresh system blocks ahead of the history stop no reuse", () => {
  // As the kernel sends it: the prompt assembly's blocks, made anew each step (not frozen),
  // ahead of the committed history. The history's settled turns must still be taken over.
  const reads = new Map<number, number>();
  /** A frozen message that counts every read of its fields. */
  const counted = (n: number, message: Message): Message =>
    new Proxy(Object.freeze(message), {
      get(target, key, receiver) {
        reads.set(n, (reads.get(n) ?? 0) + 1);
        return Reflect.get(target, key, receiver);
      },
    });
  const dialect = anthropicDialect();
  const history: Message[] = [counted(0, { role: "user", content: "Go." })];
  const settled: number[] = [];
  let req = request(history);
  for (let i = 0; i < 60; i++) {
    const prompt: Message = { role: "system", content: `You are amber, step ${i}.` };
    req = request([prompt, ...history]);
    dialect.chatRequest({ baseUrl: "https://x" }, req);
    if (i === 20) { for (const [n, count] of reads) settled[n] = count; }
    for (const message of step(i)) history.push(counted(history.length, message));
  }
  // The first message after the prompt is looked at to find where the prompt ends; the others
  // of the first 20 steps were read when first sent, and never again.
  for (let n = 1; n < 40; n++) assert.equal(reads.get(n), settled[n], `message ${n}`);
  assertSame(dialect, req, {}, "the last request");
});
