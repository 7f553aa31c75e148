// Quarantine and holds in the plugin runtime: a plugin that faults too often within the window
// is switched off for the session (dependents first, its plugin.conf untouched) and comes back
// when the user switches it on; an initialize past its per-plugin deadline is a timeout the
// host is told about; a held plugin runs none of its code until it is switched on.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import type { Diagnostic, FaultEvent, PluginState } from "@amber/core";
import { capabilityOf, contents, makePlugin, makeRuntime, tempDir } from "../_helpers.ts";

const boom = (where = "hook 'h' at AfterTool"): Diagnostic => ({
  pluginId: "flaky",
  where,
  message: "boom",
  error: new Error("boom"),
});

function reason(state: PluginState): string {
  return state.status === "failed" || state.status === "blocked" ? state.reason : state.status;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("a plugin that faults `quarantine.faults` times in the window is switched off for the session, dependents first", async () => {
  await using tmp = await tempDir();
  const events: FaultEvent[] = [];
  const diagnostics: Diagnostic[] = [];
  const { runtime, registries } = makeRuntime({
    configDir: tmp.dir,
    config: { plugins: {}, quarantine: { faults: 3, windowSeconds: 60 } },
    onFault: (event) => events.push(event),
    onDiagnostic: (diagnostic) => diagnostics.push(diagnostic),
  });
  runtime.register(makePlugin("flaky", [capabilityOf("tool", "flaky")]));
  runtime.register(
    makePlugin("app", [capabilityOf("prompt", "app")], { requires: { flaky: "*" } }),
  );
  runtime.register(makePlugin("steady", [capabilityOf("tool", "steady")]));
  await runtime.start();
  strictEqual(runtime.state("flaky").status, "active");

  runtime.report(boom());
  runtime.report(boom());
  // A diagnostic without an error is news, not a fault.
  runtime.report({ pluginId: "flaky", where: "hook 'h'", message: "state key 'x' is undeclared" });
  await runtime.settled();
  strictEqual(runtime.state("flaky").status, "active", "two faults are below the limit");

  runtime.report(boom("render of 'bar'"));
  await runtime.settled();
  match(
    reason(runtime.state("flaky")),
    /^quarantined after 3 faults within 60 s \(the last: render of 'bar': boom\); switch it back on with `\/set plugin on flaky`/,
  );
  match(reason(runtime.state("app")), /requires 'flaky', which is failed/);
  strictEqual(runtime.state("steady").status, "active", "other plugins keep running");
  deepStrictEqual(contents(registries).filter((c) => !c.includes(":core:")), [
    "tool:steady:t_steady",
  ]);
  const said = diagnostics.find((d) => d.where === "quarantine");
  match(
    said?.message ?? "",
    /^switched off for this session with the plugins that require it \(app\) after 3 faults within 60 s/,
  );
  deepStrictEqual(events.map((e) => `${e.kind}:${e.pluginId}`), [
    "fault:flaky",
    "fault:flaky",
    "fault:flaky",
    "quarantine:flaky",
  ]);
  strictEqual(
    await exists(join(tmp.dir, "plugins", "flaky", "plugin.conf")),
    false,
    "the user's choice on disk is left as it was",
  );

  // More faults while quarantined change nothing; switching it on brings it (and app) back.
  runtime.report(boom());
  await runtime.settled();
  const result = await runtime.setState("flaky", true);
  strictEqual(result.state.status, "active");
  deepStrictEqual(result.unblocked, ["app"]);
  strictEqual(events.at(-1)?.kind, "release");
  await runtime.stop();
});

Deno.test("faults spread wider than the window never add up to a quarantine", async () => {
  const { runtime } = makeRuntime({
    config: { plugins: {}, quarantine: { faults: 2, windowSeconds: 0.05 } },
    allOn: true,
  });
  runtime.register(makePlugin("flaky", [capabilityOf("tool", "flaky")]));
  await runtime.start();
  runtime.report(boom());
  await new Promise((resolve) => setTimeout(resolve, 120));
  runtime.report(boom());
  await runtime.settled();
  strictEqual(runtime.state("flaky").status, "active");
  runtime.report(boom());
  await runtime.settled();
  strictEqual(runtime.state("flaky").status, "failed", "two within 50 ms do");
  await runtime.stop();
});

Deno.test("a tick that keeps failing is a fault like any other", async () => {
  const { runtime } = makeRuntime({
    config: { plugins: {}, quarantine: { faults: 2, windowSeconds: 60 } },
    allOn: true,
  });
  let healthy = false;
  runtime.register(makePlugin("ticker", [capabilityOf("tool", "ticker")], {
    tick: () => {
      if (!healthy) throw new Error("tick failed");
    },
  }));
  await runtime.start();
  runtime.tick();
  healthy = true;
  runtime.tick();
  healthy = false;
  runtime.tick();
  await runtime.settled();
  match(
    reason(runtime.state("ticker")),
    /^quarantined after 2 faults within 60 s \(the last: tick:/,
  );
  await runtime.stop();
});

Deno.test("an initialize past its per-plugin deadline fails the plugin and is told as a timeout", async () => {
  const events: FaultEvent[] = [];
  const { runtime } = makeRuntime({
    config: { plugins: {}, timeouts: { plugins: { slow: { initialize: 30 } } } },
    allOn: true,
    onFault: (event) => events.push(event),
  });
  runtime.register(makePlugin("slow", [], { initialize: () => new Promise(() => {}) }));
  const started = performance.now();
  await runtime.start();
  ok(performance.now() - started < 2_000, "the per-plugin deadline applies, not the default");
  match(reason(runtime.state("slow")), /initialize did not finish within 30 ms/);
  deepStrictEqual(events.map((e) => [e.kind, e.pluginId, e.seam]), [
    ["timeout", "slow", "initialize"],
  ]);
  // Switching it on is the user asking for another try: the host may forget the timeout.
  await runtime.setState("slow", true);
  deepStrictEqual(events.map((e) => e.kind), ["timeout", "release", "timeout"]);
  await runtime.stop();
});

Deno.test("a held plugin runs none of its code until it is switched on", async () => {
  const events: FaultEvent[] = [];
  const { runtime } = makeRuntime({ allOn: true, onFault: (event) => events.push(event) });
  let initialized = 0;
  runtime.register(makePlugin("held", [capabilityOf("tool", "held")], {
    initialize: () => {
      initialized++;
      return true;
    },
  }));
  runtime.hold("held", "its initialize hung before");
  await runtime.start();
  deepStrictEqual(runtime.state("held"), {
    status: "failed",
    reason: "its initialize hung before",
  });
  strictEqual(initialized, 0);
  await runtime.setState("held", true);
  strictEqual(runtime.state("held").status, "active");
  strictEqual(initialized, 1);
  deepStrictEqual(events.map((e) => `${e.kind}:${e.pluginId}`), ["release:held"]);
  await runtime.stop();
});
