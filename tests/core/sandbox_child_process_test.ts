// The plugin process itself: `deno run --no-prompt --allow-read=<fixtures> child_main.ts <fixture>`
// speaking the protocol on its stdin and stdout, as the host will spawn it.

import assert from "node:assert/strict";
import { type InitializeResult, Method, PROTOCOL_VERSION, RpcPeer } from "@amber/core/sandbox";
import { refused } from "./_sandbox_child_host.ts";

const ROOT = new URL("../../", import.meta.url);
const FIXTURES = new URL("./_sandbox_child_fixtures/", import.meta.url);

// `deno run --no-prompt --allow-read=<fixtures> core/sandbox/child_main.ts <fixture>`, with the
// host's peer on its stdin and stdout.
function spawnFixture(fixture: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      `--allow-read=${FIXTURES.pathname}`,
      new URL("core/sandbox/child_main.ts", ROOT).pathname,
      new URL(fixture, FIXTURES).pathname,
    ],
    cwd: ROOT.pathname,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Anything on stdout that is not the protocol (a console.log that got through) lands here.
  const garbage: string[] = [];
  const host = new RpcPeer({
    input: child.stdout,
    output: child.stdin,
    onProtocolError: (error) => garbage.push(error.line),
  });
  const logs: { level: string; message: string }[] = [];
  host.onNotification(
    Method.log,
    (params) => logs.push(params as { level: string; message: string }),
  );
  const describe = () =>
    host.request<{ id: string; permissions?: unknown }>(Method.describe, {
      protocolVersion: PROTOCOL_VERSION,
      hostVersion: "0.1.0",
    });
  const initialize = (pluginId: string) =>
    host.request<InitializeResult>(Method.initialize, {
      pluginId,
      workspace: "/tmp",
      config: { plugins: {} },
      section: {},
      tools: [],
      services: {},
    });
  return { child, host, garbage, logs, describe, initialize };
}

Deno.test("a real plugin process: describe, initialize, a tool call; it exits when stdin closes", async () => {
  const { child, host, garbage, logs, describe, initialize } = spawnFixture("greeter.ts");
  const manifest = await describe();
  assert.equal(manifest.id, "greeter");
  assert.deepEqual(manifest.permissions, { read: ["notes"] });
  assert.equal((await initialize("greeter")).ok, true);
  assert.deepEqual(
    await host.request(Method.toolExecute, {
      capability: "greet",
      tool: "greet",
      args: { name: "amber" },
    }),
    { ok: true, output: "Hello, amber!" },
  );
  assert.deepEqual(logs, [{ level: "log", message: "greeter starting" }]);
  assert.deepEqual(garbage, []);
  // No shutdown: the host closing stdin (or dying) is enough for the process to end.
  await host.close();
  assert.equal((await child.status).code, 0);
  await host.closed;
  await child.stderr.cancel();
});

Deno.test("a real plugin process logs what its plugin left unhandled, serves on, and exits at shutdown", async () => {
  const { child, host, garbage, logs, describe, initialize } = spawnFixture("careless.ts");
  await describe();
  assert.equal((await initialize("careless")).ok, true);
  const call = () =>
    host.request(Method.toolExecute, { capability: "careless", tool: "careless", args: {} });
  assert.deepEqual(await call(), { ok: true, output: "timer on" });
  // The timer's throw comes a turn later; the next answer shows the process survived both.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(await call(), { ok: true, output: "timer on" });
  const messages = logs.map((line) => line.message);
  assert.ok(messages.includes("unhandled rejection: forgotten promise"), messages.join("\n"));
  assert.ok(messages.includes("uncaught error: timer throw"), messages.join("\n"));
  // stdin stays open and the plugin's interval is alive: shutdown alone ends the process.
  assert.equal(await host.request(Method.shutdown), null);
  assert.equal((await child.status).code, 0);
  assert.deepEqual(garbage, []);
  await host.close();
  await child.stderr.cancel();
});

Deno.test("a real plugin process answers describe with the import's failure, naming the file", async () => {
  for (
    const [fixture, words] of [
      ["throws_at_import.ts", /no plugin today/],
      ["missing.ts", /Module not found/],
    ] as const
  ) {
    const { child, host, describe } = spawnFixture(fixture);
    const error = await refused(describe(), words);
    assert.ok(error.message.startsWith("cannot be imported: "), error.message);
    assert.deepEqual(error.data, { field: "plugin", file: new URL(fixture, FIXTURES).pathname });
    await host.close();
    assert.equal((await child.status).code, 0);
    await child.stderr.cancel();
  }
});

Deno.test("a plugin that replaces Deno.exit and keeps a timer still ends with its stdin", async () => {
  const { child, host, describe } = spawnFixture("stubborn.ts");
  assert.equal((await describe()).id, "stubborn");
  await host.close();
  assert.equal((await child.status).code, 0);
  await host.closed;
  await child.stderr.cancel();
});
