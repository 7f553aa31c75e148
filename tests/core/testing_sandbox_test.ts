// @amber/core/testing both ways: the same plugin module activated in the test's process and in a
// plugin process of its own (real `deno run` children), the same checks against both, the grant a
// sandboxed test host gives by default, and no plugin process left behind.

import {
  deepStrictEqual,
  match,
  notStrictEqual,
  ok,
  rejects,
  strictEqual,
} from "node:assert/strict";
import { join } from "node:path";
import { emptyStatusSnapshot } from "@amber/core";
import { bothWays, TestHostError, testPluginModule } from "@amber/core/testing";
import { createRegistries } from "@amber/registries";
import { tempDir } from "../_helpers.ts";

const WIDGET = new URL("./_testing_fixtures/widget.ts", import.meta.url);
const THROWS = new URL("./_testing_fixtures/throws.ts", import.meta.url);

// The live plugin processes this process started for `module`: its children whose command line
// names the module's file, as `ps` lists them (Deno lets only --allow-all read /proc; the suite
// runs with --allow-run). A zombie has exited.
async function pluginPids(module: URL): Promise<number[]> {
  const { stdout } = await new Deno.Command("ps", {
    args: ["--ppid", String(Deno.pid), "-o", "pid=,stat=,args="],
    stdout: "piped",
    stderr: "null",
  }).output();
  const pids: number[] = [];
  for (const line of new TextDecoder().decode(stdout).split("\n")) {
    const found = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (found === null || found[2].startsWith("Z") || !found[3].includes(module.pathname)) continue;
    pids.push(Number(found[1]));
  }
  return pids;
}

async function workspaceWithNote(dir: string): Promise<string> {
  const workspace = join(dir, "workspace");
  await Deno.mkdir(workspace);
  await Deno.writeTextFile(join(workspace, "notes.txt"), "forty-two");
  return workspace;
}

Deno.test("bothWays runs the same checks in-process and in a plugin process, every kind of contribution", async () => {
  await using tmp = await tempDir();
  const workspace = await workspaceWithNote(tmp.dir);
  const seen: string[] = [];
  await bothWays(WIDGET, {
    registries: createRegistries,
    workspace,
    config: { colour: "amber" },
  }, async (host, way) => {
    seen.push(way);
    strictEqual(host.way, way);
    strictEqual(host.state().status, "active");
    deepStrictEqual([...host.tools()].sort(), ["exit", "read_note", "whereami"]);
    const pid = await host.execute("whereami", {});
    strictEqual(pid.ok, true, pid.error);
    if (way === "sandboxed") {
      notStrictEqual(pid.output, String(Deno.pid));
      strictEqual(pid.output, String(host.pid));
    } else {
      strictEqual(pid.output, String(Deno.pid));
      strictEqual(host.pid, undefined);
    }
    deepStrictEqual(await host.execute("read_note", {}), { ok: true, output: "forty-two" });
    deepStrictEqual(await host.command("/widget section"), {
      ok: true,
      text: '{"colour":"amber"}',
    });
    const prompt = host.registries.prompt.assemble([]).messages.map((m) => m.content).join("\n");
    match(prompt, /Be a widget\./);
    strictEqual(host.status(40).text, "model=-");
    // Sandboxed, a render is what the process last pushed: settle after a new snapshot or width.
    const snapshot = { ...emptyStatusSnapshot(), model: "m1" };
    host.status(40, snapshot);
    host.panel("widget", 20);
    await host.settle();
    strictEqual(host.status(40, snapshot).text, "model=m1");
    deepStrictEqual(host.panel("widget", 20), ["w=20"]);
    await host.disable();
    strictEqual(host.tools().length, 0);
    strictEqual((await host.enable()).status, "active");
    strictEqual((await host.execute("read_note", {})).output, "forty-two");
  });
  deepStrictEqual(seen, ["in-process", "sandboxed"]);
  deepStrictEqual(await pluginPids(WIDGET), []);
});

Deno.test("sandboxed, the plugin gets its own permissions by default, and only what is granted when told", async () => {
  await using tmp = await tempDir();
  const workspace = await workspaceWithNote(tmp.dir);
  await Deno.writeTextFile(join(workspace, "secret.txt"), "not for plugins");
  {
    await using host = await testPluginModule(WIDGET, {
      registries: createRegistries(),
      sandboxed: true,
      workspace,
    });
    deepStrictEqual(await host.execute("read_note", {}), { ok: true, output: "forty-two" });
  }
  await using host = await testPluginModule(WIDGET, {
    registries: createRegistries(),
    sandboxed: true,
    workspace,
    grant: {},
  });
  const denied = await host.execute("read_note", {});
  strictEqual(denied.ok, false);
  match(denied.error ?? "", /read access/);
  ok(!(denied.error ?? "").includes("forty-two"));
});

Deno.test("disposing a sandboxed test host ends its plugin process", async () => {
  const host = await testPluginModule(WIDGET, { registries: createRegistries(), sandboxed: true });
  const pids = await pluginPids(WIDGET);
  strictEqual(pids.length, 1, `plugin processes: ${pids.join(", ")}`);
  strictEqual(host.pid, pids[0]);
  strictEqual((await host.execute("whereami", {})).output, String(pids[0]));
  await host[Symbol.asyncDispose]();
  deepStrictEqual(await pluginPids(WIDGET), []);
});

Deno.test("a plugin process that dies fails the plugin with the reason; the test host still disposes", async () => {
  await using host = await testPluginModule(WIDGET, {
    registries: createRegistries(),
    sandboxed: true,
  });
  const result = await host.execute("exit", {});
  strictEqual(result.ok, false);
  const state = await waitFor(() => {
    const now = host.state();
    return now.status === "failed" ? now : undefined;
  });
  match(state.reason, /exited with code 3/);
  strictEqual(host.tools().length, 0);
  deepStrictEqual(await pluginPids(WIDGET), []);
});

Deno.test("a check that fails one way rejects naming the way, and leaves no process", async () => {
  const error = await bothWays(WIDGET, { registries: createRegistries }, async (host) => {
    strictEqual((await host.execute("whereami", {})).output, String(Deno.pid));
  }).then(() => undefined, (e: unknown) => e);
  ok(error instanceof TestHostError, String(error));
  match(error.message, /^sandboxed: /);
  strictEqual((error.cause as Error).name, "AssertionError");
  deepStrictEqual(await pluginPids(WIDGET), []);
});

Deno.test("a module that throws at import is refused either way, sandboxed with the process's words", async () => {
  await rejects(
    testPluginModule(THROWS, { registries: createRegistries(), sandboxed: false }),
    /broken at import/,
  );
  const error = await testPluginModule(THROWS, {
    registries: createRegistries(),
    sandboxed: true,
  }).then(() => undefined, (e: unknown) => e);
  ok(error instanceof TestHostError, String(error));
  match(error.message, /throws\.ts/);
  match(error.message, /broken at import/);
  deepStrictEqual(await pluginPids(THROWS), []);
});

async function waitFor<T>(probe: () => T | undefined, ms = 5_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`nothing within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
