// `PluginRuntime.fail` (issue 12): a fault that ends a plugin for the session at once (a
// sandboxed plugin's process died), whatever the quarantine count: the host is told it as a
// fault, the plugin is switched off dependents first with its plugin.conf untouched, and it is
// failed with where and what; switching it on brings it back.

import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import type { Diagnostic, FaultEvent, PluginState } from "@amber/core";
import { capabilityOf, contents, makePlugin, makeRuntime, tempDir } from "../_helpers.ts";

function reason(state: PluginState): string {
  return state.status === "failed" || state.status === "blocked" ? state.reason : state.status;
}

Deno.test("fail ends a plugin at once, dependents first, and leaves plugin.conf alone", async () => {
  await using tmp = await tempDir();
  const events: FaultEvent[] = [];
  const diagnostics: Diagnostic[] = [];
  const { runtime, registries } = makeRuntime({
    configDir: tmp.dir,
    config: { plugins: {}, quarantine: { faults: 3, windowSeconds: 60 } },
    onFault: (event) => events.push(event),
    onDiagnostic: (diagnostic) => diagnostics.push(diagnostic),
  });
  runtime.register(makePlugin("boxed", [capabilityOf("tool", "boxed")]));
  runtime.register(
    makePlugin("app", [capabilityOf("prompt", "app")], { requires: { boxed: "*" } }),
  );
  runtime.register(makePlugin("steady", [capabilityOf("tool", "steady")]));
  await runtime.start();

  runtime.fail("boxed", "sandbox", "its process exited with code 1: Error: boom");
  await runtime.settled();
  deepStrictEqual(runtime.state("boxed"), {
    status: "failed",
    reason: "sandbox: its process exited with code 1: Error: boom; " +
      "switch it back on with `/set plugin on boxed`",
  });
  match(reason(runtime.state("app")), /requires 'boxed', which is failed/);
  strictEqual(runtime.state("steady").status, "active");
  deepStrictEqual(contents(registries).filter((c) => !c.includes(":core:")), [
    "tool:steady:t_steady",
  ]);
  deepStrictEqual(events.map((e) => `${e.kind}:${e.pluginId}:${e.where}`), [
    "fault:boxed:sandbox",
  ]);
  match(
    diagnostics.find((d) => d.where === "fail")?.message ?? "",
    /^switched off for this session with the plugins that require it \(app\): sandbox: /,
  );
  strictEqual(
    await Deno.stat(join(tmp.dir, "plugins", "boxed", "plugin.conf")).then(() => true, () => false),
    false,
    "the user's choice on disk is left as it was",
  );

  const back = await runtime.setState("boxed", true);
  strictEqual(back.state.status, "active");
  deepStrictEqual(back.unblocked, ["app"]);
  await runtime.stop();
});

Deno.test("fail leaves a plugin that is not active as it is, and ignores an unknown id", async () => {
  const events: FaultEvent[] = [];
  const { runtime } = makeRuntime({ onFault: (event) => events.push(event) });
  runtime.register(makePlugin("off", [], { enabledByDefault: false }));
  await runtime.start();
  runtime.fail("off", "sandbox", "its process exited with code 0");
  runtime.fail("nobody", "sandbox", "x");
  await runtime.settled();
  strictEqual(runtime.state("off").status, "disabled");
  deepStrictEqual(events.map((e) => e.kind), ["fault"], "the host still hears of the fault");
  await runtime.stop();
});
