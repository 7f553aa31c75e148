import assert from "node:assert/strict";
import fc from "fast-check";
import { SseDecoder } from "@amber/providers/sse";

type Seen = { readonly name: string | undefined; readonly data: string } | {
  readonly raw: string;
};

/** A decoder that records events and unframed lines in the order they arrive. */
function recorder(withUnframed = true): { decoder: SseDecoder; seen: Seen[] } {
  const seen: Seen[] = [];
  const decoder = new SseDecoder(
    (name, data) => seen.push({ name, data }),
    withUnframed ? (raw) => seen.push({ raw }) : undefined,
  );
  return { decoder, seen };
}

function decodeText(chunks: readonly string[], withUnframed = true): Seen[] {
  const { decoder, seen } = recorder(withUnframed);
  for (const chunk of chunks) decoder.push(chunk);
  decoder.end();
  return seen;
}

function decodeBytes(chunks: readonly Uint8Array[]): Seen[] {
  const { decoder, seen } = recorder();
  for (const chunk of chunks) decoder.pushBytes(chunk);
  decoder.end();
  return seen;
}

Deno.test("every line ending frames events the same way", () => {
  const expected: Seen[] = [
    { name: undefined, data: "one" },
    { name: "named", data: "two\nthree" },
  ];
  for (const eol of ["\n", "\r", "\r\n"]) {
    const text = `data: one${eol}${eol}event: named${eol}data: two${eol}data: three${eol}${eol}`;
    assert.deepEqual(decodeText([text]), expected, JSON.stringify(eol));
  }
  // Mixed endings within one stream.
  assert.deepEqual(
    decodeText(["data: one\r\n\nevent: named\rdata: two\r\ndata: three\n\r"]),
    expected,
  );
});

Deno.test("a CRLF split across chunks is one line ending", () => {
  assert.deepEqual(decodeText(["data: a\r", "\ndata: b\r", "\n\r", "\n"]), [
    { name: undefined, data: "a\nb" },
  ]);
  // A lone CR at the end of a chunk followed by other text is a line ending of its own.
  assert.deepEqual(decodeText(["data: a\r", "\r", "data: b\r", "\r"]), [
    { name: undefined, data: "a" },
    { name: undefined, data: "b" },
  ]);
  // The CR/LF pair split in bytes, each byte its own chunk.
  const bytes = new TextEncoder().encode("data: x\r\n\r\ndata: y\r\n\r\n");
  assert.deepEqual(decodeBytes([...bytes].map((b) => Uint8Array.of(b))), [
    { name: undefined, data: "x" },
    { name: undefined, data: "y" },
  ]);
});

Deno.test("multi-line data is joined with newlines", () => {
  assert.deepEqual(decodeText(['data: {"a":\ndata: 1}\n\n']), [
    { name: undefined, data: '{"a":\n1}' },
  ]);
});

Deno.test("one optional space after the colon is removed, no more", () => {
  assert.deepEqual(decodeText(["data:x\n\ndata:  y\n\ndata: \n\n"]), [
    { name: undefined, data: "x" },
    { name: undefined, data: " y" },
    { name: undefined, data: "" },
  ]);
});

Deno.test("comments, id and retry are dropped", () => {
  assert.deepEqual(
    decodeText([": keep-alive\n:\ndata: a\nid: 7\nretry: 1000\nid\nretry\n: more\n\n"]),
    [{ name: undefined, data: "a" }],
  );
});

Deno.test("event names apply to one event only", () => {
  assert.deepEqual(
    decodeText(["event: ping\ndata: {}\n\ndata: plain\n\nevent:\ndata: empty name\n\n"]),
    [
      { name: "ping", data: "{}" },
      { name: undefined, data: "plain" },
      { name: undefined, data: "empty name" },
    ],
  );
});

Deno.test("an event without data is not dispatched and its name does not leak", () => {
  assert.deepEqual(decodeText(["event: lonely\n\n\n\ndata: next\n\n"]), [
    { name: undefined, data: "next" },
  ]);
});

Deno.test("empty data lines count as data", () => {
  assert.deepEqual(decodeText(["data:\n\ndata\n\ndata:\ndata:\n\ndata: a\ndata:\n\n"]), [
    { name: undefined, data: "" },
    { name: undefined, data: "" },
    { name: undefined, data: "\n" },
    { name: undefined, data: "a\n" },
  ]);
});

Deno.test("lines that are no SSE field go to onUnframed, in order", () => {
  const error = '{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}';
  assert.deepEqual(
    decodeText([`data: a\n\n${error}\nInternal Server Error\ndatum: x\nevents: y\ndata: b\n\n`]),
    [
      { name: undefined, data: "a" },
      { raw: error },
      { raw: "Internal Server Error" },
      { raw: "datum: x" },
      { raw: "events: y" },
      { name: undefined, data: "b" },
    ],
  );
  // Without a handler they are dropped, as the spec drops unknown fields.
  assert.deepEqual(decodeText([`${error}\ndata: b\n\n`], false), [
    { name: undefined, data: "b" },
  ]);
});

Deno.test("end() delivers a last event that had no closing blank line", () => {
  const { decoder, seen } = recorder();
  decoder.push("data: 1\n\ndata: [DONE]");
  assert.deepEqual(seen, [{ name: undefined, data: "1" }]);
  decoder.end();
  assert.deepEqual(seen, [{ name: undefined, data: "1" }, { name: undefined, data: "[DONE]" }]);
  // Terminated by a single line ending, without the blank line.
  assert.deepEqual(decodeText(["event: last\ndata: x\r\n"]), [{ name: "last", data: "x" }]);
  // An unframed last line is reported too.
  assert.deepEqual(decodeText(['{"error":1}']), [{ raw: '{"error":1}' }]);
});

Deno.test("end() flushes the byte decoder and leaves the decoder ready for a new stream", () => {
  const { decoder, seen } = recorder();
  const bytes = new TextEncoder().encode("data: é");
  decoder.pushBytes(bytes.subarray(0, bytes.length - 1)); // "é" cut in half
  decoder.end();
  assert.deepEqual(seen, [{ name: undefined, data: "\ufffd" }]);
  decoder.push("data: again\r");
  decoder.end();
  decoder.push("\ndata: fresh\n\n"); // a new stream: its leading LF is a blank line of its own
  decoder.end();
  assert.deepEqual(seen.slice(1), [
    { name: undefined, data: "again" },
    { name: undefined, data: "fresh" },
  ]);
});

Deno.test("a byte-order mark at the start is dropped", () => {
  assert.deepEqual(decodeText(["\ufeffdata: a\n\n"]), [{ name: undefined, data: "a" }]);
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("data: b\n\n")]);
  assert.deepEqual(decodeBytes([bytes.subarray(0, 2), bytes.subarray(2)]), [
    { name: undefined, data: "b" },
  ]);
});

Deno.test("a byte-order mark after the start of the stream is content, whatever the chunking", () => {
  const head = new TextEncoder().encode("data: x");
  const bom = new TextEncoder().encode("\ufeffy\n\n");
  // The next chunk opening with U+FEFF, after a chunk that ended on a whole character and after
  // one that ended inside "é".
  assert.deepEqual(decodeBytes([head, bom]), [{ name: undefined, data: "x\ufeffy" }]);
  const e = new TextEncoder().encode("é");
  assert.deepEqual(decodeBytes([head, e.subarray(0, 1), e.subarray(1), bom]), [
    { name: undefined, data: "xé\ufeffy" },
  ]);
  // Two marks at the start are the decoder's and the grammar's: both go, a third stays.
  const three = new TextEncoder().encode("\ufeff\ufeff\ufeffdata: z\n\n");
  assert.deepEqual(decodeBytes([three.subarray(0, 4), three.subarray(4)]), [
    { raw: "\ufeffdata: z" },
  ]);
});

Deno.test("chunks that end inside a character and chunks that do not, in any order", () => {
  // Every chunk size from 1 to 12 bytes over text dense in 2-, 3- and 4-byte characters: chunks
  // end inside characters, on ASCII and on whole multi-byte ones, one after another.
  const text = Array.from({ length: 40 }, (_, i) => `data: ${"aé日🎉".repeat(i % 5)}${i}\n\n`)
    .join("");
  const bytes = new TextEncoder().encode(text);
  const whole = decodeBytes([bytes]);
  assert.equal(whole.length, 40);
  for (let size = 1; size <= 12; size++) {
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
    assert.deepEqual(decodeBytes(chunks), whole, `chunks of ${size} bytes`);
  }
});

Deno.test("multi-byte characters split anywhere between byte chunks", () => {
  const text = "data: 日本語 🎉 ünïcödé\n\n";
  const bytes = new TextEncoder().encode(text);
  for (let cut = 0; cut <= bytes.length; cut++) {
    assert.deepEqual(decodeBytes([bytes.subarray(0, cut), bytes.subarray(cut)]), [
      { name: undefined, data: "日本語 🎉 ünïcödé" },
    ]);
  }
});

Deno.test("a 1 MB event built from 10k small chunks arrives whole", () => {
  const piece = "0123456789abcdef".repeat(6) + "é🎉a"; // 100 UTF-16 units
  const chunks: string[] = ["event: big\ndata: "];
  for (let i = 0; i < 10_000; i++) chunks.push(piece);
  chunks.push("\n\ndata: after\n\n");
  const seen = decodeText(chunks);
  assert.equal(seen.length, 2);
  const first = seen[0] as { name: string; data: string };
  assert.equal(first.name, "big");
  assert.equal(first.data.length, 1_000_000);
  assert.equal(first.data, piece.repeat(10_000));
  assert.deepEqual(seen[1], { name: undefined, data: "after" });

  // The same as bytes in 1-KB chunks, and as many data lines.
  const bytes = new TextEncoder().encode(chunks.join(""));
  const byteChunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += 1024) byteChunks.push(bytes.subarray(i, i + 1024));
  assert.deepEqual(decodeBytes(byteChunks), seen);
  const lines = decodeText([`data: ${Array(10_000).fill(piece).join("\ndata: ")}\n\n`]);
  assert.equal((lines[0] as { data: string }).data, Array(10_000).fill(piece).join("\n"));
});

Deno.test("many events in one chunk and many one-character chunks agree", () => {
  let text = "";
  for (let i = 0; i < 2_000; i++) text += `event: e${i % 3}\r\ndata: {"i":${i}}\r\n\r\n`;
  const whole = decodeText([text]);
  assert.equal(whole.length, 2_000);
  assert.deepEqual(decodeText([...text]), whole);
});

// The property: a stream of events, serialised with arbitrary line endings, comments, id/retry
// and unframed lines, decodes to the same events whether fed whole or split anywhere.

type Line =
  | { readonly kind: "data"; readonly value: string; readonly space: boolean }
  | { readonly kind: "comment" | "unframed" | "id" | "retry"; readonly value: string };

interface ModelEvent {
  readonly name?: string;
  readonly lines: readonly Line[];
}

// Any code point (astral ones included) but the line-ending characters.
const lineText = fc.string({ unit: "binary", maxLength: 24 }).map((s) => s.replace(/[\r\n]/g, "_"));
const lineArb: fc.Arbitrary<Line> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("data" as const),
      value: lineText,
      space: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("comment" as const), value: lineText }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("unframed" as const),
      value: lineText.map((s) => `{"error":"${s}"}`),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom("id" as const, "retry" as const),
      value: lineText,
    }),
  },
);
const eventArb: fc.Arbitrary<ModelEvent> = fc.record(
  { name: lineText, lines: fc.array(lineArb, { maxLength: 5 }) },
  { requiredKeys: ["lines"] },
);
const endingArb = fc.constantFrom("\n", "\r", "\r\n");

function serialise(events: readonly ModelEvent[], endings: readonly string[], closeLast: boolean) {
  let text = "";
  let e = 0;
  let previous = "";
  const line = (content: string): void => {
    let ending = endings[e++ % endings.length];
    // "\r" then an empty line ended by "\n" would read as one CRLF: no serialiser writes that.
    if (content === "" && previous === "\r" && ending === "\n") ending = "\r";
    text += content + ending;
    previous = ending;
  };
  events.forEach((event, i) => {
    if (event.name !== undefined) line(`event: ${event.name}`);
    for (const l of event.lines) {
      if (l.kind === "data") {
        // Without the space, a value that opens with a space would lose it.
        line(l.space || l.value.startsWith(" ") ? `data: ${l.value}` : `data:${l.value}`);
      } else if (l.kind === "comment") line(`:${l.value}`);
      else if (l.kind === "unframed") line(l.value);
      else line(`${l.kind}: ${l.value}`);
    }
    if (i < events.length - 1 || closeLast) line("");
  });
  return text;
}

function expectedOf(events: readonly ModelEvent[]): Seen[] {
  const seen: Seen[] = [];
  for (const event of events) {
    const data: string[] = [];
    for (const l of event.lines) {
      if (l.kind === "data") data.push(l.value);
      else if (l.kind === "unframed") seen.push({ raw: l.value });
    }
    if (data.length > 0) {
      seen.push({ name: event.name === "" ? undefined : event.name, data: data.join("\n") });
    }
  }
  return seen;
}

Deno.test("property: every split of the bytes decodes to the same events as the whole", () => {
  fc.assert(
    fc.property(
      fc.array(eventArb, { maxLength: 8 }),
      fc.array(endingArb, { minLength: 1, maxLength: 6 }),
      fc.boolean(),
      fc.array(fc.nat(), { maxLength: 30 }),
      (events, endings, closeLast, rawCuts) => {
        const bytes = new TextEncoder().encode(serialise(events, endings, closeLast));
        const whole = decodeBytes([bytes]);
        assert.deepEqual(whole, expectedOf(events));
        const cuts = [...new Set(rawCuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let from = 0;
        for (const cut of [...cuts, bytes.length]) {
          chunks.push(bytes.subarray(from, cut));
          from = cut;
        }
        assert.deepEqual(decodeBytes(chunks), whole);
      },
    ),
    { numRuns: 1_000 },
  );
});

Deno.test("property: every split of the text (surrogate pairs included) agrees too", () => {
  fc.assert(
    fc.property(
      fc.array(eventArb, { maxLength: 8 }),
      fc.array(endingArb, { minLength: 1, maxLength: 6 }),
      fc.boolean(),
      fc.array(fc.nat(), { maxLength: 30 }),
      (events, endings, closeLast, rawCuts) => {
        const text = serialise(events, endings, closeLast);
        const cuts = [...new Set(rawCuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const chunks: string[] = [];
        let from = 0;
        for (const cut of [...cuts, text.length]) {
          chunks.push(text.slice(from, cut));
          from = cut;
        }
        assert.deepEqual(decodeText(chunks), expectedOf(events));
      },
    ),
    { numRuns: 1_000 },
  );
});
