// No plugin process outlives what started it: after `kill -9` of amber in the middle of a turn
// the sandboxed plugin's process notices its stdin closing and exits; a normal exit of amber
// leaves none; switching a plugin off ends its process, and switching it on starts a new one.
// Real processes, found with `ps` (tests/cli/_plugin_processes.ts).

import { notStrictEqual, ok, strictEqual } from "node:assert/strict";
import { openHost } from "../../cli/host.ts";
import { isAlive, processesWith, type ProcessInfo, until } from "./_plugin_processes.ts";
import { addFixture, openScene, type Scene, spawnAmber } from "./_sandbox_scene.ts";

// `amber run go` against the scene's fake model, as a child this test can kill.
function spawnRun(scene: Scene): Deno.ChildProcess {
  return spawnAmber(scene, ["run", "go", "--base-url", `${scene.server.url}/v1`], "null");
}

// The plugin process whose parent is `parent`, once there is one.
function pluginChildOf(scene: Scene, parent: number): Promise<ProcessInfo> {
  return until(
    async () => (await processesWith(scene.plugins)).find((p) => p.ppid === parent),
    `a plugin process of pid ${parent}`,
  );
}

// Resolves once `pid` has exited; throws after `ms`.
function gone(pid: number, ms: number): Promise<true> {
  return until(async () => (await isAlive(pid)) ? undefined : true, `pid ${pid} to end`, ms);
}

async function goodScene(): Promise<Scene> {
  const scene = await openScene();
  await addFixture(scene, "good.js");
  return scene;
}

Deno.test("after kill -9 of amber in the middle of a turn, its plugin process ends within seconds", async () => {
  await using scene = await goodScene();
  // The model answers only after a minute: amber is killed while it waits.
  scene.server.script({ text: "late", fault: { kind: "slowFirstByte", delayMs: 60_000 } });
  const amber = spawnRun(scene);
  try {
    const plugin = await pluginChildOf(scene, amber.pid);
    await until(
      () => Promise.resolve(scene.server.chats.length > 0 || undefined),
      "the model call",
    );
    ok(await isAlive(plugin.pid));
    amber.kill("SIGKILL");
    await amber.status;
    await gone(plugin.pid, 5_000);
    strictEqual((await processesWith(scene.plugins)).length, 0);
  } finally {
    try {
      amber.kill("SIGKILL");
    } catch {
      // Already ended.
    }
    await amber.status;
  }
});

Deno.test("a normal exit of amber leaves no plugin process", async () => {
  await using scene = await goodScene();
  // A second of wait for the model, so the plugin process is seen while amber runs.
  scene.server.script(
    {
      toolCalls: [{ name: "good_echo", arguments: { text: "hi" } }],
      fault: { kind: "slowFirstByte", delayMs: 1_000 },
    },
    { text: "done" },
  );
  const amber = spawnRun(scene);
  const plugin = await pluginChildOf(scene, amber.pid);
  const status = await amber.status;
  strictEqual(status.code, 0);
  strictEqual(scene.server.chats.length, 2, "the tool ran and the turn finished");
  strictEqual(await isAlive(plugin.pid), false, "the plugin process outlived amber");
  strictEqual((await processesWith(scene.plugins)).length, 0);
});

Deno.test("switching a sandboxed plugin off ends its process; on starts a new one; closing ends it", async () => {
  await using scene = await goodScene();
  const host = await openHost({ configDir: scene.config, workspace: scene.work });
  let closed = false;
  try {
    strictEqual(host.runtime.state("good").status, "active");
    const first = await pluginChildOf(scene, Deno.pid);

    await host.runtime.setState("good", false);
    strictEqual(host.runtime.state("good").status, "disabled");
    await gone(first.pid, 5_000);

    await host.runtime.setState("good", true);
    strictEqual(host.runtime.state("good").status, "active");
    const second = await pluginChildOf(scene, Deno.pid);
    notStrictEqual(second.pid, first.pid);
    const result = await host.registries.tool.execute("good_echo", { text: "again" });
    ok(result.ok && result.output.startsWith("good says again"), JSON.stringify(result));

    await host.close();
    closed = true;
    strictEqual(await isAlive(second.pid), false, "closing the host left the process");
  } finally {
    if (!closed) await host.close();
  }
});

Deno.test("a plugin process that spins while amber is killed outright is stopped by amber's next start", async () => {
  await using scene = await openScene();
  await addFixture(scene, "spin_later.js");
  scene.server.script({ text: "late", fault: { kind: "slowFirstByte", delayMs: 60_000 } });
  const amber = spawnRun(scene);
  let plugin: ProcessInfo | undefined;
  try {
    plugin = await pluginChildOf(scene, amber.pid);
    await until(
      () => Promise.resolve(scene.server.chats.length > 0 || undefined),
      "the model call",
    );
    // Spinning by now: it will not see its stdin close.
    await new Promise((resolve) => setTimeout(resolve, 600));
    amber.kill("SIGKILL");
    await amber.status;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    ok(await isAlive(plugin.pid), "a spinning process outlives a kill -9 until the next start");
    const next = spawnAmber(scene, ["plugins", "list"]);
    const { stderr } = await next.output();
    await gone(plugin.pid, 10_000);
    ok(new TextDecoder().decode(stderr).includes("amber plugin process"), "the start says so");
  } finally {
    try {
      amber.kill("SIGKILL");
    } catch {
      // Already ended.
    }
    await amber.status;
    if (plugin !== undefined && await isAlive(plugin.pid)) Deno.kill(plugin.pid, "SIGKILL");
  }
});
