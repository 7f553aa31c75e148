// The request body the Gemini dialect sends is put together from each committed message's own
// JSON, kept from the previous step; it must be byte for byte what serializing the whole body
// object gives (geminiBody), whatever the conversation holds.

import assert from "node:assert/strict";
import type { ChatRequest, Message, ToolDefinition } from "@amber/core";
import { geminiBody, geminiDialect } from "../../providers/gemini.ts";

const BASE = "https://generativelanguage.googleapis.com";
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const TOOLS: ToolDefinition[] = [
  {
    name: "read",
    description: "Reads a file.",
    parameters: {
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
      additionalProperties: false,
    },
  },
  { name: "shot", description: "Takes a screenshot.", parameters: { type: "object" } },
];

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

// A session with a bit of everything: system text at the start and in the middle, reasoning,
// signed and unsigned calls, ids Gemini issued and ones amber made up, a nameless call, errors,
// images of a type Gemini takes and of one it does not, tool results in a row with images,
// empty messages, and text with quotes, newlines and characters outside ASCII.
const CONVERSATION: readonly Message[] = deepFreeze<Message[]>([
  { role: "system", content: "You are terse." },
  { role: "user", content: 'Fix "the bug" in\nsrc/ä.ts 😀' },
  {
    role: "assistant",
    content: "Reading.",
    reasoning: "The user wants a fix.",
    toolCalls: [
      { id: "fc-1", name: "read", arguments: '{"path":"src/ä.ts"}', signature: "Cs0Bsig==" },
      { id: "call_0a1b2c3d4e5f_0", name: "read", arguments: "{broken" },
      { id: "call_0a1b2c3d4e5f_1", name: "", arguments: "{}" },
    ],
  },
  { role: "tool", toolCallId: "fc-1", name: "read", content: "export const x = 1;\n" },
  {
    role: "tool",
    toolCallId: "call_0a1b2c3d4e5f_0",
    name: "read",
    content: "invalid arguments",
    isError: true,
  },
  { role: "system", content: "Tools are available." },
  { role: "user", content: "" },
  { role: "user", content: "Now look at the screen." },
  {
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "toolu_01", name: "shot", arguments: "{}" },
      { id: "toolu_02", name: "shot", arguments: '{"display":2}' },
    ],
  },
  {
    role: "tool",
    toolCallId: "toolu_01",
    name: "shot",
    content: "the screen",
    images: [{ mimeType: "image/png", data: PNG }, { mimeType: "image/gif", data: "R0lGOD" }],
  },
  {
    role: "tool",
    toolCallId: "toolu_02",
    name: "shot",
    content: "",
    images: [{ mimeType: "image/png", data: PNG }],
  },
  { role: "assistant", content: "", reasoning: "Nothing to say." },
  { role: "assistant", content: "Done: x is 1.", textSignature: "EtoCsig==" },
  { role: "user", content: "Thanks" },
  { role: "tool", toolCallId: "orphan", name: "read", content: "late" },
]);

const VARIANTS: readonly Partial<ChatRequest>[] = [
  {},
  { tools: TOOLS },
  // Frozen, as the tool registry hands them out: kept from request to request.
  { tools: deepFreeze(structuredClone(TOOLS)) },
  { tools: TOOLS, maxTokens: 1000, temperature: 0.2, reasoningEffort: "high" },
  { reasoningEffort: "none" },
];

function requestOf(messages: readonly Message[], extra: Partial<ChatRequest>): ChatRequest {
  return { model: "gemini-3-pro-preview", messages, tools: [], ...extra };
}

Deno.test("gemini body: the pieced-together body is JSON.stringify of geminiBody, step by step", () => {
  for (const images of [false, true]) {
    for (const extra of VARIANTS) {
      // One dialect for a whole session, its conversation growing a message at a time, each
      // request sent twice (a retry): every step but the first reuses what earlier ones made.
      const dialect = geminiDialect();
      for (let end = 0; end <= CONVERSATION.length; end++) {
        const request = requestOf(CONVERSATION.slice(0, end), extra);
        const expected = JSON.stringify(geminiBody(request, { images }));
        for (let attempt = 0; attempt < 2; attempt++) {
          const spec = dialect.chatRequest({ baseUrl: BASE, images }, request);
          assert.equal(spec.body, expected, `images ${images}, ${end} messages, ${attempt}`);
        }
      }
    }
  }
});

Deno.test("gemini body: a conversation rewritten, cut short or with new prompt blocks is right", () => {
  const all = CONVERSATION;
  // Prompt blocks are made anew each step, right after the leading system message; the last
  // message may be one still open (not frozen).
  const block = (text: string): Message => ({ role: "system", content: text });
  const summary = deepFreeze<Message>({ role: "user", content: "Summary of the earlier work." });
  const open: Message = { role: "user", content: "still typing" };
  const requests: Message[][] = [
    [all[0], block("rules v1"), ...all.slice(1, 6)],
    [all[0], block("rules v1"), ...all.slice(1, 10)],
    [all[0], block("rules v2"), ...all.slice(1, 10), open],
    // Compacted: the early turns replaced by a summary, longer than before all the same.
    [all[0], block("rules v2"), summary, ...all.slice(3, 13)],
    [all[0], block("rules v2"), summary, ...all.slice(3, 15)],
    // Two blocks now: every later message moves along by one.
    [all[0], block("a"), block("b"), summary, ...all.slice(3, 15)],
    // Cut short, then the whole again.
    [all[0], ...all.slice(1, 3)],
    [...all],
    [...all, open],
  ];
  for (const images of [true, false]) {
    const dialect = geminiDialect();
    for (const [step, messages] of requests.entries()) {
      const request = requestOf(messages, { tools: TOOLS });
      const body = dialect.chatRequest({ baseUrl: BASE, images }, request).body;
      assert.equal(body, JSON.stringify(geminiBody(request, { images })), `step ${step}`);
    }
  }
});

Deno.test("gemini body: a dialect switching images on and off keeps the two encodings apart", () => {
  const dialect = geminiDialect();
  const request = requestOf(CONVERSATION, { tools: TOOLS });
  for (const images of [true, false, true, false]) {
    const body = dialect.chatRequest({ baseUrl: BASE, images }, request).body;
    assert.equal(body, JSON.stringify(geminiBody(request, { images })));
    assert.equal(body!.includes('"inlineData"'), images);
  }
});

Deno.test("gemini body: a committed message is serialized once; one still open every time", () => {
  let reads = 0;
  const committed = Object.freeze({
    role: "user" as const,
    get content(): string {
      reads++;
      return "Hi";
    },
  });
  const dialect = geminiDialect();
  const request = requestOf([committed], {});
  const first = dialect.chatRequest({ baseUrl: BASE }, request).body;
  const readsFirst = reads;
  assert.ok(readsFirst > 0);
  for (let step = 0; step < 3; step++) {
    assert.equal(dialect.chatRequest({ baseUrl: BASE }, request).body, first);
  }
  assert.equal(reads, readsFirst);

  // A message that is not frozen may still change, so it is read anew each time.
  const open = { role: "user" as const, content: "draft" };
  const openRequest = requestOf([committed, open], {});
  assert.match(dialect.chatRequest({ baseUrl: BASE }, openRequest).body!, /draft/);
  open.content = "final";
  assert.match(dialect.chatRequest({ baseUrl: BASE }, openRequest).body!, /final/);
});

Deno.test("gemini body: a step goes on from the last one: earlier messages are not read again", () => {
  // Reads of each message's fields, by its place in the history.
  const reads: number[] = [];
  const history = CONVERSATION.slice(1, 12).map((message, at) => {
    reads[at] = 0;
    return new Proxy(deepFreeze(message), {
      get(target, key, receiver) {
        reads[at]++;
        return Reflect.get(target, key, receiver);
      },
    });
  });
  const dialect = geminiDialect();
  const send = (n: number): string => {
    // The prompt's block is a new object each step, as the kernel's prompt assembly makes it.
    const block: Message = { role: "system", content: `rules at step ${n}` };
    const request = requestOf([CONVERSATION[0], block, ...history.slice(0, n)], {});
    return dialect.chatRequest({ baseUrl: BASE, images: true }, request).body!;
  };
  send(8);
  reads.fill(0);
  const body = send(9);
  assert.ok(body.includes("rules at step 9"));
  // The first is asked its role once, where the leading system messages end; no more.
  assert.deepEqual(reads.slice(0, 8), [1, 0, 0, 0, 0, 0, 0, 0]);
  assert.ok(reads[8] > 0);
  // And the body is still the whole conversation's.
  const request = requestOf(
    [CONVERSATION[0], { role: "system", content: "rules at step 9" }, ...history.slice(0, 9)],
    {},
  );
  assert.equal(body, JSON.stringify(geminiBody(request, { images: true })));
});
