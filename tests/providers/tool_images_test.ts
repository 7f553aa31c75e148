// Where each dialect puts the images of several tool results answering one assistant turn: the
// tool results must stay together, in call order, as every API requires.

import assert from "node:assert/strict";
import type { ChatRequest, Message } from "@amber/core";
import { anthropicBody } from "@amber/providers/anthropic";
import { geminiBody } from "@amber/providers/gemini";
import { openaiDialect } from "@amber/providers/openai";

const A = { mimeType: "image/png", data: "QUFB" };
const B = { mimeType: "image/jpeg", data: "QkJC" };

const MESSAGES: readonly Message[] = [
  { role: "user", content: "compare" },
  {
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "c1", name: "shot", arguments: "{}" },
      { id: "c2", name: "shot", arguments: "{}" },
      { id: "c3", name: "read", arguments: "{}" },
    ],
  },
  { role: "tool", toolCallId: "c1", name: "shot", content: "first", images: [A] },
  { role: "tool", toolCallId: "c2", name: "shot", content: "", images: [A, B] },
  { role: "tool", toolCallId: "c3", name: "read", content: "text only" },
  { role: "user", content: "well?" },
];

const REQUEST: ChatRequest = { model: "m", messages: MESSAGES, tools: [] };

type Json = Record<string, unknown>;

Deno.test("chat completions: the images follow the run of tool messages as one user message", () => {
  const spec = openaiDialect().chatRequest({ baseUrl: "http://x", images: true }, REQUEST);
  const messages = JSON.parse(spec.body!).messages as Json[];
  assert.deepEqual(messages.map((m) => m.role), [
    "user",
    "assistant",
    "tool",
    "tool",
    "tool",
    "user",
    "user",
  ]);
  assert.deepEqual(messages[3], { role: "tool", tool_call_id: "c2", content: "" });
  assert.deepEqual(messages[5].content, [
    { type: "text", text: "The image that shot (call c1) returned:" },
    { type: "image_url", image_url: { url: "data:image/png;base64,QUFB" } },
    { type: "text", text: "The images that shot (call c2) returned:" },
    { type: "image_url", image_url: { url: "data:image/png;base64,QUFB" } },
    { type: "image_url", image_url: { url: "data:image/jpeg;base64,QkJC" } },
  ]);
  assert.deepEqual(messages[6], { role: "user", content: "well?" });
});

Deno.test("chat completions: without images the tool messages say what was left out", () => {
  const spec = openaiDialect().chatRequest({ baseUrl: "http://x" }, REQUEST);
  const messages = JSON.parse(spec.body!).messages as Json[];
  assert.equal(messages.length, 6, "no user message of images");
  assert.equal(
    messages[3].content,
    "[image/png image, 1 KB, not sent: this model takes no images]\n" +
      "[image/jpeg image, 1 KB, not sent: this model takes no images]",
  );
});

Deno.test("gemini: every function response first, then the turn's images, in call order", () => {
  const contents = geminiBody(REQUEST, { images: true }).contents as Json[];
  const parts = (contents[2].parts as Json[]).map((part) =>
    part.functionResponse !== undefined
      ? `response ${(part.functionResponse as Json).id}`
      : part.inlineData !== undefined
      ? `image ${(part.inlineData as Json).mimeType}`
      : `text ${part.text}`
  );
  assert.deepEqual(parts, [
    "response c1",
    "response c2",
    "response c3",
    "image image/png",
    "image image/png",
    "image image/jpeg",
    // The user's next message joins the same user turn, after the images.
    "text well?",
  ]);
  assert.equal(contents[2].role, "user");
});

Deno.test("anthropic: a result with images and no text has image blocks only", () => {
  const messages = anthropicBody(REQUEST, { images: true }).messages as Json[];
  const results = (messages[2].content as Json[]).filter((b) => b.type === "tool_result");
  assert.deepEqual(results.map((b) => b.tool_use_id), ["c1", "c2", "c3"]);
  assert.deepEqual(results[1].content, [
    { type: "image", source: { type: "base64", media_type: "image/png", data: "QUFB" } },
    { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "QkJC" } },
  ]);
  assert.equal(results[2].content, "text only");
});

Deno.test("the line's size is the decoded size, rounded up to whole KB", () => {
  const big = { mimeType: "image/png", data: "A".repeat(4 * 1024) }; // 3072 bytes
  const messages = anthropicBody({
    model: "m",
    messages: [
      { role: "assistant", content: "", toolCalls: [{ id: "c", name: "t", arguments: "{}" }] },
      { role: "tool", toolCallId: "c", name: "t", content: "", images: [big] },
    ],
    tools: [],
  }).messages as Json[];
  const result = (messages[1].content as Json[])[0];
  assert.equal(result.content, "[image/png image, 3 KB, not sent: this model takes no images]");
});
