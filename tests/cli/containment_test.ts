// Containment end to end: real `amber` subprocesses with real third-party plugins that are
// careless (a promise nobody awaits, a throw from a timer) or hang (a top-level await, an
// initialize, a command handler that never settles), and the deadlines of wallet polls. The
// plugins are trusted: they run inside amber, where amber itself must contain them (a sandboxed
// plugin's process is simply killed: tests/cli/sandbox_attack_test.ts).

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { SessionFile } from "@amber/core/kernel";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { createWalletRegistry } from "@amber/registries/wallets";
import { EventBus, PluginRuntime } from "@amber/core";
import { createRegistries } from "@amber/registries";
import { attributeError, pluginFolders } from "../../cli/host_faults.ts";
import { readPluginLock } from "../../cli/third_party.ts";
import { makePlugin, tempDir } from "../_helpers.ts";
import { lockEntry, sha256, writeLock } from "./_plugin_lock.ts";
import { type Result, ROOT, runAmber, runDeno } from "./_subprocess.ts";

const KEY = { OPENAI_API_KEY: "sk-test-key-1234" };

function amber(configDir: string, ...args: string[]): Promise<Result> {
  return runAmber(configDir, args, { env: { INIT_CWD: configDir, ...KEY } });
}

// Written by hand as `amber plugins add --trusted` would record it.
async function lockTrusted(configDir: string, id: string, file: string): Promise<void> {
  const entry = { ...lockEntry(id, file, await sha256(file)), trusted: true };
  await writeLock(configDir, [entry]);
}

async function lines(path: string): Promise<number> {
  try {
    return (await Deno.readTextFile(path)).split("\n").filter((line) => line !== "").length;
  } catch {
    return 0;
  }
}

async function faultRecord(configDir: string): Promise<Record<string, Record<string, unknown>>> {
  try {
    return JSON.parse(await Deno.readTextFile(join(configDir, "faults.json"))).plugins;
  } catch {
    return {};
  }
}

const CARELESS = `export default (api) => ({
  id: "careless",
  version: "1.0.0",
  name: "Careless",
  bound: { tools: api.exact("careless") },
  initialize: () => true,
  shutdown() {},
  capabilities: () => [{
    kind: "tool",
    name: "careless",
    tools: [{
      name: "careless",
      description: "Forgets an await, and throws from a timer.",
      parameters: { type: "object", properties: {} },
      readOnly: true,
      execute: () => {
        Promise.reject(new Error("forgot to await this"));
        setTimeout(() => { throw new Error("thrown from a timer"); }, 0);
        return { ok: true, output: "done" };
      },
    }],
  }],
});
`;

// Adds CARELESS (written under `dir`) to `config`, then runs one turn against `server` whose model
// calls its tool once and then answers "All done.".
async function runCareless(dir: string, config: string, server: FakeProvider): Promise<Result> {
  const pluginDir = join(dir, "careless");
  await Deno.mkdir(pluginDir, { recursive: true });
  await Deno.writeTextFile(join(pluginDir, "mod.js"), CARELESS);
  const added = await amber(config, "plugins", "add", join(pluginDir, "mod.js"), "--trusted");
  strictEqual(added.code, 0, added.err);
  server.script(
    { toolCalls: [{ name: "careless", arguments: {} }] },
    { text: "All done." },
  );
  return amber(config, "run", "go", "--base-url", `${server.url}/v1`);
}

Deno.test("amber run contains a plugin's floating rejection and timer throw, names the plugin, and finishes the turn", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const result = await runCareless(tmp.dir, config, server);
  strictEqual(result.code, 0, result.err);
  strictEqual(result.out, "All done.");
  match(
    result.err,
    /amber: plugin 'careless' \(a promise nobody awaited rejected \(a forgotten await\?\)\): forgot to await this \(at file:\/\/.*careless\/mod\.js\)/,
  );
  match(
    result.err,
    /amber: plugin 'careless' \(an uncaught error \(thrown from a timer or a callback\)\): thrown from a timer \(at file:\/\/.*careless\/mod\.js\)/,
  );
  ok(!/^\s+at /m.test(result.err), `no raw stack: ${result.err}`);
  strictEqual(server.chats.length, 2, "the turn went on to the second model call");
  // Both steps were committed to the session file.
  const [id] = [...Deno.readDirSync(join(config, "sessions"))].map((e) => e.name.slice(0, -6));
  strictEqual((await SessionFile.load(config, id)).steps.length, 2);
  // Remembered for amber doctor.
  const faults = (await faultRecord(config)).careless?.faults as { where: string }[];
  deepStrictEqual(faults.map((f) => f.where).sort(), [
    "a promise nobody awaited rejected (a forgotten await?)",
    "an uncaught error (thrown from a timer or a callback)",
  ]);
});

Deno.test("a plugin that faults too often during amber run is quarantined, and amber doctor shows it", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await Deno.mkdir(config, { recursive: true });
  await Deno.writeTextFile(
    join(config, "config.yaml"),
    "quarantine:\n  faults: 2\n  windowSeconds: 60\n",
  );
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const result = await runCareless(tmp.dir, config, server);
  strictEqual(result.code, 0, result.err);
  strictEqual(result.out, "All done.");
  match(
    result.err,
    /amber: plugin 'careless' \(quarantine\): switched off for this session after 2 faults within 60 s \(the last: .*\); switch it back on with `\/set plugin on careless`/,
  );
  // The user's choice on disk is untouched: it is back next time.
  strictEqual(
    await Deno.stat(join(config, "plugins", "careless")).then(() => true, () => false),
    false,
  );

  const doctor = await amber(config, "doctor");
  strictEqual(doctor.code, 1);
  match(doctor.out, /! careless: quarantined once, last at .*: 2 faults within 60 s/);
});

Deno.test("an import that hangs is abandoned at its deadline, held, and imported again after amber plugins enable", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await Deno.mkdir(config, { recursive: true });
  await Deno.writeTextFile(join(config, "config.yaml"), "timeouts:\n  import: 300\n");
  const marker = join(tmp.dir, "imported.txt");
  const file = join(tmp.dir, "hang.js");
  await Deno.writeTextFile(
    file,
    `Deno.writeTextFileSync(${JSON.stringify(marker)}, "imported\\n", { append: true });
await new Promise((resolve) => setTimeout(resolve, 60_000));
export default { id: "hang", version: "1.0.0", name: "Hang", initialize: () => true,
  shutdown() {}, capabilities: () => [] };
`,
  );
  await lockTrusted(config, "hang", file);

  let started = performance.now();
  const first = await amber(config, "plugins", "list");
  // The hung import's timer would keep the process for a minute: it ends when the command does.
  ok(performance.now() - started < 20_000, "the process did not wait for the abandoned import");
  strictEqual(first.code, 0, first.err);
  match(first.err, /the import of plugin 'hang' did not finish within 300 ms/);
  match(first.err, /amber does not import it again until `amber plugins enable hang`/);
  match(first.out, /hang/);
  strictEqual(await lines(marker), 1);
  strictEqual((await faultRecord(config)).hang?.hold !== undefined, true);

  started = performance.now();
  const second = await amber(config, "plugins", "list");
  strictEqual(second.code, 0, second.err);
  match(
    second.err,
    /not imported: its import hung at .*`amber plugins enable hang` tries it again/,
  );
  strictEqual(await lines(marker), 1, "not imported again");

  const enabled = await amber(config, "plugins", "enable", "hang");
  match(enabled.out, /hang: failed: .*amber imports it again at its next start/);
  strictEqual((await faultRecord(config)).hang, undefined, "enable clears the record");
  const third = await amber(config, "plugins", "list");
  match(third.err, /did not finish within 300 ms/);
  strictEqual(await lines(marker), 2, "imported again after enable");
});

Deno.test("an initialize that hangs is held from the next start on, until amber plugins enable", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await Deno.mkdir(config, { recursive: true });
  await Deno.writeTextFile(
    join(config, "config.yaml"),
    "timeouts:\n  plugins:\n    slowstart:\n      initialize: 300\n",
  );
  const marker = join(tmp.dir, "initialized.txt");
  const pluginDir = join(tmp.dir, "slowstart");
  await Deno.mkdir(pluginDir, { recursive: true });
  await Deno.writeTextFile(
    join(pluginDir, "mod.js"),
    `export default { id: "slowstart", version: "1.0.0", name: "Slow start",
  initialize: () => {
    Deno.writeTextFileSync(${JSON.stringify(marker)}, "init\\n", { append: true });
    return new Promise((resolve) => setTimeout(() => resolve(true), 60_000));
  },
  shutdown() {}, capabilities: () => [] };
`,
  );
  // Written by hand: `amber plugins add` would start it, and so be the first to wait for it.
  await lockTrusted(config, "slowstart", join(pluginDir, "mod.js"));

  const started = performance.now();
  const first = await amber(config, "plugins", "info", "slowstart");
  ok(performance.now() - started < 20_000, "the process did not wait for the abandoned initialize");
  match(first.err, /initialize did not finish within 300 ms/);
  match(first.err, /amber does not start it again until `amber plugins enable slowstart`/);
  strictEqual(await lines(marker), 1);

  const second = await amber(config, "plugins", "info", "slowstart");
  match(second.out, /state: failed: not started: its initialize hung at /);
  strictEqual(await lines(marker), 1, "initialize was not called again");

  const enabled = await amber(config, "plugins", "enable", "slowstart");
  match(enabled.out, /initialize did not finish within 300 ms/);
  strictEqual(await lines(marker), 2, "enable tries it again at once");

  // Fixed and added again: the hold on what it was is forgotten, and it starts.
  await Deno.writeTextFile(
    join(pluginDir, "mod.js"),
    `export default { id: "slowstart", version: "1.0.1", name: "Slow start",
  initialize: () => true, shutdown() {}, capabilities: () => [] };
`,
  );
  const readded = await amber(config, "plugins", "add", join(pluginDir, "mod.js"), "--trusted");
  strictEqual(readded.code, 0, readded.err);
  strictEqual((await faultRecord(config)).slowstart, undefined);
  match((await amber(config, "plugins", "info", "slowstart")).out, /state: active/);
});

Deno.test("amber plugins add gives up on a plugin whose loading hangs, recording nothing", async () => {
  await using tmp = await tempDir();
  const file = join(tmp.dir, "forever.js");
  await Deno.writeTextFile(
    file,
    "await new Promise(() => {});\nexport default { id: 'forever' };\n",
  );
  // In a process of its own: an import that never settles fails the module that waits for it.
  const script = join(tmp.dir, "add.ts");
  await Deno.writeTextFile(
    script,
    `import { addThirdPartyPlugin } from ${JSON.stringify(join(ROOT, "cli", "third_party.ts"))};
try {
  await addThirdPartyPlugin(${JSON.stringify(tmp.dir)}, ${JSON.stringify(file)}, {
    bundledIds: [],
    timeoutMs: 100,
  });
} catch (error) {
  console.log(error.name + ": " + error.message);
}
Deno.exit(0);
`,
  );
  const result = await runDeno(["run", "-A", "--config", join(ROOT, "deno.json"), script]);
  strictEqual(result.code, 0, result.err);
  match(
    result.out,
    /^ThirdPartyPluginError: .*forever\.js: loading it did not finish within 100 ms; nothing was recorded$/,
  );
  strictEqual((await readPluginLock(tmp.dir)).plugins.length, 0);
});

Deno.test("amber cmd abandons a command handler at its deadline and says so", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await Deno.mkdir(config, { recursive: true });
  await Deno.writeTextFile(join(config, "config.yaml"), "timeouts:\n  command: 300\n");
  const pluginDir = join(tmp.dir, "stuck");
  await Deno.mkdir(pluginDir, { recursive: true });
  await Deno.writeTextFile(
    join(pluginDir, "mod.js"),
    `export default (api) => ({ id: "stuck", version: "1.0.0", name: "Stuck",
  bound: { commands: api.exact("stuck") },
  initialize: () => true, shutdown() {},
  capabilities: () => [{ kind: "command", name: "cmd", root: "stuck", help: "Never answers",
    subtree: { go: { help: "Go" } },
    handlers: { go: () => new Promise((resolve) => setTimeout(() => resolve("late"), 60_000)) } }],
});
`,
  );
  const added = await amber(config, "plugins", "add", join(pluginDir, "mod.js"), "--trusted");
  strictEqual(added.code, 0, added.err);
  const started = performance.now();
  const result = await amber(config, "cmd", "stuck", "go");
  ok(performance.now() - started < 20_000, "the process did not wait for the handler");
  strictEqual(result.code, 1);
  match(
    result.err,
    /amber: command '\/stuck go' of plugin 'stuck' did not finish within 300 ms; it was abandoned/,
  );
  const faults = (await faultRecord(config)).stuck?.faults as { where: string }[];
  deepStrictEqual(faults.map((f) => f.where), ["command '/stuck go'"]);
});

Deno.test("a wallet poll gives up at its owner's configured wallet deadline", async () => {
  const wallets = createWalletRegistry();
  let signal: AbortSignal | undefined;
  wallets.install("deepseek", {
    kind: "wallet",
    name: "balance",
    provider: "deepseek",
    fetch: (request) => {
      signal = request.signal;
      return new Promise(() => {});
    },
  }, {
    owner: "deepseek",
    tools: { get: () => undefined, list: () => [] },
    events: new EventBus(),
    config: () => ({
      plugins: {},
      timeouts: { wallet: 60_000, plugins: { deepseek: { wallet: 30 } } },
    }),
    host: {},
    workspace: { root: "/tmp" },
  });
  const settings = { provider: "deepseek", baseUrl: "https://api.deepseek.com", apiKey: "k" };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) => timer = setTimeout(() => resolve("late"), 2_000));
  const outcome = await Promise.race([wallets.refresh(settings).then(() => "settled"), late]);
  clearTimeout(timer);
  wallets.dispose();
  strictEqual(outcome, "settled");
  strictEqual(signal?.aborted, true);
  strictEqual(wallets.readout(settings), "-");
});

Deno.test("an error whose stack runs through plugins/<id>/ is a bundled plugin's; the deepest folder wins", async () => {
  await using tmp = await tempDir();
  const runtime = new PluginRuntime({ registries: createRegistries() });
  runtime.register(makePlugin("tool_bash"));
  runtime.register(makePlugin("hello"));
  const folders = await pluginFolders(runtime, tmp.dir);
  const bash = new URL("../../plugins/tool_bash/", import.meta.url).href;
  deepStrictEqual(folders.find((f) => f.pluginId === "tool_bash"), {
    pluginId: "tool_bash",
    folder: bash,
  });
  const error = new Error("late");
  error.stack = `Error: late\n    at Timeout.run (${bash}mod.ts:12:3)\n` +
    `    at file:///amber/core/kernel/run.ts:1:1`;
  strictEqual(attributeError(error, folders), "tool_bash");
  const nested = [...folders, { pluginId: "inner", folder: `${bash}vendor/` }];
  error.stack = `Error: late\n    at x (${bash}vendor/lib.js:1:1)`;
  strictEqual(attributeError(error, nested), "inner");
  strictEqual(attributeError("a rejected string", folders), undefined);
});

Deno.test("switching on a plugin amber remembers no fault of writes no fault record", async () => {
  await using tmp = await tempDir();
  const result = await amber(tmp.dir, "plugins", "enable", "hello");
  strictEqual(result.code, 0, result.err);
  strictEqual(await Deno.stat(join(tmp.dir, "faults.json")).then(() => true, () => false), false);
});
