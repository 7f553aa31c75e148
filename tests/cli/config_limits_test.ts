import assert from "node:assert/strict";
import { timeoutFor } from "@amber/core";
import { readConfigFile } from "../../cli/config_file.ts";

Deno.test("config.yaml: timeouts, quarantine and secrets are read, and bad values are named", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/config.yaml`,
      [
        "timeouts:",
        "  hook: 100",
        "  gate: -1",
        "  bogus: 3",
        "  plugins:",
        "    slow: {hook: 2000, nope: 1}",
        "quarantine: {faults: 2, windowSeconds: zero}",
        "secrets: {passEnv: [GITHUB_TOKEN]}",
        "",
      ].join("\n"),
    );
    const read = await readConfigFile(dir);
    assert.deepEqual(read.config.timeouts, { hook: 100, plugins: { slow: { hook: 2000 } } });
    assert.deepEqual(read.config.quarantine, { faults: 2 });
    assert.deepEqual(read.config.secrets, { passEnv: ["GITHUB_TOKEN"] });
    const messages = read.problems.map((problem) => problem.message.slice(dir.length + 1));
    assert.deepEqual(messages, [
      "config.yaml:3:9: timeouts.gate: expected a positive number, found number -1",
      "config.yaml:4:10: timeouts.bogus: unknown field (fields: tool, toolGrace, hook, gate, " +
      "guard, compactor, action, command, wallet, import, initialize, plugins)",
      "config.yaml:6:30: timeouts.plugins.slow.nope: unknown field (fields: tool, toolGrace, " +
      "hook, gate, guard, compactor, action, command, wallet, import, initialize)",
      'config.yaml:7:40: quarantine.windowSeconds: expected a positive number, found string "zero"',
    ]);
    assert.equal(timeoutFor(read.config, "hook", "slow"), 2000);
    assert.equal(timeoutFor(read.config, "hook", "other"), 100);
    assert.equal(timeoutFor(read.config, "gate", "other"), 5000);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("config.yaml: a secrets list of anything but names is refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/config.yaml`, "secrets:\n  passEnv: GITHUB_TOKEN\n");
    const read = await readConfigFile(dir);
    assert.equal(read.config.secrets?.passEnv, undefined);
    assert.match(read.problems[0].message, /config\.yaml:2:12: secrets\.passEnv: expected a list/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
