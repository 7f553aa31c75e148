// The TUI's frame: composition with 40 status segments and a 2,000-line transcript, diffed
// against the last frame, written into an in-memory sink instead of a terminal. Reports the
// time per frame (deno bench) and, printed first, the bytes written per streamed token next to
// what a full repaint of the same frame costs.
// Run: deno bench --allow-read --allow-write --allow-env --allow-net=127.0.0.1 bench/tui_bench.ts

import { buildTui } from "../cli/commands/tui.ts";
import { openHost } from "../cli/host.ts";
import type { Terminal } from "../cli/tui/terminal.ts";
import { installSegments } from "./_status_segments.ts";

const COLUMNS = 120;
const ROWS = 40;

class Sink implements Terminal {
  bytes = 0;
  #encoder = new TextEncoder();
  size(): { columns: number; rows: number } {
    return { columns: COLUMNS, rows: ROWS };
  }
  write(text: string): void {
    this.bytes += this.#encoder.encode(text).length;
  }
  start(): void {}
  restore(): void {}
}

const configDir = await Deno.makeTempDir({ prefix: "amber-tui-bench-" });
const sink = new Sink();
const tui = await buildTui({
  openHost: (extras) => openHost({ ...extras, configDir, workspace: configDir, thirdParty: false }),
  terminal: sink,
  overrides: { provider: "openai", model: "bench-model", baseUrl: "http://127.0.0.1:9/v1" },
  env: () => "sk-bench-key",
});
const { app, host } = tui;

// 40 segments in all: the core's, the TUI's, and plugins' up to 40.
installSegments(host.registries.status, {
  from: host.registries.status.entries().length,
  owner: "bench",
  priorityModulo: 1000,
});
const segments = host.registries.status.entries().length;

// A 2,000-line transcript: prompts, answers with lists and code, tool calls.
const transcript = app.transcript;
for (let turn = 0; transcript.totalLines(COLUMNS) < 2000; turn++) {
  transcript.addUser(`question number ${turn}: what does the function on line ${turn} do?`);
  const call = { id: `c${turn}`, name: "read", arguments: "{}" };
  transcript.toolStart({ step: 0, call }, { verb: "reading", summary: `src/file_${turn}.ts` });
  transcript.toolEnd(
    { step: 0, call },
    { ok: true, output: "export function f() {}\n".repeat(20) },
    3,
  );
  transcript.appendText(
    `It does **several** things:\n\n- parses the input\n- checks the \`bounds\`\n\n` +
      "```ts\nexport function f(x: number): number {\n  return x * 2;\n}\n```\n" +
      "That is all it does, and it is called from two places in the code base.",
  );
  transcript.endStream();
}
const lines = transcript.totalLines(COLUMNS);

function frame(): void {
  app.compose();
  sink.write(app.screen.render());
}

// An answer as a model streams it: words, some line breaks, a list, a code block.
const answerTokens: string[] = [];
for (let i = 0; i < 400; i++) {
  answerTokens.push(
    i % 40 === 39 ? "\n\n- " : i % 97 === 96 ? "\n```ts\nconst x = 1;\n```\n" : `word${i} `,
  );
}

function streamBytes(tokensPerFrame: number, tokens: number): number {
  transcript.addUser("stream an answer");
  frame();
  const before = sink.bytes;
  for (let i = 0; i < tokens; i++) {
    transcript.appendText(answerTokens[i % answerTokens.length]);
    if ((i + 1) % tokensPerFrame === 0) frame();
  }
  frame();
  transcript.endStream();
  return (sink.bytes - before) / tokens;
}

frame();
const onePerFrame = streamBytes(1, 2000);
const fourPerFrame = streamBytes(4, 2000);
app.screen.invalidate();
const before = sink.bytes;
frame();
const repaint = sink.bytes - before;
console.log(
  `tui frame at ${COLUMNS}x${ROWS}, ${segments} status segments, ${lines}-line transcript: ` +
    `${onePerFrame.toFixed(1)} bytes per streamed token at one token a frame, ` +
    `${fourPerFrame.toFixed(1)} at four tokens a frame; a full repaint is ${repaint} bytes`,
);

Deno.bench({
  name: "tui frame: compose + diff, nothing changed",
  group: "tui",
  baseline: true,
  fn() {
    frame();
  },
});

let streamed = 0;
Deno.bench({
  name: "tui frame: one streamed token, compose + diff",
  group: "tui",
  fn() {
    // A new answer every 500 tokens, as turns end: an answer does not grow forever.
    if (streamed++ % 500 === 0) {
      transcript.endStream();
      transcript.addUser("next question");
    }
    transcript.appendText(answerTokens[streamed % answerTokens.length]);
    frame();
  },
});

Deno.bench({
  name: "tui frame: full repaint (what a renderer without a diff writes)",
  group: "tui",
  fn() {
    app.screen.invalidate();
    frame();
  },
});

Deno.bench({
  name: "status bar compose alone (40 segments)",
  group: "tui",
  fn() {
    host.registries.status.compose(COLUMNS, app.snapshot());
  },
});

globalThis.addEventListener("unload", () => {
  tui.close();
  Deno.removeSync(configDir, { recursive: true });
});
