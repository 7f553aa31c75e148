// Ctrl-C at the prompt arms the quit for two seconds, and the hint says for how long; once the
// time is up the hint goes and the next Ctrl-C arms again instead of quitting. Real timers: the
// waits are for the screen to change, with the harness's generous deadline, never a tight bound.

import assert from "node:assert/strict";
import { startTui } from "./_harness.ts";

const CTRL_C = "\x03";

Deno.test("the quit arming expires after two seconds and the hint goes with it", async () => {
  await using t = await startTui();
  let exited = false;
  t.exit.then(() => exited = true);
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type(CTRL_C);
  const armedAt = performance.now();
  await t.waitFor(/Ctrl-C again to quit \(within 2s\)/);
  await t.waitFor((screen) => !screen.includes("Ctrl-C again to quit"), "the hint to go");
  assert.ok(performance.now() - armedAt >= 1900, "not before its time");
  // Expired: this Ctrl-C arms again, it does not quit.
  t.terminal.type(CTRL_C);
  await t.waitFor(/Ctrl-C again to quit \(within 2s\)/);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(exited, false);
  t.terminal.type(CTRL_C);
  assert.equal(await t.exit, 0);
});

Deno.test("a key typed while armed disarms: the next Ctrl-C arms again", async () => {
  await using t = await startTui();
  let exited = false;
  t.exit.then(() => exited = true);
  await t.waitFor(/^›$/m, "the prompt");
  t.terminal.type(CTRL_C);
  await t.waitFor(/Ctrl-C again to quit/);
  t.terminal.type("x");
  await t.waitFor((screen) => !screen.includes("Ctrl-C again to quit"), "the hint to go");
  t.terminal.type(CTRL_C);
  await t.waitFor(/Ctrl-C again to quit/);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(exited, false);
  t.terminal.type(CTRL_C);
  assert.equal(await t.exit, 0);
});
