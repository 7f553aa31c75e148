// Malformed values in the run are contained (issue 11): a dialect's decoder() or its
// allowanceFromHeaders throwing, a model port that throws, a host's response reader that throws.
// The step ends with a clear error naming the dialect, nothing crashes, and what was committed
// stays; the user's prompt is on disk before the first model call; tool results pass through the
// run's `redact` before the model, the events and the transcript see them.

import { deepStrictEqual, match, ok, strictEqual, throws } from "node:assert/strict";
import type { Dialect } from "@amber/core";
import { type EndCause, runAgent, type RunEvent, SessionFile } from "@amber/core/kernel";
import { ProviderClient, ProviderError } from "@amber/providers";
import { openaiDialect } from "@amber/providers/openai";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { tempDir } from "../_helpers.ts";
import {
  countingTool,
  runOptions,
  ScriptedModel,
  startRuntime,
  toolResults,
} from "./_kernel_script.ts";

Deno.test("a dialect whose decoder() throws ends the step with an error naming it; earlier steps stay", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ toolCalls: [{ name: "echo", arguments: {} }] }, { text: "never decoded" });
  const base = openaiDialect();
  let made = 0;
  const dialect: Dialect = {
    ...base,
    flavor: "brittle",
    decoder: () => {
      if (++made === 2) throw new TypeError("no decoder today");
      return base.decoder();
    },
  };
  const { runtime } = await startRuntime({
    tools: [{ kind: "tool", name: "echo", tools: [countingTool("echo", [])] }],
  });
  const model = new ProviderClient(dialect, { baseUrl: `${server.url}/v1`, apiKey: "k" }, {
    retry: { maxAttempts: 1 },
  });
  const session = await SessionFile.create(tmp.dir, { id: "brittle", workspace: tmp.dir });
  const result = await runAgent({ ...runOptions(runtime, model), session });
  session.close();
  const cause = result.cause as Extract<EndCause, { kind: "error" }>;
  strictEqual(cause.failure.kind, "provider");
  match(
    (cause.failure as { message: string }).message,
    /the brittle dialect could not decode the response from .*: no decoder today/,
  );
  const loaded = await SessionFile.load(tmp.dir, "brittle");
  deepStrictEqual(loaded.messages.map((m) => m.role), ["user", "assistant", "tool"]);
  strictEqual(loaded.steps.at(-1)?.end, "error");
  await runtime.stop();
});

Deno.test("a model port that throws ends the run with an error; the prompt is committed", async () => {
  await using tmp = await tempDir();
  const { runtime } = await startRuntime({});
  const session = await SessionFile.create(tmp.dir, { id: "thrown", workspace: tmp.dir });
  const result = await runAgent({
    ...runOptions(runtime, { stream: () => Promise.reject(new RangeError("port bug")) }),
    session,
  });
  session.close();
  const cause = result.cause as Extract<EndCause, { kind: "error" }>;
  match((cause.failure as { message: string }).message, /the model call failed: RangeError/);
  const loaded = await SessionFile.load(tmp.dir, "thrown");
  deepStrictEqual(loaded.messages, [{ role: "user", content: "go" }]);
  strictEqual(loaded.steps.length, 1);
  strictEqual(loaded.steps[0].end, "error");
  await runtime.stop();
});

Deno.test("allowanceFromHeaders throwing is a ProviderError naming the dialect, and the run goes on", async () => {
  const dialect = {
    ...openaiDialect(),
    flavor: "odd",
    allowanceFromHeaders: () => {
      throw new Error("header soup");
    },
  } as Dialect;
  const client = new ProviderClient(dialect, { baseUrl: "http://127.0.0.1:9" });
  throws(
    () => client.allowanceFromHeaders(new Headers()),
    (error) =>
      error instanceof ProviderError &&
      error.message ===
        "the odd dialect could not read the allowance from the response headers: header soup",
  );
  // The kernel reports what the host's reader throws and finishes the turn.
  const { runtime, diagnostics } = await startRuntime({});
  const result = await runAgent({
    ...runOptions(runtime, new ScriptedModel([{ text: "done" }])),
    onResponse: (_status, headers) => client.allowanceFromHeaders(headers),
  });
  strictEqual(result.cause.kind, "completed");
  ok(diagnostics.some((d) => d.includes("the odd dialect could not read the allowance")));
  await runtime.stop();
});

Deno.test("the prompt is on disk before the first model call, and a two-part step reads back as one", async () => {
  await using tmp = await tempDir();
  const { runtime } = await startRuntime({});
  const session = await SessionFile.create(tmp.dir, { id: "early", workspace: tmp.dir });
  let onDisk: string[] = [];
  const result = await runAgent({
    ...runOptions(runtime, {
      stream: async (_request, sink) => {
        onDisk = (await SessionFile.load(tmp.dir, "early")).messages.map((m) => m.content);
        sink({ type: "text", delta: "hello" });
        sink({ type: "finish", reason: "stop" });
        return { status: 200, headers: new Headers(), cancelled: false };
      },
    }),
    session,
    prompt: "remember me",
  });
  session.close();
  strictEqual(result.cause.kind, "completed");
  deepStrictEqual(onDisk, ["remember me"]);
  const loaded = await SessionFile.load(tmp.dir, "early");
  strictEqual(loaded.steps.length, 1);
  deepStrictEqual(loaded.steps[0].messages.map((m) => m.content), ["remember me", "hello"]);
  strictEqual(loaded.steps[0].step, 0);
  const lines = (await Deno.readTextFile(SessionFile.pathOf(tmp.dir, "early"))).trim().split("\n");
  strictEqual(lines.length, 3, "the header, the prompt, the rest of step 0");
});

Deno.test("redact applies to tool output and errors before the conversation, the events and the transcript", async () => {
  await using tmp = await tempDir();
  const KEY = "sk-live-0123456789";
  const { runtime } = await startRuntime({
    leaky: [{
      kind: "tool",
      name: "env",
      tools: [
        countingTool("printenv", [], {
          execute: () => ({ ok: true, output: `OPENAI_API_KEY=${KEY}` }),
        }),
        countingTool("fails", [], {
          execute: () => ({ ok: false, output: "", error: `bad key ${KEY}` }),
        }),
      ],
    }],
  });
  const completed: string[] = [];
  runtime.events.subscribe("toolCompleted", (e) => {
    completed.push(`${e.result.output}|${e.result.error ?? ""}`);
  });
  const model = new ScriptedModel([
    { calls: [{ name: "printenv" }, { name: "fails" }] },
    { text: "done" },
  ]);
  const session = await SessionFile.create(tmp.dir, { id: "redact", workspace: tmp.dir });
  const events: RunEvent[] = [];
  const result = await runAgent({
    ...runOptions(runtime, model),
    session,
    onEvent: (e) => events.push(e),
    redact: (text) => text.replaceAll(KEY, "[redacted]"),
  });
  session.close();
  deepStrictEqual(toolResults(result.messages), [
    "OPENAI_API_KEY=[redacted]",
    "error: bad key [redacted]",
  ]);
  const ends = events.flatMap((e) => e.type === "toolEnd" ? [e.result] : []);
  deepStrictEqual(ends.map((r) => r.output + (r.error ?? "")), [
    "OPENAI_API_KEY=[redacted]",
    "bad key [redacted]",
  ]);
  deepStrictEqual(completed, ["OPENAI_API_KEY=[redacted]|", "|bad key [redacted]"]);
  strictEqual(JSON.stringify(model.requests).includes(KEY), false, "the model never saw it");
  const text = await Deno.readTextFile(SessionFile.pathOf(tmp.dir, "redact"));
  strictEqual(text.includes(KEY), false, "nor the transcript");
  await runtime.stop();
});

Deno.test("a redaction that throws withholds the result rather than pass it on", async () => {
  const { runtime } = await startRuntime({
    leaky: [{
      kind: "tool",
      name: "env",
      tools: [countingTool("printenv", [], { execute: () => ({ ok: true, output: "SECRET" }) })],
    }],
  });
  const model = new ScriptedModel([{ calls: [{ name: "printenv" }] }, { text: "done" }]);
  const result = await runAgent({
    ...runOptions(runtime, model),
    redact: () => {
      throw new Error("redactor bug");
    },
  });
  match(toolResults(result.messages)[0], /withheld: redacting it failed: redactor bug/);
  strictEqual(JSON.stringify(model.requests).includes("SECRET"), false);
  await runtime.stop();
});
