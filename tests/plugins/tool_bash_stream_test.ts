// bash streams its output while the command runs (`ToolCallContext.output`, a `toolOutput`
// event in a run): in batches, whole characters, secrets redacted even when split over two
// reads, the output so far kept after a cancel, and the result exactly what it was.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { ToolResult } from "@amber/core";
import { runAgent, type RunEvent } from "@amber/core/kernel";
import { createToolBashPlugin } from "@amber/plugins/tool_bash";
import {
  LIVE_OUTPUT_INTERVAL_MS,
  LiveOutput,
  MAX_LIVE_BATCH_CHARS,
  secretPrefixAtEnd,
} from "../../plugins/tool_bash/_live_output.ts";
import { makeRuntime } from "../_helpers.ts";
import { runOptions, ScriptedModel } from "../core/_kernel_script.ts";

async function bashHarness() {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-bash-stream-" }));
  const { runtime, registries } = makeRuntime({ workspace: { root }, allOn: true });
  runtime.register(createToolBashPlugin());
  await runtime.start();
  return {
    runtime,
    /** Runs `command`, recording each streamed chunk with the time it came. */
    async bash(
      command: string,
      options: { signal?: AbortSignal; onChunk?: (chunk: string) => void } = {},
    ): Promise<{ result: ToolResult; chunks: string[]; times: number[] }> {
      const chunks: string[] = [];
      const times: number[] = [];
      const result = await registries.tool.execute("bash", { command }, {
        signal: options.signal ?? new AbortController().signal,
        output: (chunk) => {
          chunks.push(chunk);
          times.push(performance.now());
          options.onChunk?.(chunk);
        },
      });
      return { result, chunks, times };
    },
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("bash streams lines printed over time in several chunks; the result is unchanged", async () => {
  await using h = await bashHarness();
  const { result, chunks } = await h.bash(
    "for i in 1 2 3 4; do echo line $i; sleep 0.25; done; echo err >&2",
  );
  ok(chunks.length >= 3, `expected several chunks, got ${JSON.stringify(chunks)}`);
  strictEqual(chunks.join(""), "line 1\nline 2\nline 3\nline 4\nerr\n");
  strictEqual(result.ok, true);
  strictEqual(result.output, "line 1\nline 2\nline 3\nline 4\nerr\n[exit code 0]");
  deepStrictEqual(result.data, { exitCode: 0 });
});

Deno.test("bash streams nothing for a silent command, and works without a listener", async () => {
  await using h = await bashHarness();
  const silent = await h.bash("true");
  deepStrictEqual(silent.chunks, []);
  strictEqual(silent.result.output, "(no output)\n[exit code 0]");
});

Deno.test("bash keeps a character split across two reads whole", async () => {
  await using h = await bashHarness();
  // The euro sign's three bytes, written in two writes with a pause between them.
  const { result, chunks } = await h.bash(
    "printf 'price: \\xe2\\x82'; sleep 0.3; printf '\\xac 5\\n'",
  );
  strictEqual(chunks.join(""), "price: € 5\n");
  ok(chunks.every((chunk) => !chunk.includes("\uFFFD")), JSON.stringify(chunks));
  strictEqual(result.output, "price: € 5\n[exit code 0]");
});

Deno.test("bash coalesces a chatty command: at most one chunk per interval", async () => {
  await using h = await bashHarness();
  const { result, chunks, times } = await h.bash(
    "for i in $(seq 1 200); do echo $i; sleep 0.004; done",
  );
  strictEqual(chunks.join(""), result.output.replace("[exit code 0]", ""));
  // 200 lines over about a second or more: one chunk per line would be 200 events.
  ok(chunks.length < 100, `${chunks.length} chunks`);
  // Timers may fire late on a loaded machine, never early (a little slack for the clock).
  for (let i = 1; i < times.length - 1; i++) {
    ok(times[i] - times[i - 1] >= LIVE_OUTPUT_INTERVAL_MS - 5, `gap ${times[i] - times[i - 1]}`);
  }
});

Deno.test("bash streams a flood by its end, saying how much it left out", async () => {
  await using h = await bashHarness();
  const { result, chunks } = await h.bash("head -c 200000 /dev/zero | tr '\\0' a; echo END");
  ok(chunks.length >= 1);
  for (const chunk of chunks) {
    ok(chunk.length <= MAX_LIVE_BATCH_CHARS + 64, `a chunk of ${chunk.length}`);
  }
  const all = chunks.join("");
  match(all, /\[\d+ characters of output not shown\]\n/);
  ok(all.endsWith("aEND\n"));
  match(result.output, /^\[output cut: 200004 chars, showing the last 30000\]\n/);
});

Deno.test("bash redacts a secret in its stream, also one split over two reads", async () => {
  Deno.env.set("AMBER_STREAM_TEST_API_KEY", "sk-stream-0123456789");
  try {
    await using h = await bashHarness();
    const { result, chunks } = await h.bash(
      "printf 'key sk-stream-01'; sleep 0.3; printf '23456789 done\\n'",
    );
    const all = chunks.join("");
    strictEqual(all, "key [redacted] done\n");
    ok(chunks.every((chunk) => !chunk.includes("0123")), JSON.stringify(chunks));
    strictEqual(result.output, "key [redacted] done\n[exit code 0]");
  } finally {
    Deno.env.delete("AMBER_STREAM_TEST_API_KEY");
  }
});

Deno.test("a cancelled bash keeps the output so far in its result, marked cancelled", async () => {
  await using h = await bashHarness();
  const controller = new AbortController();
  const { result, chunks } = await h.bash("echo started; echo more; sleep 100", {
    signal: controller.signal,
    onChunk: (chunk) => {
      if (chunk.includes("more")) controller.abort();
    },
  });
  strictEqual(chunks.join(""), "started\nmore\n");
  strictEqual(result.ok, false);
  strictEqual(result.output, "started\nmore\n");
  strictEqual(result.error, "cancelled: the command was stopped. Output so far:\nstarted\nmore\n");
});

Deno.test("in a run, bash's output arrives as toolOutput events before its toolEnd", async () => {
  await using h = await bashHarness();
  const events: RunEvent[] = [];
  const model = new ScriptedModel([
    { calls: [{ name: "bash", args: { command: "echo one; sleep 0.3; echo two" } }] },
    { text: "done" },
  ]);
  await runAgent({ ...runOptions(h.runtime, model), onEvent: (event) => events.push(event) });
  const seen = events.flatMap((event) =>
    event.type === "toolStart" || event.type === "toolEnd"
      ? [event.type]
      : event.type === "toolOutput"
      ? [`toolOutput ${JSON.stringify(event.chunk)} step ${event.step}`]
      : []
  );
  deepStrictEqual(seen, [
    "toolStart",
    'toolOutput "one\\n" step 0',
    'toolOutput "two\\n" step 0',
    "toolEnd",
  ]);
});

Deno.test("LiveOutput sends at most one batch per interval and the rest on close", async () => {
  const sent: string[] = [];
  const live = new LiveOutput((chunk) => sent.push(chunk), [], 40);
  live.push("a");
  live.push("b");
  deepStrictEqual(sent, [], "nothing is sent at once");
  await new Promise((resolve) => setTimeout(resolve, 80));
  deepStrictEqual(sent, ["ab"]);
  live.push("c");
  live.close();
  live.push("late");
  await new Promise((resolve) => setTimeout(resolve, 80));
  deepStrictEqual(sent, ["ab", "c"]);
});

Deno.test("LiveOutput stops sending when its listener throws", () => {
  let calls = 0;
  const live = new LiveOutput(() => {
    calls++;
    throw new Error("the front end broke");
  }, []);
  live.push("x");
  live.close();
  live.push("y");
  live.close();
  strictEqual(calls, 1);
});

Deno.test("secretPrefixAtEnd holds back the longest possible start of a secret", () => {
  strictEqual(secretPrefixAtEnd("", ["abc"]), 0);
  strictEqual(secretPrefixAtEnd("xxab", ["abc"]), 2);
  strictEqual(secretPrefixAtEnd("xxa", ["abc", "aaaa"]), 1);
  strictEqual(secretPrefixAtEnd("xaaa", ["abc", "aaaa"]), 3);
  strictEqual(secretPrefixAtEnd("abc", ["abc"]), 0, "a whole secret is redacted, not held");
  strictEqual(secretPrefixAtEnd("ab", ["abcdef", "b"]), 2);
});
