// The test servers in tests/mcp/_servers/ do what their headers say, checked through the SDK's
// own client (so a failure in amber's tests is amber's, not the server's).

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { README_TEXT } from "./_servers/basic.ts";
import { GARBAGE_LINE } from "./_servers/garbage.ts";
import { testServerArgs, type TestServerName } from "./_servers/mod.ts";

async function connect(name: TestServerName, args: readonly string[] = []) {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: testServerArgs(name, args),
    stderr: "pipe",
  });
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

function text(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content.map((part) => part.text ?? "").join("");
}

/** Starts a server as a plain subprocess with stdio piped. */
function spawn(name: TestServerName, args: readonly string[] = []) {
  return new Deno.Command(Deno.execPath(), {
    args: testServerArgs(name, args),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "test", version: "1" },
  },
}) + "\n";

/** The first line of a stream, or "" at its end. */
async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    if (text.includes("\n")) break;
  }
  return text.split("\n")[0];
}

Deno.test("basic: tools, a read-only hint, a prompt, resources, progress and logging", async () => {
  const { client } = await connect("basic");
  try {
    assert.equal(client.getServerVersion()?.name, "amber-test-basic");
    const tools = (await client.listTools()).tools;
    assert.deepEqual(tools.map((tool) => tool.name), [
      "echo",
      "add",
      "peek",
      "sleep",
      "count",
      "log",
    ]);
    assert.equal(tools.find((tool) => tool.name === "peek")?.annotations?.readOnlyHint, true);
    assert.equal(text(await client.callTool({ name: "echo", arguments: { text: "hi" } })), "hi");
    const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    assert.deepEqual(sum.structuredContent, { sum: 5 });
    const prompt = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
    assert.deepEqual(prompt.messages[0].content, { type: "text", text: "Greet Ada." });
    assert.deepEqual((await client.listResources()).resources.map((r) => r.uri), [
      "basic://readme",
    ]);
    const readme = await client.readResource({ uri: "basic://readme" });
    assert.equal((readme.contents[0] as { text: string }).text, README_TEXT);
    const note = await client.readResource({ uri: "basic://notes/7" });
    assert.equal((note.contents[0] as { text: string }).text, "note 7");
    const progress: number[] = [];
    await client.callTool({ name: "count", arguments: { steps: 3, ms: 50 } }, undefined, {
      onprogress: ({ progress: step }) => void progress.push(step),
    });
    assert.deepEqual(progress, [1, 2, 3]);
    const logged = Promise.withResolvers<unknown>();
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => logged.resolve(n.params.data),
    );
    await client.callTool({ name: "log", arguments: { text: "careful" } });
    assert.equal(await logged.promise, "careful");
  } finally {
    await client.close();
  }
});

Deno.test("basic over Streamable HTTP prints its URL and serves each session", async () => {
  const child = spawn("basic", ["--http=0"]);
  try {
    const url = await firstLine(child.stdout);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    for (const round of [1, 2]) {
      const client = new Client({ name: "test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      const echoed = await client.callTool({ name: "echo", arguments: { text: `r${round}` } });
      assert.equal(text(echoed), `r${round}`);
      await client.close();
    }
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await child.stderr.cancel();
  }
});

Deno.test("crash: boom ends the process with the exit code", async () => {
  const { client } = await connect("crash", ["--code=5"]);
  const closed = Promise.withResolvers<void>();
  client.onclose = () => closed.resolve();
  assert.equal(text(await client.callTool({ name: "echo", arguments: { text: "ok" } })), "ok");
  await assert.rejects(client.callTool({ name: "boom" }));
  await closed.promise;
  await client.close();
});

Deno.test("crash --after and --at-start exit on their own", async () => {
  for (const args of [["--after=100"], ["--at-start"]]) {
    const child = spawn("crash", args);
    const status = await child.status;
    assert.equal(status.code, 3);
    await child.stdout.cancel();
    const err = await new Response(child.stderr).text();
    assert.match(err, /crash: .*exiting with 3/);
    await child.stdin.close();
  }
});

Deno.test("hang --at=initialize answers nothing; --ignore-term outlives SIGTERM", async () => {
  const child = spawn("hang", ["--at=initialize", "--ignore-term"]);
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(INITIALIZE));
  const line = firstLine(child.stdout);
  const timeout = new Promise((resolve) => setTimeout(() => resolve("timeout"), 1500));
  assert.equal(await Promise.race([line, timeout]), "timeout");
  child.kill("SIGTERM");
  const exited = child.status.then(() => "exited");
  const later = new Promise((resolve) => setTimeout(() => resolve("alive"), 500));
  assert.equal(await Promise.race([exited, later]), "alive");
  child.kill("SIGKILL");
  await child.status;
  await writer.close().catch(() => {});
  await child.stderr.cancel();
  await line;
});

Deno.test("hang --at=call: wait never returns, echo does", async () => {
  const { client } = await connect("hang");
  try {
    assert.equal(text(await client.callTool({ name: "echo", arguments: { text: "x" } })), "x");
    await assert.rejects(
      client.callTool({ name: "wait" }, undefined, { timeout: 500 }),
      /timed out/i,
    );
  } finally {
    await client.close();
  }
});

Deno.test("garbage writes its line at start, as the answer to initialize, or on spew", async () => {
  for (const at of ["start", "initialize"]) {
    const child = spawn("garbage", [`--at=${at}`]);
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(INITIALIZE));
    assert.equal(await firstLine(child.stdout), GARBAGE_LINE);
    await writer.close();
    await child.status;
    await child.stderr.cancel();
  }
  const { client } = await connect("garbage", ["--at=call"]);
  const errors: string[] = [];
  client.onerror = (error) => void errors.push(String(error));
  assert.equal(text(await client.callTool({ name: "spew" })), "spewed");
  assert.equal(errors.length, 1);
  await client.close();
});

Deno.test("list_changed: grow, shrink, break and mend, each with its notification", async () => {
  const { client } = await connect("list_changed");
  try {
    let changes = 0;
    let changed = Promise.withResolvers<void>();
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
      changed.resolve();
    });
    const names = async () => (await client.listTools()).tools.map((tool) => tool.name);
    assert.deepEqual(await names(), ["grow", "shrink", "break", "mend"]);
    assert.equal(text(await client.callTool({ name: "grow" })), "added tool extra_1");
    await changed.promise;
    assert.deepEqual((await names()).slice(4), ["extra_1"]);
    const called = await client.callTool({ name: "extra_1", arguments: { text: "t" } });
    assert.equal(text(called), "extra 1: t");
    changed = Promise.withResolvers();
    await client.callTool({ name: "break" });
    await changed.promise;
    await assert.rejects(client.listTools(), /lists are broken/);
    await assert.rejects(client.listPrompts(), /lists are broken/);
    await client.callTool({ name: "mend" });
    await client.callTool({ name: "shrink" });
    assert.deepEqual(await names(), ["grow", "shrink", "break", "mend"]);
    await client.callTool({ name: "grow", arguments: { kind: "prompt" } });
    assert.deepEqual((await client.listPrompts()).prompts.map((p) => p.name), ["base", "extra_2"]);
    assert.equal(changes, 4);
  } finally {
    await client.close();
  }
});

Deno.test("slow serves only after its delay", async () => {
  const started = performance.now();
  const { client } = await connect("slow", ["--seconds=0.8"]);
  try {
    assert.ok(performance.now() - started >= 800);
    assert.equal(client.getServerVersion()?.name, "amber-test-slow");
    assert.equal(text(await client.callTool({ name: "echo", arguments: { text: "z" } })), "z");
  } finally {
    await client.close();
  }
});
