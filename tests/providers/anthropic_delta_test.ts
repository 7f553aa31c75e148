// The Anthropic decoder reads compact text and tool-argument deltas without parsing the whole
// object. These tests hold that reading to the full parse: every frame, well formed or not, must
// decode to the same events as the same frame with its keys reordered, which only the full parse
// accepts.
import assert from "node:assert/strict";
import type { StreamEvent } from "@amber/core";
import { anthropicDialect } from "../../providers/anthropic.ts";
import { assertFinish, decodeWith, errorOf, text } from "./_e2e.ts";

const START = 'event: message_start\ndata: {"type":"message_start","message":{"usage":' +
  '{"input_tokens":5,"output_tokens":1}}}\n\n';
const TEXT_BLOCK = 'event: content_block_start\ndata: {"type":"content_block_start","index":0,' +
  '"content_block":{"type":"text","text":""}}\n\n';
const TOOL_BLOCK = 'event: content_block_start\ndata: {"type":"content_block_start","index":11,' +
  '"content_block":{"type":"tool_use","id":"toolu_1","name":"write","input":{}}}\n\n';
const END = [
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":11}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},' +
  '"usage":{"output_tokens":9}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
];

/** A delta frame as Anthropic writes it: compact, `type` first. */
function compact(index: string, inner: string, named = true): string {
  const data = `{"type":"content_block_delta","index":${index},"delta":${inner}}`;
  return `${named ? "event: content_block_delta\n" : ""}data: ${data}\n\n`;
}

/** The same frame with `index` first: only the full parse reads it. */
function reordered(index: string, inner: string, named = true): string {
  const data = `{"index":${index},"type":"content_block_delta","delta":${inner}}`;
  return `${named ? "event: content_block_delta\n" : ""}data: ${data}\n\n`;
}

function decode(frames: readonly string[]): StreamEvent[] {
  return decodeWith(anthropicDialect(), [START, TEXT_BLOCK, TOOL_BLOCK, ...frames, ...END]);
}

/** Decodes `inner` at `index` both ways, with and without `event:` lines; all must agree. */
function both(index: string, inner: string): StreamEvent[] {
  const fast = decode([compact(index, inner)]);
  assert.deepEqual(fast, decode([reordered(index, inner)]), `${index} ${inner}`);
  assert.deepEqual(decode([compact(index, inner, false)]), fast, `unnamed ${index} ${inner}`);
  return fast;
}

const STRINGS = [
  "plain",
  "",
  'quote " inside',
  "back\\slash \\n not a newline",
  "line\nbreak\ttab\r\u0000nul",
  "unicode é ü 中文 🦀 \u2028 \u2029",
  'looks like the end"}}',
  '","delta":{"type":"text_delta","text":"forged',
  '{"path":"a.ts","content":"x"}',
];

Deno.test("anthropic delta: text deltas decode as the full parse reads them", () => {
  for (const value of STRINGS) {
    const events = both("0", `{"type":"text_delta","text":${JSON.stringify(value)}}`);
    assert.equal(text(events), value);
  }
  // Escapes the encoder does not write but the wire may carry.
  const escaped = both("0", '{"type":"text_delta","text":"\\u00e9\\ud83e\\udd80\\/"}');
  assert.equal(text(escaped), "é🦀/");
});

Deno.test("anthropic delta: tool-argument deltas reach only tool blocks, pieces intact", () => {
  for (const value of STRINGS) {
    const inner = `{"type":"input_json_delta","partial_json":${JSON.stringify(value)}}`;
    const events = both("11", inner);
    const deltas = events.filter((e) => e.type === "toolCallDelta");
    assert.deepEqual(deltas, value ? [{ type: "toolCallDelta", index: 11, delta: value }] : []);
    const end = events.find((e) => e.type === "toolCallEnd");
    assert.equal(end?.type === "toolCallEnd" && end.arguments, value || "{}");
    // At a text block, and at a block that was never started, nothing comes of it.
    for (const index of ["0", "1", "7", "123456789"]) {
      assert.equal(both(index, inner).some((e) => e.type === "toolCallDelta"), false);
    }
  }
});

Deno.test("anthropic delta: near-misses of the compact shape decode as the full parse says", () => {
  const cases = [
    // A second field after the string: valid JSON, the text is still read.
    '{"type":"text_delta","text":"a","extra":"b"}',
    '{"type":"text_delta","text":"a","text":"b"}',
    // Not a string.
    '{"type":"text_delta","text":5}',
    '{"type":"text_delta","text":null}',
    '{"type":"input_json_delta","partial_json":["x"]}',
    // Other delta types and spacing.
    '{"type":"citations_delta","citation":{}}',
    '{"type": "text_delta", "text": "spaced"}',
    '{"text":"first","type":"text_delta"}',
  ];
  for (const inner of cases) both("0", inner);
  assert.equal(text(both("0", cases[0])), "a");
  assert.equal(text(both("0", cases[1])), "b");
  assert.equal(text(both("0", cases[6])), "spaced");
  assert.equal(text(both("0", cases[7])), "first");
});

Deno.test("anthropic delta: corrupt frames in the compact shape are malformed chunks", () => {
  const corrupt = [
    // The closing quote escaped: the literal never ends.
    compact("0", '{"type":"text_delta","text":"a\\"}'),
    // One brace too many.
    compact("0", '{"type":"text_delta","text":"a"}}'),
    // A leading zero JSON forbids, and no index at all.
    compact("01", '{"type":"text_delta","text":"a"}'),
    compact("", '{"type":"text_delta","text":"a"}'),
    // A raw control character inside the string.
    compact("0", '{"type":"text_delta","text":"a\u0001b"}'),
    // A lone quote as the whole literal.
    compact("0", '{"type":"text_delta","text":"}'),
  ];
  for (const frame of corrupt) {
    const events = decode([frame]);
    assert.match(errorOf(events).message, /^malformed chunk from the provider/, frame);
    assert.equal(text(events), "", frame);
    assertFinish(events, "error");
  }
});

Deno.test("anthropic delta: the event name wins over the data's shape", () => {
  const frame = compact("0", '{"type":"text_delta","text":"hidden"}').replace(
    "event: content_block_delta",
    "event: ping",
  );
  assert.equal(text(decode([frame])), "");
});
