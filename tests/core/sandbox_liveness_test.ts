// A plugin process that spins where no call waits on it is found by the liveness check and
// killed, and its plugin fails with the reason, while the runtime carries on.

import assert from "node:assert/strict";
import { loadSandboxedPlugin } from "@amber/core/sandbox";
import { makeRuntime } from "../_helpers.ts";
import { fixtureProcess } from "./_fixture_process.ts";

Deno.test("a plugin spinning from a timer, with nothing amber calls, is killed by the liveness check", async () => {
  const fixture = new URL("./_sandboxed_plugin_fixtures/timer_spin.ts", import.meta.url);
  const workspace = await Deno.makeTempDir({ prefix: "amber_liveness_" });
  const { runtime } = makeRuntime({ config: { plugins: {}, timeouts: { hook: 300 } } });
  const sandboxed = await loadSandboxedPlugin({
    ...fixtureProcess(fixture, "timer_spin", workspace),
    livenessMs: 100,
    onFault: (fault) => runtime.fail(fault.pluginId, fault.where, fault.message),
  });
  try {
    runtime.register(sandboxed.plugin);
    await runtime.start();
    for (let i = 0; i < 100 && runtime.state("timer_spin").status === "active"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await runtime.settled();
    const state = runtime.state("timer_spin");
    assert.equal(state.status, "failed");
    assert.match(
      state.status === "failed" ? state.reason : "",
      /killed: plugin 'timer_spin': a liveness check did not answer within 300 ms/,
    );
  } finally {
    await runtime.stop();
    await sandboxed.close();
    await Deno.remove(workspace, { recursive: true });
  }
});
