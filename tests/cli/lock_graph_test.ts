// The lock covers everything that runs: `amber plugins add` records every local file a plugin
// imports and its npm packages, every start refuses a plugin one of whose files changed (naming
// the file and `amber plugins update <id>`), and `update` accepts it, saying what changed. Real
// files, real subprocesses, with `deno task amber`'s leave to run Deno (for `deno info`) unless a
// test says otherwise.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { type Result, runAmber } from "./_subprocess.ts";
import { switchHelloOn } from "../_hello_on.ts";

const amber = (configDir: string, ...args: string[]): Promise<Result> =>
  runAmber(configDir, args, { env: { INIT_CWD: configDir }, flags: ["--allow-run"] });

// A plugin whose tool's text comes from ./helper.js, which imports ./sub/deep.js.
async function writePlugin(dir: string, extraImport = ""): Promise<string> {
  await Deno.mkdir(join(dir, "sub"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "helper.js"),
    'import { mark } from "./sub/deep.js";\nexport const greet = (who) => `hi ${who}${mark}`;\n',
  );
  await Deno.writeTextFile(join(dir, "sub", "deep.js"), 'export const mark = "!";\n');
  const file = join(dir, "mod.js");
  await Deno.writeTextFile(
    file,
    `import { greet } from "./helper.js";
${extraImport}
export default (api) => ({
  id: "greeter",
  version: "1.0.0",
  name: "Greeter",
  bound: { commands: api.exact("greeter") },
  initialize: () => true,
  shutdown() {},
  capabilities: () => [{
    kind: "command",
    name: "cmd",
    root: "greeter",
    help: "Greet",
    subtree: { say: { help: "Greet someone" } },
    handlers: { say: (arg) => greet(arg) },
  }],
});
`,
  );
  return file;
}

interface LockedGraph {
  readonly files: { path: string; sha256: string }[];
  readonly packages: { name: string; version: string; integrity?: string }[];
  readonly npm?: Record<string, string>;
}

async function lockedGraph(config: string): Promise<LockedGraph | undefined> {
  const lock = JSON.parse(await Deno.readTextFile(join(config, "plugins.lock.json")));
  return lock.plugins[0].graph;
}

Deno.test("add records every local file the plugin imports; a changed helper.js is refused naming it and `amber plugins update`; update accepts it", async () => {
  await using tmp = await tempDir();
  const root = await Deno.realPath(tmp.dir);
  const config = join(root, "config");
  await switchHelloOn(config);
  const file = await writePlugin(join(root, "greeter"));
  const added = await amber(config, "plugins", "add", file);
  strictEqual(added.code, 0, added.err);
  match(added.out, /module graph: 3 files, 0 npm packages/);
  const graph = await lockedGraph(config);
  deepStrictEqual(graph?.files.map((f) => f.path), ["helper.js", "mod.js", "sub/deep.js"]);
  strictEqual(
    (await amber(config, "cmd", "greeter", "say", "amber")).out,
    "hi amber!",
  );

  // Only an imported file changes: the entry file's own hash is as recorded.
  const helper = join(root, "greeter", "helper.js");
  const helperText = await Deno.readTextFile(helper);
  await Deno.writeTextFile(helper, "export const greet = (who) => `bye ${who}`;\n");
  const refused = `${helper}: refused: plugin 'greeter' imports it and it changed since it was ` +
    "added; run `amber plugins update greeter` to accept it";
  const list = await amber(config, "plugins", "list");
  strictEqual(list.code, 0, list.err);
  ok(list.out.includes(`failed: ${refused}`), list.out);
  ok(list.err.includes(refused), list.err);
  // The other plugins still work.
  match(list.out, /^ {2}hello +Hello +\S+ +active/m);
  strictEqual((await amber(config, "cmd", "hello", "greet", "amber")).out, "Hello, amber!");
  // A changed file never runs.
  const said = await amber(config, "cmd", "greeter", "say", "amber");
  ok(!said.out.includes("bye"), said.out);

  // A deeper file going missing is refused the same way.
  await Deno.writeTextFile(helper, helperText);
  const deep = join(root, "greeter", "sub", "deep.js");
  const deepText = await Deno.readTextFile(deep);
  await Deno.remove(deep);
  const missing = await amber(config, "plugins", "list");
  ok(
    missing.out.includes(
      `failed: ${deep}: refused: plugin 'greeter' imports it and it is missing; run \`amber plugins update greeter\``,
    ),
    missing.out,
  );
  await Deno.writeTextFile(deep, deepText);
  await Deno.writeTextFile(helper, helperText.replace("hi ", "bye "));

  // `update` records it as it is now, and says what changed.
  const update = await amber(config, "plugins", "update", "greeter");
  strictEqual(update.code, 0, update.err);
  const lines = update.out.split("\n");
  ok(lines.includes("  changed: helper.js"), update.out);
  ok(!lines.some((line) => line.includes("deep.js")), update.out);
  match(update.out, /state: active/);
  strictEqual((await amber(config, "cmd", "greeter", "say", "amber")).out, "bye amber!");
  const after = await lockedGraph(config);
  ok(
    after !== undefined && after.files.find((f) => f.path === "helper.js")?.sha256 !==
        graph?.files.find((f) => f.path === "helper.js")?.sha256,
  );

  // A new import and a dropped one show as added and removed.
  await Deno.writeTextFile(helper, 'import "./extra.js";\nexport const greet = (who) => who;\n');
  await Deno.writeTextFile(join(root, "greeter", "extra.js"), "export {};\n");
  const again = await amber(config, "plugins", "update", "greeter");
  strictEqual(again.code, 0, again.err);
  const againLines = again.out.split("\n");
  ok(againLines.includes("  added: extra.js"), again.out);
  ok(againLines.includes("  removed: sub/deep.js"), again.out);
  ok(againLines.includes("  changed: helper.js"), again.out);

  // doctor names the changed imported file, and the update command.
  await Deno.writeTextFile(join(root, "greeter", "extra.js"), "export const x = 1;\n");
  const doctor = await amber(config, "doctor");
  strictEqual(doctor.code, 1);
  match(doctor.out, /greeter: .*\/greeter\/extra\.js changed since it was added, so it is refused/);
  match(doctor.out, /what to do: `amber plugins update greeter` accepts it as it is now/);
});

Deno.test("without leave to run deno, add still records the local files, read from their imports", async () => {
  await using tmp = await tempDir();
  const root = await Deno.realPath(tmp.dir);
  const config = join(root, "config");
  const file = await writePlugin(join(root, "greeter"));
  const added = await runAmber(config, ["plugins", "add", file], { env: { INIT_CWD: config } });
  strictEqual(added.code, 0, added.err);
  const graph = await lockedGraph(config);
  deepStrictEqual(graph?.files.map((f) => f.path), ["helper.js", "mod.js", "sub/deep.js"]);
  await Deno.writeTextFile(join(root, "greeter", "sub", "deep.js"), 'export const mark = "?";\n');
  const list = await runAmber(config, ["plugins", "list"]);
  match(list.out, /failed: .*\/sub\/deep\.js: refused: plugin 'greeter' imports it/);
});

Deno.test("an old lock entry with only the entry hash still loads, with a notice to run update; the file is not rewritten", async () => {
  await using tmp = await tempDir();
  const root = await Deno.realPath(tmp.dir);
  const config = join(root, "config");
  const file = await writePlugin(join(root, "greeter"));
  strictEqual((await amber(config, "plugins", "add", file)).code, 0);
  const lockPath = join(config, "plugins.lock.json");
  const lock = JSON.parse(await Deno.readTextFile(lockPath));
  delete lock.plugins[0].graph;
  const old = `${JSON.stringify(lock, null, 2)}\n`;
  await Deno.writeTextFile(lockPath, old);
  const list = await amber(config, "plugins", "list");
  strictEqual(list.code, 0, list.err);
  match(list.out, /^ {2}greeter +Greeter +1\.0\.0 +active/m);
  ok(
    list.err.includes(
      `${file}: the lock records only this file, not the modules it imports; run \`amber plugins update greeter\` to record them all`,
    ),
    list.err,
  );
  strictEqual(await Deno.readTextFile(lockPath), old);
  const update = await amber(config, "plugins", "update", "greeter");
  strictEqual(update.code, 0, update.err);
  match(update.out, /the lock had only its entry file; now it records every module it imports/);
  strictEqual((await lockedGraph(config))?.files.length, 3);
  strictEqual((await amber(config, "plugins", "list")).err, "");
});

Deno.test("an npm package a plugin imports is recorded with its version and integrity", async () => {
  await using tmp = await tempDir();
  const root = await Deno.realPath(tmp.dir);
  const config = join(root, "config");
  const file = await writePlugin(join(root, "greeter"), 'import ms from "npm:ms@2.1.3";\nms;');
  // --no-lock: the plugin's npm import must not enter the repository's deno.lock.
  const added = await runAmber(config, ["plugins", "add", file], {
    env: { INIT_CWD: config },
    flags: ["--allow-run", "--no-lock"],
  });
  strictEqual(added.code, 0, added.err);
  match(added.out, /module graph: 3 files, 1 npm package/);
  const graph = await lockedGraph(config);
  strictEqual(graph?.packages.length, 1);
  const [pkg] = graph!.packages;
  deepStrictEqual([pkg.name, pkg.version], ["ms", "2.1.3"]);
  match(pkg.integrity ?? "", /^sha512-[A-Za-z0-9+/]+=*$/);
});

Deno.test("update of an id that is not added is a usage error naming the added plugins", async () => {
  await using tmp = await tempDir();
  const result = await amber(join(tmp.dir, "config"), "plugins", "update", "nope");
  strictEqual(result.code, 2);
  match(result.err, /'nope' is not an added plugin; added plugins: \(none\)/);
});

Deno.test("a plugin's process is held to the npm versions recorded at add: a range does not resolve anew at start", async () => {
  await using tmp = await tempDir();
  const root = await Deno.realPath(tmp.dir);
  const config = join(root, "config");
  const file = await writePlugin(join(root, "greeter"), 'import ms from "npm:ms@^2.1.0";\nms;');
  const run = (...args: string[]) =>
    runAmber(config, args, { env: { INIT_CWD: config }, flags: ["--allow-run", "--no-lock"] });
  const added = await run("plugins", "add", file);
  strictEqual(added.code, 0, added.err);
  const graph = await lockedGraph(config);
  deepStrictEqual(graph?.npm, { "npm:ms@^2.1.0": "2.1.3" });
  match((await run("plugins", "list")).out, /greeter .* active/);
  // As if the plugin had been accepted when the range resolved to 2.1.2, and Deno's cache has
  // only 2.1.3 now: the process does not quietly take 2.1.3.
  const path = join(config, "plugins.lock.json");
  const lock = JSON.parse(await Deno.readTextFile(path));
  lock.plugins[0].graph.npm["npm:ms@^2.1.0"] = "2.1.2";
  lock.plugins[0].graph.packages = [{ name: "ms", version: "2.1.2" }];
  await Deno.writeTextFile(path, JSON.stringify(lock));
  const list = await run("plugins", "list");
  match(list.out, /greeter .* failed: .*ms.*2\.1\.2/);
});
