// PluginRuntime.registerFailed: a plugin whose code could not be loaded is listed like any other,
// failed with the host's reason word for word while it is on, disabled while it is off, and
// nothing of it ever runs. register's `source` is shown back.

import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { PluginRegistrationError } from "@amber/core";
import { contents, makePlugin, makeRuntime, tempDir } from "../_helpers.ts";

const REASON = "/plugins/broken/mod.ts: cannot be imported: SyntaxError: Unexpected token";

Deno.test("registerFailed: failed with the reason as given, listed with what is known, nothing installed", async () => {
  const { runtime, registries } = makeRuntime();
  runtime.register(
    makePlugin("fine", [{ kind: "prompt", name: "p", priority: 1, render: () => "" }]),
    {
      source: "/plugins/fine/mod.ts",
    },
  );
  runtime.registerFailed({
    id: "broken",
    reason: REASON,
    source: "/plugins/broken/mod.ts",
    name: "Broken",
    version: "2.0.0",
    category: "tools",
  });
  await runtime.start();
  deepStrictEqual(runtime.state("broken"), { status: "failed", reason: REASON });
  strictEqual(runtime.state("fine").status, "active");
  const info = runtime.info("broken");
  deepStrictEqual(
    [info.plugin.name, info.plugin.version, info.plugin.category, info.source, info.loadFailure],
    ["Broken", "2.0.0", "tools", "/plugins/broken/mod.ts", REASON],
  );
  strictEqual(runtime.info("fine").source, "/plugins/fine/mod.ts");
  strictEqual(runtime.info("fine").loadFailure, undefined);
  deepStrictEqual(contents(registries).filter((e) => !e.includes(":core:")), ["prompt:fine:p"]);
  const diagnostic = runtime.diagnostics().find((d) => d.pluginId === "broken");
  deepStrictEqual([diagnostic?.where, diagnostic?.message], ["load", REASON]);
});

Deno.test("registerFailed: what is not known falls back to the id and 0.0.0", async () => {
  const { runtime } = makeRuntime();
  runtime.registerFailed({ id: "bare", reason: "gone", version: "not semver" });
  await runtime.start();
  const { plugin } = runtime.info("bare");
  deepStrictEqual([plugin.id, plugin.name, plugin.version], ["bare", "bare", "0.0.0"]);
});

Deno.test("registerFailed: off is disabled and quiet; on fails again; a stop and start fail again", async () => {
  await using tmp = await tempDir();
  const { runtime } = makeRuntime({ configDir: tmp.dir });
  runtime.registerFailed({ id: "broken", reason: REASON });
  await runtime.start();
  strictEqual(runtime.state("broken").status, "failed");

  const off = await runtime.setState("broken", false);
  strictEqual(off.state.status, "disabled");
  ok(off.path?.endsWith("plugins/broken/plugin.conf"));
  const on = await runtime.setState("broken", true);
  deepStrictEqual(on.state, { status: "failed", reason: REASON });

  await runtime.setState("broken", false);
  await runtime.stop();
  const before = runtime.diagnostics().length;
  await runtime.start();
  strictEqual(runtime.state("broken").status, "disabled");
  strictEqual(runtime.diagnostics().length, before, "a disabled broken plugin says nothing");
  await runtime.setState("broken", true);
  await runtime.stop();
  await runtime.start();
  deepStrictEqual(runtime.state("broken"), { status: "failed", reason: REASON });
});

Deno.test("registerFailed: a plugin that requires it is blocked; a taken id is refused", async () => {
  const { runtime } = makeRuntime();
  runtime.registerFailed({ id: "base", reason: REASON });
  runtime.register(makePlugin("app", [], { requires: { base: "*" } }));
  await runtime.start();
  deepStrictEqual(runtime.state("app"), {
    status: "blocked",
    reason: "plugin 'app' requires 'base', which is failed",
  });
  throws(() => runtime.registerFailed({ id: "app", reason: "x" }), PluginRegistrationError);
  throws(() => runtime.registerFailed({ id: "Not A Slug", reason: "x" }), PluginRegistrationError);
});
