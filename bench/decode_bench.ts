// Stream decode of a ~5 MB response in 1 KB chunks, per protocol: the floor (TextDecoder, line
// split, JSON.parse of each data payload), amber (SseDecoder + the dialect's decoder), amber's
// whole client over a ReadableStream body beside the floor fed from the same kind of stream
// (floor-stream), and the AI SDK's provider chain on the same bytes.
// Run: deno task bench bench/decode_bench.ts
//      deno run -A bench/separately.ts bench/decode_bench.ts 3
//      deno run -A bench/decode_bench.ts --alternate 16   (CPU time, cases alternating; see end)

import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import type { Dialect, StreamEvent, StreamSink } from "@amber/core";
import { anthropicDialect } from "@amber/providers/anthropic";
import { ProviderClient } from "@amber/providers/client";
import { openaiDialect } from "@amber/providers/openai";
import { SseDecoder } from "@amber/providers/sse";
import process from "node:process";
import { benchArgs, inOrder, median } from "./_cases.ts";

const TARGET_BYTES = 5 * 1024 * 1024;
const CHUNK_BYTES = 1024;

// Deterministic text: words of several lengths, some outside ASCII, so that multi-byte
// characters straddle chunk boundaries as they do on the wire.
const WORDS = [
  "the",
  "stream",
  "decoder",
  "reads",
  "each",
  "event",
  "once,",
  "and",
  "hands",
  "über",
  "données",
  "to",
  "the",
  "dialect;",
  "日本語",
  "tokens",
  "arrive",
  "quickly",
  "🎉",
  "\n",
];
const word = (
  i: number,
): string => (i % 7 === 0 ? WORDS[i % WORDS.length] : ` ${WORDS[i % WORDS.length]}`);
const ARG_PIECES = [
  '{"path',
  '": "src/',
  "main",
  ".ts",
  '", "cont',
  "ent",
  '": "const x',
  " = 1;\\n",
  '"}',
];

function chunked(text: string): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += CHUNK_BYTES) {
    chunks.push(bytes.slice(i, Math.min(i + CHUNK_BYTES, bytes.length)));
  }
  return chunks;
}

/** An OpenAI chat-completions stream: text deltas, two parallel tool calls, usage, [DONE]. */
function openaiStream(): { chunks: Uint8Array[]; bytes: number; events: number } {
  const head = '{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk",' +
    '"created":1741570283,"model":"gpt-4o-2024-08-06","service_tier":"default",' +
    '"system_fingerprint":"fp_eb9dce56a8","choices":[{"index":0,"delta":';
  const frame = (delta: unknown, finish: string | null = null): string =>
    `data: ${head}${JSON.stringify(delta)},"logprobs":null,"finish_reason":${
      finish === null ? "null" : JSON.stringify(finish)
    }}],"usage":null}\n\n`;
  const parts: string[] = [frame({ role: "assistant", content: "", refusal: null })];
  let size = parts[0].length;
  let events = 1;
  const textBudget = TARGET_BYTES * 0.85;
  for (let i = 0; size < textBudget; i++) {
    const f = frame({ content: word(i) });
    parts.push(f);
    size += f.length;
    events++;
  }
  for (const index of [0, 1]) {
    const f = frame({
      tool_calls: [{
        index,
        id: `call_${index}abcdefghijklmnop`,
        type: "function",
        function: { name: "write_file", arguments: "" },
      }],
    });
    parts.push(f);
    size += f.length;
    events++;
  }
  for (let i = 0; size < TARGET_BYTES; i++) {
    const f = frame({
      tool_calls: [{ index: i % 2, function: { arguments: ARG_PIECES[i % ARG_PIECES.length] } }],
    });
    parts.push(f);
    size += f.length;
    events++;
  }
  parts.push(frame({}, "tool_calls"));
  parts.push(
    `data: ${head.slice(0, head.indexOf('"choices"'))}"choices":[],"usage":{"prompt_tokens":1200,` +
      '"completion_tokens":24000,"total_tokens":25200,"prompt_tokens_details":{"cached_tokens":1024},' +
      '"completion_tokens_details":{"reasoning_tokens":0}}}\n\n',
  );
  parts.push("data: [DONE]\n\n");
  const text = parts.join("");
  return { chunks: chunked(text), bytes: text.length, events: events + 2 };
}

/** An Anthropic messages stream: text deltas, a tool_use block of input_json_delta, pings. */
function anthropicStream(): { chunks: Uint8Array[]; bytes: number; events: number } {
  const parts: string[] = [];
  let size = 0;
  let events = 0;
  const push = (name: string, data: unknown): void => {
    const f = `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    parts.push(f);
    size += f.length;
    events++;
  };
  push("message_start", {
    type: "message_start",
    message: {
      id: "msg_01XFDUDYJgAACzvnptvVoYEL",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 1200,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 1024,
        output_tokens: 1,
      },
    },
  });
  push("content_block_start", {
    type: "content_block_start",
    index: 0,
    content_block: { type: "text", text: "" },
  });
  const textBudget = TARGET_BYTES * 0.85;
  for (let i = 0; size < textBudget; i++) {
    if (i % 500 === 0) push("ping", { type: "ping" });
    push("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: word(i) },
    });
  }
  push("content_block_stop", { type: "content_block_stop", index: 0 });
  push("content_block_start", {
    type: "content_block_start",
    index: 1,
    content_block: {
      type: "tool_use",
      id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
      name: "write_file",
      input: {},
    },
  });
  for (let i = 0; size < TARGET_BYTES; i++) {
    push("content_block_delta", {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: ARG_PIECES[i % ARG_PIECES.length] },
    });
  }
  push("content_block_stop", { type: "content_block_stop", index: 1 });
  push("message_delta", {
    type: "message_delta",
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: 24000 },
  });
  push("message_stop", { type: "message_stop" });
  const text = parts.join("");
  return { chunks: chunked(text), bytes: text.length, events };
}

// ---------------------------------------------------------------------------------------------
// The cases

const STREAM_OPTIONS: TextDecodeOptions = { stream: true };

/** The floor: decode, split lines across chunks, JSON.parse every data payload but [DONE]. */
function floor(chunks: readonly Uint8Array[]): number {
  const decoder = new TextDecoder();
  let rest = "";
  let parsed = 0;
  for (const chunk of chunks) {
    const text = rest + decoder.decode(chunk, STREAM_OPTIONS);
    let start = 0;
    let end: number;
    while ((end = text.indexOf("\n", start)) !== -1) {
      if (text.startsWith("data: ", start)) {
        const payload = text.slice(start + 6, end);
        if (payload !== "[DONE]") {
          JSON.parse(payload);
          parsed++;
        }
      }
      start = end + 1;
    }
    rest = text.slice(start);
  }
  return parsed;
}

/**
 * The floor over a ReadableStream: the same work as {@linkcode floor}, fed by a reader, one read
 * per chunk, as a response body hands them out. What amber's client is to cost at most.
 */
async function floorStream(chunks: readonly Uint8Array[]): Promise<number> {
  const reader = body(chunks).getReader();
  const decoder = new TextDecoder();
  let rest = "";
  let parsed = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const text = rest + decoder.decode(value, STREAM_OPTIONS);
    let start = 0;
    let end: number;
    while ((end = text.indexOf("\n", start)) !== -1) {
      if (text.startsWith("data: ", start)) {
        const payload = text.slice(start + 6, end);
        if (payload !== "[DONE]") {
          JSON.parse(payload);
          parsed++;
        }
      }
      start = end + 1;
    }
    rest = text.slice(start);
  }
  return parsed;
}

/** amber's decode path: the SSE decoder feeding the dialect's decoder, as the client does. */
function amber(dialect: Dialect, chunks: readonly Uint8Array[]): number {
  let count = 0;
  const sink: StreamSink = () => {
    count++;
  };
  const decoder = dialect.decoder();
  const sse = new SseDecoder(
    (name, data) => decoder.event(name, data, sink),
    (line) => decoder.unframed?.(line, sink),
  );
  for (let i = 0; i < chunks.length; i++) sse.pushBytes(chunks[i]);
  sse.end();
  decoder.end(sink);
  return count;
}

/** A response body that hands out one chunk per read, as a socket would. */
function body(chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next < chunks.length) controller.enqueue(chunks[next++]);
      else controller.close();
    },
  }, { highWaterMark: 0 });
}

function sseResponse(chunks: readonly Uint8Array[]): Response {
  return new Response(body(chunks), { headers: { "content-type": "text/event-stream" } });
}

// amber's whole client (fetch, reader loop, idle watchdog, guarded sink) on the same bytes, with
// a `fetch` of its own answering from memory, as the AI SDK's providers get below.
async function amberClient(dialect: Dialect, chunks: readonly Uint8Array[]): Promise<number> {
  let count = 0;
  const client = new ProviderClient(dialect, { baseUrl: "http://127.0.0.1:1", apiKey: "x" }, {
    fetch: () => Promise.resolve(sseResponse(chunks)),
  });
  await client.stream({ model: "m", messages: [], tools: [] }, () => {
    count++;
  });
  return count;
}

const PROMPT = {
  prompt: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }],
};

async function drain(stream: ReadableStream<unknown>): Promise<number> {
  const reader = stream.getReader();
  let parts = 0;
  while (!(await reader.read()).done) parts++;
  return parts;
}

async function aiSdkOpenAI(chunks: readonly Uint8Array[]): Promise<number> {
  const provider = createOpenAI({
    apiKey: "x",
    fetch: () => Promise.resolve(sseResponse(chunks)),
  });
  const { stream } = await provider.chat("gpt-4o").doStream(PROMPT);
  return drain(stream);
}

async function aiSdkAnthropic(chunks: readonly Uint8Array[]): Promise<number> {
  const provider = createAnthropic({
    apiKey: "x",
    fetch: () => Promise.resolve(sseResponse(chunks)),
  });
  const { stream } = await provider.messages("claude-sonnet-4-5").doStream(PROMPT);
  return drain(stream);
}

// ---------------------------------------------------------------------------------------------
// Sanity: every path reads the whole stream the same way before anything is timed.

const openai = openaiStream();
const anthropic = anthropicStream();
const openaiD = openaiDialect();
const anthropicD = anthropicDialect();

function kinds(dialect: Dialect, chunks: readonly Uint8Array[]): Record<string, number> {
  const seen: Record<string, number> = {};
  const decoder = dialect.decoder();
  const sink = (e: StreamEvent): void => {
    seen[e.type] = (seen[e.type] ?? 0) + 1;
    if (e.type === "error") throw new Error(`decode error: ${e.message}`);
  };
  const sse = new SseDecoder(
    (n, d) => decoder.event(n, d, sink),
    (l) => decoder.unframed?.(l, sink),
  );
  for (const c of chunks) sse.pushBytes(c);
  sse.end();
  decoder.end(sink);
  return seen;
}

{
  const o = kinds(openaiD, openai.chunks);
  if (floor(openai.chunks) !== openai.events || o.finish !== 1 || o.toolCallEnd !== 2) {
    throw new Error(`openai stream misread: ${JSON.stringify(o)}`);
  }
  const a = kinds(anthropicD, anthropic.chunks);
  if (floor(anthropic.chunks) !== anthropic.events || a.finish !== 1 || a.toolCallEnd !== 1) {
    throw new Error(`anthropic stream misread: ${JSON.stringify(a)}`);
  }
  if ((await floorStream(openai.chunks)) !== openai.events) {
    throw new Error("the floor over a stream misread the openai stream");
  }
  if ((await amberClient(openaiD, openai.chunks)) !== amber(openaiD, openai.chunks)) {
    throw new Error("the client and the bare decoder disagree");
  }
  if (
    (await aiSdkOpenAI(openai.chunks)) < o.text || (await aiSdkAnthropic(anthropic.chunks)) < a.text
  ) {
    throw new Error("the AI SDK read fewer parts than there are text deltas");
  }
}

const mb = (n: number): string => (n / 1024 / 1024).toFixed(1);

Deno.bench({
  name: `floor: TextDecoder + line split + JSON.parse (openai, ${
    mb(openai.bytes)
  } MB, ${openai.events} events)`,
  group: "decode openai",
  baseline: true,
  fn: () => {
    floor(openai.chunks);
  },
});
Deno.bench({
  name: "amber: SseDecoder + openai dialect",
  group: "decode openai",
  fn: () => {
    amber(openaiD, openai.chunks);
  },
});
Deno.bench({
  name: "floor-stream: the floor fed from a ReadableStream (openai)",
  group: "decode openai",
  fn: async () => {
    await floorStream(openai.chunks);
  },
});
Deno.bench({
  name: "amber: ProviderClient.stream over a ReadableStream (openai)",
  group: "decode openai",
  fn: async () => {
    await amberClient(openaiD, openai.chunks);
  },
});
Deno.bench({
  name: "AI SDK: @ai-sdk/openai chat doStream",
  group: "decode openai",
  fn: async () => {
    await aiSdkOpenAI(openai.chunks);
  },
});

Deno.bench({
  name: `floor: TextDecoder + line split + JSON.parse (anthropic, ${
    mb(anthropic.bytes)
  } MB, ${anthropic.events} events)`,
  group: "decode anthropic",
  baseline: true,
  fn: () => {
    floor(anthropic.chunks);
  },
});
Deno.bench({
  name: "amber: SseDecoder + anthropic dialect",
  group: "decode anthropic",
  fn: () => {
    amber(anthropicD, anthropic.chunks);
  },
});
Deno.bench({
  name: "floor-stream: the floor fed from a ReadableStream (anthropic)",
  group: "decode anthropic",
  fn: async () => {
    await floorStream(anthropic.chunks);
  },
});
Deno.bench({
  name: "amber: ProviderClient.stream over a ReadableStream (anthropic)",
  group: "decode anthropic",
  fn: async () => {
    await amberClient(anthropicD, anthropic.chunks);
  },
});
Deno.bench({
  name: "AI SDK: @ai-sdk/anthropic messages doStream",
  group: "decode anthropic",
  fn: async () => {
    await aiSdkAnthropic(anthropic.chunks);
  },
});

// `deno run -A bench/decode_bench.ts --alternate [--cases=floor,floor-stream,...] [rounds]`: the
// floor, floor-stream, decoder and client cases (no AI SDK) alternating in this one process, the
// order reversing every round, each timed in CPU time (user + system), which a loaded machine moves
// less than wall time; prints medians and the ratios to the floor and to the floor-stream.
if (Deno.args.includes("--alternate")) {
  const args = benchArgs(16);
  const protocols = [
    { name: "openai", dialect: openaiD, chunks: openai.chunks },
    { name: "anthropic", dialect: anthropicD, chunks: anthropic.chunks },
  ];
  const kinds: Record<string, (d: Dialect, c: readonly Uint8Array[]) => unknown> = {
    "floor": (_d, c) => floor(c),
    "floor-stream": (_d, c) => floorStream(c),
    "decoder": (d, c) => amber(d, c),
    "client": (d, c) => amberClient(d, c),
  };
  const cases = protocols.flatMap((p) =>
    Object.keys(kinds).filter((k) => args.wanted(k)).map((kind) => ({ ...p, kind }))
  );
  const times = new Map<string, number[]>();
  for (let round = 0; round < args.rounds + 2; round++) {
    for (const { name, dialect, chunks, kind } of inOrder(round, cases)) {
      const start = process.cpuUsage();
      await kinds[kind](dialect, chunks);
      const used = process.cpuUsage(start);
      // The first two rounds warm the JIT up.
      if (round >= 2) {
        const key = `${name} ${kind}`;
        times.set(key, [...(times.get(key) ?? []), (used.user + used.system) / 1000]);
      }
    }
  }
  for (const { name, kind } of cases) {
    const of = (k: string): number => median(times.get(`${name} ${k}`) ?? [NaN]);
    const m = of(kind);
    console.log(
      `${`${name} ${kind}`.padEnd(24)} ${m.toFixed(1).padStart(7)} ms CPU  ${
        (m / of("floor")).toFixed(2)
      }x floor  ${(m / of("floor-stream")).toFixed(2)}x floor-stream`,
    );
  }
}
