// Dotted plugin ids (`mcp.NAME`) are reserved for the plugins amber realizes for a session:
// `amber plugins add` refuses a plugin that has one, a lock entry with one (written by hand) is
// not loaded, and `amber plugin new` refuses to make one. Real subprocesses, real files.

import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { lockFile } from "./_plugin_lock.ts";
import { type Result, runAmber } from "./_subprocess.ts";

const amber = (configDir: string, ...args: string[]): Promise<Result> =>
  runAmber(configDir, args, { env: { INIT_CWD: configDir } });

async function writePlugin(dir: string, id: string): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  const file = join(dir, "mod.js");
  await Deno.writeTextFile(
    file,
    `export default {
  id: ${JSON.stringify(id)},
  version: "1.0.0",
  name: "Impostor",
  initialize: () => true,
  shutdown() {},
  capabilities: () => [],
};
`,
  );
  return file;
}

const RESERVED =
  /its id 'mcp\.everything' has a dot, and dotted ids are reserved for the plugins amber realizes for a session \(mcp\.NAME for an MCP server\)/;

Deno.test("amber plugins add refuses a dotted id, sandboxed or trusted; nothing is recorded", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  const file = await writePlugin(join(tmp.dir, "impostor"), "mcp.everything");
  for (const extra of [[], ["--trusted"]]) {
    const refused = await amber(config, "plugins", "add", file, ...extra);
    assert.equal(refused.code, 1, refused.err);
    assert.match(refused.err, RESERVED);
  }
  const lock = await Deno.readTextFile(join(config, "plugins.lock.json")).catch(() => "");
  assert.equal(lock.includes("mcp.everything"), false);
});

Deno.test("a dotted id written into the lock by hand is not loaded, and says how to drop it", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await Deno.mkdir(config, { recursive: true });
  const file = await writePlugin(join(tmp.dir, "impostor"), "mcp.everything");
  await lockFile(config, "mcp.everything", file, "Impostor");
  const list = await amber(config, "plugins", "list");
  assert.equal(list.code, 0, list.err);
  assert.match(list.err, /not loaded: its id 'mcp\.everything' has a dot/);
  assert.match(list.err, /run `amber plugins remove mcp\.everything`/);
  assert.equal(/^ {2}mcp\.everything /m.test(list.out), false, list.out);
  assert.equal((await amber(config, "plugins", "remove", "mcp.everything")).code, 0);
});

Deno.test("amber plugin new refuses a dotted id", async () => {
  await using tmp = await tempDir();
  const made = await runAmber(join(tmp.dir, "config"), ["plugin", "new", "mcp.notes"], {
    cwd: tmp.dir,
  });
  assert.equal(made.code, 2, made.err);
  assert.match(made.err, /plugin id 'mcp\.notes' is not a slug/);
  assert.equal(await Deno.stat(join(tmp.dir, "mcp.notes")).then(() => true, () => false), false);
});
