// Issue 15's kernel contracts: every tool event names its step (call ids repeat across replies),
// a tool's streamed output is a redacted `toolOutput` event while it runs, and a tool's preview
// of a file change reaches the approval question (checked, redacted, never fatal).

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { FileChange, Tool } from "@amber/core";
import { type ApprovalRequest, runAgent, type RunEvent } from "@amber/core/kernel";
import { runOptions, ScriptedModel, startRuntime } from "./_kernel_script.ts";

Deno.test("tool events carry the step whose reply asked for the call, denied calls too", async () => {
  const echo: Tool = {
    name: "echo",
    description: "Echoes.",
    parameters: { type: "object" },
    execute: () => ({ ok: true, output: "echoed" }),
  };
  const { runtime } = await startRuntime({ e: [{ kind: "tool", name: "t", tools: [echo] }] });
  const events: RunEvent[] = [];
  const model = new ScriptedModel([
    { calls: [{ name: "echo" }] },
    { calls: [{ name: "echo" }, { name: "missing" }] },
    { text: "done" },
  ]);
  await runAgent({ ...runOptions(runtime, model), onEvent: (event) => events.push(event) });
  const tools = events.flatMap((e) =>
    e.type === "toolStart" || e.type === "toolEnd" ? [`${e.type} ${e.call.name} ${e.step}`] : []
  );
  deepStrictEqual(tools, [
    "toolStart echo 0",
    "toolEnd echo 0",
    "toolStart echo 1",
    "toolEnd echo 1",
    "toolEnd missing 1",
  ]);
  await runtime.stop();
});

Deno.test("streamed output is a redacted toolOutput event while the call runs, not after", async () => {
  let late: ((chunk: string) => void) | undefined;
  const shell: Tool = {
    name: "sh",
    description: "Runs.",
    parameters: { type: "object" },
    execute: (_, context) => {
      context.output?.("line 1\n");
      context.output?.("token=SECRET-123\n");
      context.output?.("");
      late = context.output;
      return { ok: true, output: "line 1\ntoken=SECRET-123\n" };
    },
  };
  const { runtime } = await startRuntime({ s: [{ kind: "tool", name: "t", tools: [shell] }] });
  const events: RunEvent[] = [];
  const model = new ScriptedModel([{ calls: [{ name: "sh" }] }, { text: "done" }]);
  await runAgent({
    ...runOptions(runtime, model),
    redact: (text) => text.replaceAll("SECRET-123", "[redacted]"),
    onEvent: (event) => events.push(event),
  });
  late?.("after the end\n");
  const seen = events.flatMap((e) =>
    e.type === "toolOutput"
      ? [`output ${e.step} ${e.call.name} ${JSON.stringify(e.chunk)}`]
      : e.type === "toolStart" || e.type === "toolEnd"
      ? [e.type]
      : []
  );
  deepStrictEqual(seen, [
    "toolStart",
    'output 0 sh "line 1\\n"',
    'output 0 sh "token=[redacted]\\n"',
    "toolEnd",
  ]);
  await runtime.stop();
});

Deno.test("a tool's preview reaches the approval question, redacted; a bad one shows none", async () => {
  const change: FileChange = { path: "a.txt", before: "old SECRET-123\n", after: "new\n" };
  const previewed = (name: string, preview: Tool["preview"]): Tool => ({
    name,
    description: name,
    parameters: { type: "object" },
    requiresApproval: () => true,
    preview,
    execute: () => ({ ok: true, output: `${name} ran`, change }),
  });
  const { runtime, diagnostics } = await startRuntime({
    p: [{
      kind: "tool",
      name: "t",
      tools: [
        previewed("good", () => Promise.resolve(change)),
        previewed("garbage", () => ({ path: "a.txt", before: 1 }) as unknown as FileChange),
        previewed("throws", () => {
          throw new Error("cannot read");
        }),
        previewed("none", () => undefined),
      ],
    }],
  });
  const asked: ApprovalRequest[] = [];
  const events: RunEvent[] = [];
  const model = new ScriptedModel([
    { calls: [{ name: "good" }, { name: "garbage" }, { name: "throws" }, { name: "none" }] },
    { text: "done" },
  ]);
  await runAgent({
    ...runOptions(runtime, model),
    approval: "ask",
    redact: (text) => text.replaceAll("SECRET-123", "[redacted]"),
    ask: (request) => (asked.push(request), Promise.resolve("once")),
    onEvent: (event) => events.push(event),
  });
  deepStrictEqual(asked.map((a) => [a.call.name, a.change]), [
    ["good", { path: "a.txt", before: "old [redacted]\n", after: "new\n" }],
    ["garbage", undefined],
    ["throws", undefined],
    ["none", undefined],
  ]);
  ok(diagnostics.some((d) => d.includes("preview of 'garbage'")), diagnostics.join("\n"));
  ok(diagnostics.some((d) => d.includes("cannot read")), diagnostics.join("\n"));
  // The result's change is redacted too, on its way to the events.
  const end = events.find((e) => e.type === "toolEnd" && e.call.name === "good");
  strictEqual(end?.type === "toolEnd" && end.result.change?.before, "old [redacted]\n");
  await runtime.stop();
});

Deno.test("no preview is asked for when no question is: auto, always, deny", async () => {
  let previews = 0;
  const tool: Tool = {
    name: "w",
    description: "w",
    parameters: { type: "object" },
    requiresApproval: () => true,
    preview: () => (previews++, { path: "a", before: "", after: "x" }),
    execute: () => ({ ok: true, output: "ok" }),
  };
  const { runtime } = await startRuntime({ w: [{ kind: "tool", name: "t", tools: [tool] }] });
  for (const approval of ["auto", "deny"] as const) {
    const model = new ScriptedModel([{ calls: [{ name: "w" }] }, { text: "done" }]);
    await runAgent({ ...runOptions(runtime, model), approval });
  }
  strictEqual(previews, 0);
  const model = new ScriptedModel([{ calls: [{ name: "w" }, { name: "w" }] }, { text: "done" }]);
  await runAgent({
    ...runOptions(runtime, model),
    approval: "ask",
    ask: () => Promise.resolve("always"),
  });
  strictEqual(previews, 1, "the second call was allowed by the first answer: no question");
  await runtime.stop();
});

Deno.test("an in-process tool flooding output is cut at the budget with one note", async () => {
  const flood: Tool = {
    name: "flood",
    description: "Floods.",
    parameters: { type: "object" },
    execute: (_, context) => {
      const line = "x".repeat(1023) + "\n";
      for (let i = 0; i < 4096; i++) context.output?.(line);
      return { ok: true, output: "done" };
    },
  };
  const { runtime } = await startRuntime({ f: [{ kind: "tool", name: "t", tools: [flood] }] });
  const chunks: string[] = [];
  const model = new ScriptedModel([{ calls: [{ name: "flood" }] }, { text: "done" }]);
  await runAgent({
    ...runOptions(runtime, model),
    onEvent: (event) => {
      if (event.type === "toolOutput") chunks.push(event.chunk);
    },
  });
  const kept = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  ok(kept <= 1_048_576 + 200, `${kept} characters forwarded of 4 MB`);
  ok(kept >= 512 * 1024, "everything up to the budget is forwarded");
  ok(chunks.at(-1)?.includes("streamed too much output"), chunks.at(-1));
  await runtime.stop();
});
