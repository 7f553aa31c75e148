// A long session's per-step cost and memory, per dialect: runAgent for 1,000 steps (one tool
// call each; the tool returns ~100 bytes, so the request body grows to ~300 KB) against a model
// port that does the dialect's real work in this process: the request body built with the
// dialect's chatRequest, then canned SSE bytes for the step (prepared before the run, from the
// fake provider's encoder for that protocol) through the SSE decoder into the dialect's decoder.
// No network, no server: what grows with the history is the kernel's and the dialect's own work.
//
// A step is the time from one model call to the next (kernel, request, decode, tool). Printed per
// dialect: the median step over steps 10-30 and over the last 20 tool-call steps, their ratio,
// the median time in the dialect's chatRequest over the same windows, the last request body's
// size, and the heap (after a full GC) and RSS at the end. Each session runs in a fresh process,
// after a 200-step session in that process that warms the JIT up (else the early steps would
// measure compilation, not a short history); sessions alternate over dialects and checkouts, the
// order reversing every round, and the medians over rounds are printed.
//
// deno run -A bench/long_session_bench.ts [--cases=openai,openai_responses,anthropic,gemini]
//   [--steps=1000] [rounds] [checkout...]
//
// With checkouts (`5 /tmp/base14 .`) every session runs against each of them in the same rounds
// (this file, resolving @amber/* through that checkout's deno.json), one row per checkout: a
// before/after comparison taken in one run.

import { benchArgs, inOrder, median } from "./_cases.ts";
import { fileURLToPath } from "node:url";

/** The steps of the session run (and thrown away) before the measured one. */
const WARM_UP_STEPS = 200;
const DIALECTS = ["openai", "openai_responses", "anthropic", "gemini"] as const;
type DialectKey = typeof DIALECTS[number];

/** What one session reports from its process. */
interface SessionFigures {
  /** Milliseconds per step, from one model call to the next. */
  readonly stepMs: number[];
  /** Milliseconds per step spent in the dialect's chatRequest. */
  readonly requestMs: number[];
  /** Milliseconds per step spent decoding the canned stream. */
  readonly decodeMs: number[];
  /** The request body's length per step. */
  readonly bodyChars: number[];
  /** Heap used after a full GC at the end, bytes. */
  readonly heapBytes: number;
  /** Resident set at the end, bytes. */
  readonly rssBytes: number;
}

const HERE = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const childOf = Deno.args.find((arg) => arg.startsWith("--child="))?.slice("--child=".length);

if (childOf !== undefined) {
  const steps = Number(Deno.args.find((a) => a.startsWith("--steps="))?.slice(8) ?? 1000);
  console.log(JSON.stringify(await session(childOf as DialectKey, steps)));
  Deno.exit(0);
}

const args = benchArgs(3);
const steps = Number(args.option("steps") ?? 1000);
const dirs = Deno.args.filter((arg) => !arg.startsWith("--")).slice(1);
const checkouts = dirs.length > 0 ? dirs.map((dir) => Deno.realPathSync(dir)) : [HERE];
const dialects = DIALECTS.filter((key) => args.wanted(key));
const early: [number, number] = [10, 30];
// The last step (the answer, with no tool call) is left out of the late window.
const late: [number, number] = [steps - 21, steps - 1];

interface Sample {
  early: number;
  late: number;
  earlyRequest: number;
  lateRequest: number;
  heap: number;
  rss: number;
  body: number;
}
// The sessions and the table, in here so that `deno task bench` (which finds this file too, without
// the permission to start a process) can be told how to run it instead.
async function main(): Promise<void> {
  const samples = new Map<string, Sample[]>();
  for (let round = 0; round < args.rounds; round++) {
    for (const checkout of inOrder(round, checkouts)) {
      for (const dialect of inOrder(round, dialects)) {
        const figures = await inProcess(checkout, dialect);
        const window = (xs: number[], [from, to]: [number, number]) => median(xs.slice(from, to));
        const sample: Sample = {
          early: window(figures.stepMs, early),
          late: window(figures.stepMs, late),
          earlyRequest: window(figures.requestMs, early),
          lateRequest: window(figures.requestMs, late),
          heap: figures.heapBytes,
          rss: figures.rssBytes,
          body: figures.bodyChars.at(-1) ?? 0,
        };
        const key = `${checkout}\0${dialect}`;
        samples.set(key, [...(samples.get(key) ?? []), sample]);
        console.error(
          `round ${round + 1}: ${dialect} (${checkout}): step ${ms(sample.early)} -> ${
            ms(sample.late)
          }`,
        );
      }
    }
  }

  const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  const kb = (chars: number): string => `${Math.round(chars / 1024)} KB`;
  function ms(x: number): string {
    return `${x.toFixed(3)} ms`;
  }
  console.log(
    `${steps} steps after a ${WARM_UP_STEPS}-step warm-up session, medians of ${args.rounds}` +
      ` rounds. step: one model call to the next; req.: the dialect's chatRequest;` +
      ` early: steps ${early[0]}-${early[1]}; late: steps ${late[0]}-${late[1]}`,
  );
  console.log(
    [
      "dialect".padEnd(17),
      "step early".padStart(10),
      "step late".padStart(10),
      "ratio".padStart(6),
      "req. early".padStart(11),
      "req. late".padStart(12),
      "body".padStart(7),
      "heap".padStart(9),
      "rss".padStart(9),
      "  checkout",
    ].join(" "),
  );
  for (const dialect of dialects) {
    for (const checkout of checkouts) {
      const all = samples.get(`${checkout}\0${dialect}`) ?? [];
      if (all.length === 0) continue;
      const of = (pick: (s: Sample) => number): number => median(all.map(pick));
      const e = of((s) => s.early);
      const l = of((s) => s.late);
      console.log(
        [
          dialect.padEnd(17),
          ms(e).padStart(10),
          ms(l).padStart(10),
          `${(l / e).toFixed(2)}x`.padStart(6),
          ms(of((s) => s.earlyRequest)).padStart(11),
          ms(of((s) => s.lateRequest)).padStart(12),
          kb(of((s) => s.body)).padStart(7),
          mb(of((s) => s.heap)).padStart(9),
          mb(of((s) => s.rss)).padStart(9),
          `  ${checkout}`,
        ].join(" "),
      );
    }
  }
}

if (Deno.permissions.querySync({ name: "run", command: Deno.execPath() }).state === "granted") {
  await main();
} else {
  console.log(
    "bench/long_session_bench.ts runs each session in a process: deno run -A bench/long_session_bench.ts",
  );
}

/** One session in a fresh process, resolving @amber/* through `checkout`'s configuration. */
async function inProcess(checkout: string, dialect: DialectKey): Promise<SessionFigures> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-check",
      "--v8-flags=--expose-gc",
      `--config=${checkout}/deno.json`,
      fileURLToPath(import.meta.url),
      `--child=${dialect}`,
      `--steps=${steps}`,
    ],
    cwd: checkout,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    throw new Error(
      `the ${dialect} session failed in ${checkout}: ${new TextDecoder().decode(output.stderr)}`,
    );
  }
  return JSON.parse(text.slice(text.lastIndexOf("\n{") + 1)) as SessionFigures;
}

// ---------------------------------------------------------------------------------------------
// One session, in the child process.

async function session(key: DialectKey, steps: number): Promise<SessionFigures> {
  // Imported here, so that the parent (which only spawns and prints) loads none of amber.
  const { runAgent } = await import("@amber/core/kernel");
  const { SseDecoder } = await import("@amber/providers/sse");
  const testing = await import("@amber/providers/testing");
  const { any, PHASE_HOOK_POINTS, PluginRuntime } = await import("@amber/core");
  const { createRegistries } = await import("@amber/registries");
  type Plugin = import("@amber/core").Plugin;
  type ScriptedTurn = import("@amber/providers/testing").ScriptedTurn;

  // Only the dialect measured is loaded.
  const dialect = key === "openai"
    ? (await import("@amber/providers/openai")).openaiDialect()
    : key === "openai_responses"
    ? (await import("@amber/providers/openai-responses")).openaiResponsesDialect()
    : key === "anthropic"
    ? (await import("@amber/providers/anthropic")).anthropicDialect()
    : (await import("@amber/providers/gemini")).geminiDialect();
  const encoder = {
    openai: testing.openaiEncoder,
    openai_responses: testing.openaiResponsesEncoder,
    anthropic: testing.anthropicEncoder,
    gemini: testing.geminiEncoder,
  }[key];

  // A tool whose output is ~100 bytes of file-like text, different every step: with the call,
  // ~300 bytes of history a step (the kernel benchmark's echo makes ~210).
  const notes = (path: string): string =>
    `// ${path}\nexport const config = { retries: 3, mode: "strict" };\n`;
  const plugin: Plugin = {
    id: "notes",
    version: "1.0.0",
    name: "Notes",
    // Everything admitted, spelled out here rather than taken from tests/_helpers.ts: a relative
    // import would load this checkout's helpers over another checkout's core.
    bound: {
      tools: any(),
      commands: any(),
      panels: any(),
      segments: any(),
      prompts: any(),
      flavors: any(),
      presets: any(),
      wallets: any(),
      allowances: any(),
      toolGates: any(),
      runEndGuards: any(),
      compactors: any(),
      actionKinds: any(),
      stateKeys: any(),
      phaseHooks: PHASE_HOOK_POINTS,
    },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [{
      // A system prompt as every real session has: its message is built fresh for each request,
      // ahead of the committed history.
      kind: "prompt",
      name: "rules",
      priority: 100,
      render: () => "You are a coding agent. Read files with read_notes; answer briefly.",
    }, {
      kind: "tool",
      name: "read_notes",
      tools: [{
        name: "read_notes",
        description: "Reads a file's notes.",
        parameters: {
          type: "object",
          properties: { path: { type: "string" } },
          required: ["path"],
          additionalProperties: false,
        },
        readOnly: true,
        execute: (args) => ({ ok: true, output: notes((args as { path: string }).path) }),
      }],
    }],
  };
  const runtime = new PluginRuntime({ registries: createRegistries() });
  runtime.register(plugin);
  await runtime.start();

  // The canned stream of every step, as bytes in 512-byte chunks, made before the clock starts.
  const cannedStreams = (count: number): Uint8Array[][] => {
    const bytes = new TextEncoder();
    const streams: Uint8Array[][] = [];
    for (let i = 0; i < count; i++) {
      const turn: ScriptedTurn = i < count - 1
        ? {
          toolCalls: [{
            id: `call_${i}`,
            name: "read_notes",
            arguments: { path: `src/module_${i % 97}/file_${i}.ts` },
          }],
          usage: { promptTokens: 1_000 + 60 * i, completionTokens: 24 },
        }
        : { text: "All files read.", usage: { promptTokens: 61_000, completionTokens: 5 } };
      const whole = bytes.encode(encoder.frames(turn, "bench-model").join(""));
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < whole.length; at += 512) chunks.push(whole.subarray(at, at + 512));
      streams.push(chunks);
    }
    return streams;
  };

  const settings = { baseUrl: "http://127.0.0.1:1", apiKey: "bench-key" };
  // A short session first, so that the measured one starts on optimized code: its early steps
  // then show the cost of a short history, not the JIT's warm-up.
  await once(WARM_UP_STEPS);
  // Its garbage collected now, not during the measured session's early steps.
  (globalThis as { gc?: () => void }).gc?.();
  return await once(steps);

  async function once(steps: number): Promise<SessionFigures> {
    const streams = cannedStreams(steps);
    const stepMs: number[] = [];
    const requestMs: number[] = [];
    const decodeMs: number[] = [];
    const bodyChars: number[] = [];
    let last = 0;
    let step = 0;
    const model = {
      stream(
        request: Parameters<typeof dialect.chatRequest>[1],
        sink: (event: import("@amber/core").StreamEvent) => void,
      ) {
        const started = performance.now();
        if (step > 0) stepMs.push(started - last);
        last = started;
        const spec = dialect.chatRequest(settings, request);
        const built = performance.now();
        bodyChars.push(spec.body?.length ?? 0);
        const decoder = dialect.decoder();
        const sse = new SseDecoder(
          (name, data) => decoder.event(name, data, sink),
          (line) => decoder.unframed?.(line, sink),
        );
        for (const chunk of streams[step]) sse.pushBytes(chunk);
        sse.end();
        decoder.end(sink);
        requestMs.push(built - started);
        decodeMs.push(performance.now() - built);
        step++;
        return Promise.resolve({ status: 200, headers: new Headers(), cancelled: false });
      },
    };
    const result = await runAgent({
      runtime,
      model,
      modelName: "bench-model",
      prompt: "Read every file of the project's modules, one at a time.",
      approval: "auto",
      maxSteps: steps + 1,
    });
    if (result.steps !== steps || result.cause.kind !== "completed") {
      throw new Error(`the ${key} session ran ${result.steps} steps: ${result.cause.kind}`);
    }
    // The last step has no next call to end it: its figure is the run's end.
    stepMs.push(performance.now() - last);
    (globalThis as { gc?: () => void }).gc?.();
    const memory = Deno.memoryUsage();
    return {
      stepMs,
      requestMs,
      decodeMs,
      bodyChars,
      heapBytes: memory.heapUsed,
      rssBytes: memory.rss,
    };
  }
}
