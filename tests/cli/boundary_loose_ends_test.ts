// Loose ends of the plugin boundary: `amber plugins add` keeps the configured import deadline,
// a diagnostic said while plugins start never shows the key in use, a sub-agent's session file
// has one writer, and a command handler that throws counts as its plugin's fault.

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Diagnostic, Plugin } from "@amber/core";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { openHost } from "../../cli/host.ts";
import { AgentSession, HeldDiagnostics, SessionBusyError } from "../../cli/session/mod.ts";
import { lockSession } from "../../cli/session/session_lock.ts";
import { readPluginLock } from "../../cli/third_party.ts";
import { makePlugin, tempDir } from "../_helpers.ts";
import { runAmber } from "./_subprocess.ts";

const PLUGIN = "version: '1.0.0', shutdown() {}, capabilities: () => []";

async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(done(), `timed out waiting for ${what}`);
}

Deno.test("amber plugins add loads the plugin within timeouts.import of config.yaml", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(join(tmp.dir, "config.yaml"), "timeouts:\n  import: 300\n");
  const file = join(tmp.dir, "slow.js");
  await Deno.writeTextFile(
    file,
    "await new Promise((resolve) => setTimeout(resolve, 30_000));\n" +
      `export default { id: 'slow', name: 'Slow', initialize: () => true, ${PLUGIN} };\n`,
  );
  const started = performance.now();
  const result = await runAmber(tmp.dir, ["plugins", "add", file], {
    env: { INIT_CWD: tmp.dir },
  });
  assert.equal(result.code, 1, result.err);
  assert.match(
    result.err,
    /slow\.js: loading it did not finish within 300 ms; nothing was recorded$/m,
  );
  assert.ok(performance.now() - started < 20_000, "it did not wait for the import");
  assert.deepEqual((await readPluginLock(tmp.dir)).plugins, []);
});

Deno.test("amber run redacts the key in use from diagnostics said while the plugins start", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const key = "sk-h10-early-key-97531";
  // A variable whose name looks like no secret: only the session knows it holds the key.
  await Deno.writeTextFile(join(tmp.dir, "config.yaml"), "apiKeyEnv: AMBER_LLM\n");
  const file = join(tmp.dir, "leaky.js");
  await Deno.writeTextFile(
    file,
    "export default { id: 'leaky', name: 'Leaky', " +
      "initialize: () => { throw new Error('cannot use ' + Deno.env.get('AMBER_LLM')); }, " +
      `${PLUGIN} };\n`,
  );
  const env = { INIT_CWD: tmp.dir, AMBER_LLM: key };
  // Trusted: inside amber it can read the key, and amber must redact what it says.
  const added = await runAmber(tmp.dir, ["plugins", "add", file, "--trusted"], { env });
  assert.equal(added.code, 1, "recorded, but its initialize fails");

  server.script({ text: "hello" }, { text: "hello again" });
  for (const json of [[], ["--json"]]) {
    const result = await runAmber(
      tmp.dir,
      ["run", "hi", "--base-url", `${server.url}/v1`, "--model", "fake-model", ...json],
      { env },
    );
    assert.equal(result.code, 0, result.err);
    assert.match(
      result.err,
      /^amber: plugin 'leaky' \(activation\): initialize failed: cannot use \[redacted\]$/m,
    );
    assert.ok(!result.err.includes(key), result.err);
    assert.ok(!result.out.includes(key), result.out);
  }
  assert.equal(server.chats[0].headers.authorization, `Bearer ${key}`);
});

Deno.test("held diagnostics of a session that could not open are redacted by secret shape", () => {
  const name = "AMBER_H10_TEST_TOKEN";
  Deno.env.set(name, "tok-h10-0123456789");
  try {
    const printed: string[] = [];
    const held = new HeldDiagnostics((d) => printed.push(`${d.where}: ${d.message}`));
    held.receive({ pluginId: "p", where: "initialize", message: "saw tok-h10-0123456789" });
    assert.deepEqual(printed, []);
    held.release();
    assert.deepEqual(printed, ["initialize: saw [redacted]"]);
  } finally {
    Deno.env.delete(name);
  }
});

Deno.test("a sub-agent's session file is locked for the sub-agent's life", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(
    { toolCalls: [{ name: "task", arguments: { prompt: "look around" } }] },
    // The sub-agent's answer comes late: its file is open meanwhile.
    { text: "nothing here", fault: { kind: "slowFirstByte", delayMs: 1500 } },
    { text: "done" },
  );
  const session = await AgentSession.open({
    openHost: (services) =>
      openHost({ ...services, configDir: tmp.dir, workspace: tmp.dir, thirdParty: false }),
    overrides: { model: "fake-model", baseUrl: `${server.url}/v1` },
    approval: "auto",
    env: (name) => name === "OPENAI_API_KEY" ? "sk-h10-subagent" : undefined,
  });
  const turn = session.turn("delegate it");
  try {
    await until(() => server.chats.length === 2, "the sub-agent's model call");
    const child = `${session.id}-task1`;
    await assert.rejects(lockSession(tmp.dir, child), (error: unknown) => {
      assert.ok(error instanceof SessionBusyError);
      assert.equal(error.id, child);
      assert.equal(error.holderPid, Deno.pid);
      return true;
    });
    const result = await turn;
    assert.equal(result.cause.kind, "completed");
    assert.equal(result.messages.find((m) => m.role === "tool")?.content, "nothing here");
    // Released when the sub-agent is done.
    (await lockSession(tmp.dir, child)).release();
  } finally {
    // Whatever failed above, the turn ends before the session closes under it.
    await turn.catch(() => {});
    session.close();
    await session.host.close();
  }
});

Deno.test("a command handler that throws is its plugin's fault and counts toward quarantine", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(join(tmp.dir, "config.yaml"), "quarantine:\n  faults: 2\n");
  const flaky: Plugin = makePlugin("flaky", [{
    kind: "command",
    name: "flaky",
    root: "flaky",
    help: "Fails",
    subtree: { go: { help: "Go" } },
    handlers: {
      go: () => {
        throw new Error("boom");
      },
    },
  }]);
  const diagnostics: Diagnostic[] = [];
  const host = await openHost({
    configDir: tmp.dir,
    workspace: tmp.dir,
    thirdParty: false,
    plugins: [flaky],
    onDiagnostic: (d) => diagnostics.push(d),
  });
  try {
    // What the user sees of the command is as before.
    const first = await host.registries.command.dispatch("flaky", ["go"], "");
    assert.deepEqual(first, { ok: false, error: "'/flaky go' failed: boom" });
    assert.deepEqual(
      diagnostics.map((d) => [d.pluginId, d.where, d.message, (d.error as Error).message]),
      [["flaky", "command '/flaky go'", "boom", "boom"]],
    );
    assert.equal(host.runtime.state("flaky").status, "active");
    await host.registries.command.dispatch("flaky", ["go"], "");
    await host.runtime.settled();
    const state = host.runtime.state("flaky");
    assert.equal(state.status, "failed");
    assert.match(state.status === "failed" ? state.reason : "", /quarantined/);
    assert.ok(!host.registries.command.tree().some((root) => root.name === "flaky"));
  } finally {
    await host.close();
  }
});
