// Third-party plugins end to end: `amber plugins add|remove` and every start loading what the
// lock records, in real subprocesses with the permissions of `deno task amber` (net to loopback
// only), against real plugin files and a real config directory.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { VERSION } from "@amber/cli";
import { tempDir } from "../_helpers.ts";
import { lockFile, sha256 } from "./_plugin_lock.ts";
import { type Result, ROOT, runAmber } from "./_subprocess.ts";
import { switchHelloOn } from "../_hello_on.ts";

const amber = (configDir: string, ...args: string[]): Promise<Result> =>
  runAmber(configDir, args, { env: { INIT_CWD: configDir } });

// A plugin that needs nothing from amber at run time: a factory over the host API, with a tool
// and a command; `extra` goes into the plugin object (requires, a renamed id...).
function pluginSource(id: string, tool: string, extra = ""): string {
  return `import { suffix } from "./impl.ts";
export default (api) => ({
  id: ${JSON.stringify(id)},
  version: "1.2.3",
  name: "Shouter " + api.version,
  category: api.PluginCategory.Tools,
  bound: { tools: api.exact(${JSON.stringify(tool)}), commands: api.exact(${JSON.stringify(id)}) },
  initialize: () => true,
  shutdown() {},
  capabilities: () => [
    {
      kind: "tool",
      name: ${JSON.stringify(tool)},
      tools: [{
        name: ${JSON.stringify(tool)},
        description: "Shout the text.",
        parameters: { type: "object", properties: { text: { type: "string" } } },
        readOnly: true,
        execute: (args) => ({ ok: true, output: args.text.toUpperCase() + suffix }),
      }],
    },
    {
      kind: "command",
      name: "cmd",
      root: ${JSON.stringify(id)},
      help: "Shout",
      subtree: { say: { help: "Shout it" } },
      handlers: { say: (arg) => arg.toUpperCase() + suffix },
    },
  ],
  ${extra}
});
`;
}

async function writePlugin(
  dir: string,
  id = "shouter",
  tool = "shout",
  extra = "",
): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "impl.ts"), 'export const suffix: string = "!";\n');
  const file = join(dir, "mod.js");
  await Deno.writeTextFile(file, pluginSource(id, tool, extra));
  return file;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

// Every file under `dir` with its contents, sorted by path: what a rejected add must not touch.
async function snapshot(dir: string): Promise<[string, string][]> {
  const files: [string, string][] = [];
  const walk = async (at: string): Promise<void> => {
    for await (const item of Deno.readDir(at)) {
      const path = join(at, item.name);
      if (item.isDirectory) await walk(path);
      else files.push([path, await Deno.readTextFile(path)]);
    }
  };
  await walk(dir);
  return files.sort(([a], [b]) => a.localeCompare(b));
}

Deno.test("add a local plugin: listed with its source, its tool and command work; disable removes them; remove drops it", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await switchHelloOn(config);
  const file = await writePlugin(join(tmp.dir, "shouter"));

  const added = await amber(config, "plugins", "add", file);
  strictEqual(added.code, 0, added.err);
  match(added.out, new RegExp(`^shouter 1\\.2\\.3: Shouter ${VERSION}, added from ${file}$`, "m"));
  match(added.out, /^ {2}state: active \(1 tool, 1 command\)$/m);
  const lock = JSON.parse(await Deno.readTextFile(join(config, "plugins.lock.json")));
  strictEqual(lock.version, 1);
  strictEqual(lock.plugins.length, 1);
  const [entry] = lock.plugins;
  deepStrictEqual(
    [entry.id, entry.spec, entry.kind, entry.resolved, entry.sha256],
    ["shouter", file, "file", `file://${file}`, await sha256(file)],
  );
  ok(!Number.isNaN(Date.parse(entry.addedAt)));

  const list = await amber(config, "plugins", "list");
  strictEqual(list.code, 0, list.err);
  strictEqual(list.err, "");
  match(
    list.out,
    new RegExp(
      `^ {2}shouter +Shouter ${VERSION} +1\\.2\\.3 +active +.*  ${file} \\(sandboxed\\)$`,
      "m",
    ),
  );
  match(list.out, /^ {2}hello +Hello +0\.1\.0 +active +1 tool, 1 command +bundled$/m);
  match((await amber(config, "plugins", "info", "shouter")).out, new RegExp(`source: ${file}`));

  const tools = await amber(config, "tools");
  deepStrictEqual(
    tools.out.split("\n").map((l) => l.split(/\s{2,}/)).find((row) => row[0] === "shout"),
    ["shout", "shouter", "read-only", "never"],
  );
  strictEqual((await amber(config, "cmd", "shouter", "say", "hi")).out, "HI!");

  const off = await amber(config, "plugins", "disable", "shouter");
  strictEqual(off.code, 0, off.err);
  strictEqual((await amber(config, "tools")).out.includes("shout "), false);
  const gone = await amber(config, "cmd", "shouter", "say", "hi");
  strictEqual(gone.code, 2);
  match((await amber(config, "plugins", "list")).out, /^ {2}shouter +.* disabled /m);

  const on = await amber(config, "plugins", "enable", "shouter");
  strictEqual(on.code, 0, on.err);
  strictEqual((await amber(config, "cmd", "shouter", "say", "hi")).out, "HI!");

  const removed = await amber(config, "plugins", "remove", "shouter");
  strictEqual(removed.code, 0, removed.err);
  match(removed.out, /^shouter: removed from .*plugins\.lock\.json/);
  match(removed.out, /plugins\/shouter\/plugin\.conf, if any, is left as it is/);
  ok(await exists(join(config, "plugins", "shouter", "plugin.conf")));
  deepStrictEqual(JSON.parse(await Deno.readTextFile(join(config, "plugins.lock.json"))), {
    version: 1,
    plugins: [],
  });
  const after = await amber(config, "plugins", "list");
  strictEqual(after.out.includes("shouter"), false);
  strictEqual((await amber(config, "tools")).out.includes("shout "), false);
});

Deno.test("a relative path and a directory are recorded as the absolute real path of the file", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await Deno.mkdir(config, { recursive: true });
  const dir = join(tmp.dir, "pkg");
  await writePlugin(dir);
  await Deno.rename(join(dir, "mod.js"), join(dir, "mod.ts"));
  // INIT_CWD is the config dir: ../pkg is the directory, found through its mod.ts.
  const added = await amber(config, "plugins", "add", "../pkg");
  strictEqual(added.code, 0, added.err);
  const real = await Deno.realPath(join(dir, "mod.ts"));
  strictEqual(
    JSON.parse(await Deno.readTextFile(join(config, "plugins.lock.json"))).plugins[0].spec,
    real,
  );
});

Deno.test("a tampered plugin is refused, naming the file, both hashes and how to accept it; adding it again accepts it", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await switchHelloOn(config);
  const file = await writePlugin(join(tmp.dir, "shouter"));
  strictEqual((await amber(config, "plugins", "add", file)).code, 0);
  const before = await sha256(file);
  await Deno.writeTextFile(file, "// changed behind amber's back\n", { append: true });
  const after = await sha256(file);

  const list = await amber(config, "plugins", "list");
  strictEqual(list.code, 0, list.err);
  const reason =
    `${file}: refused: its sha256 changed since it was added (expected ${before}, found ${after}); run \`amber plugins add ${file}\` again to accept it`;
  ok(list.out.includes(`failed: ${reason}`), list.out);
  ok(list.err.includes(`amber: plugin 'shouter' (load): ${reason}`), list.err);
  // The refused code never ran: no tool, no command; the bundled plugins are all there.
  const tools = await amber(config, "tools");
  strictEqual(tools.out.includes("shout "), false);
  match(tools.out, /^greet +hello/m);
  match((await amber(config, "plugins", "info", "shouter")).out, /state: failed: .*refused/);
  strictEqual((await amber(config, "plugins", "enable", "shouter")).code, 1);

  const accepted = await amber(config, "plugins", "add", file);
  strictEqual(accepted.code, 0, accepted.err);
  match(accepted.out, /accepted again \(its source changed\)/);
  match(accepted.out, new RegExp(`sha256 ${after}`));
  const again = await amber(config, "plugins", "list");
  strictEqual(again.err, "");
  match(again.out, /^ {2}shouter +.* active /m);
});

Deno.test("a broken plugin is refused at add with the file and the cause, and nothing is recorded", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await switchHelloOn(config);
  const cases: [string, string, RegExp][] = [
    ["syntax.ts", "export default {,\n", /cannot be imported: SyntaxError: .*syntax\.ts:1:/],
    ["throws.ts", 'throw new Error("kaput");\n', /cannot be imported: Error: kaput/],
    ["nodefault.ts", "export const plugin = 1;\n", /there is no default export/],
    [
      "shape.ts",
      'export default { id: "shape", version: "1.0.0", name: "Shape" };\n',
      /the default export is not a plugin: initialize is not a function/,
    ],
    [
      "factory.ts",
      'export default () => { throw new RangeError("no"); };\n',
      /the default export \(a factory\) threw: RangeError: no/,
    ],
    ["notes.txt", "hello\n", /a plugin is a \.ts or \.js file/],
    ["missing.ts", "", /no such file or directory/],
  ];
  for (const [name, text, cause] of cases) {
    const file = join(tmp.dir, name);
    if (name !== "missing.ts") await Deno.writeTextFile(file, text);
    const result = await amber(config, "plugins", "add", file);
    strictEqual(result.code, 1, `${name}: ${result.out}`);
    ok(result.err.startsWith(`amber: ${file}: `), result.err);
    match(result.err, cause);
  }
  strictEqual(await exists(join(config, "plugins.lock.json")), false);
  strictEqual((await amber(config, "cmd", "hello", "greet", "amber")).out, "Hello, amber!");
});

Deno.test("a plugin that breaks after it was added is failed and named while every other plugin works", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await switchHelloOn(config);
  const file = await writePlugin(join(tmp.dir, "shouter"));
  strictEqual((await amber(config, "plugins", "add", file)).code, 0);
  // The entry file is unchanged; a module it imports now throws at import, and is refused
  // before it runs, since the lock records every module of the plugin.
  const impl = join(tmp.dir, "shouter", "impl.ts");
  await Deno.writeTextFile(
    impl,
    'export const suffix: string = "!";\nthrow new Error("impl gone");\n',
  );
  const refused =
    `${impl}: refused: plugin 'shouter' imports it and it changed since it was added; ` +
    "run `amber plugins update shouter` to accept it";
  const list = await amber(config, "plugins", "list");
  strictEqual(list.code, 0, list.err);
  ok(list.out.includes(`failed: ${refused}`), list.out);
  ok(list.err.includes(`plugin 'shouter' (load): ${refused}`), list.err);
  ok(!list.err.includes("impl gone"), list.err);
  match(list.out, /^ {2}hello +Hello +0\.1\.0 +active/m);
  strictEqual((await amber(config, "cmd", "hello", "greet", "amber")).out, "Hello, amber!");

  // Switched off, it is disabled, and quiet; switched on, it fails again with the same reason.
  strictEqual((await amber(config, "plugins", "disable", "shouter")).code, 0);
  const quiet = await amber(config, "plugins", "list");
  match(quiet.out, /^ {2}shouter +.* disabled /m);
  strictEqual(quiet.err, "");
  const on = await amber(config, "plugins", "enable", "shouter");
  strictEqual(on.code, 1);
  ok(on.out.includes(`shouter: failed: ${refused}`), on.out);
  // Accepting it imports it, so the module that throws is refused there, and nothing recorded.
  const update = await amber(config, "plugins", "update", "shouter");
  strictEqual(update.code, 1);
  match(update.err, /impl gone/);
});

Deno.test("lock entries for a syntax error, a wrong shape and a missing file are each failed with the file and the cause", async () => {
  await using tmp = await tempDir();
  const cases: [string, string, RegExp][] = [
    ["syntax.js", "export default {,\n", /cannot be imported: SyntaxError: /],
    ["shape.js", "export default 42;\n", /the default export is not a plugin: it is a number/],
    [
      "renamed.js",
      pluginSource("other", "shout"),
      /its id is now 'other', but it was added as 'broken'; run `amber plugins add .*renamed\.js` again/,
    ],
  ];
  for (const [name, text, cause] of cases) {
    const config = join(tmp.dir, `config-${name}`);
    await Deno.mkdir(config);
    await switchHelloOn(config);
    const file = join(tmp.dir, name);
    await Deno.writeTextFile(file, text);
    await Deno.writeTextFile(join(tmp.dir, "impl.ts"), 'export const suffix: string = "!";\n');
    await lockFile(config, "broken", file, "Plugin broken");
    const list = await amber(config, "plugins", "list");
    strictEqual(list.code, 0, list.err);
    const line = list.out.split("\n").find((l) => l.startsWith("  broken "));
    ok(line?.includes(`failed: ${file}: `), list.out);
    match(line!, cause);
    match(list.out, /^ {2}hello +Hello +0\.1\.0 +active/m);
  }
  const config = join(tmp.dir, "config-missing");
  await Deno.mkdir(config);
  const file = join(tmp.dir, "syntax.js");
  await lockFile(config, "broken", file, "Plugin broken");
  await Deno.remove(file);
  const list = await amber(config, "plugins", "info", "broken");
  strictEqual(list.code, 0, list.err);
  match(list.out, new RegExp(`state: failed: ${file}: no such file or directory`));
});

Deno.test("versions that are not strict semver are refused at add naming the file and the field; the lock and config are untouched", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  // A config directory with something in it: a lock with one plugin, its state, a config file.
  const good = await writePlugin(join(tmp.dir, "good"));
  strictEqual((await amber(config, "plugins", "add", good)).code, 0);
  strictEqual((await amber(config, "plugins", "disable", "shouter")).code, 0);
  await Deno.writeTextFile(join(config, "config.yaml"), "model: gpt-5\n");
  const before = await snapshot(config);
  ok(before.some(([path]) => path.endsWith("plugin.conf")), JSON.stringify(before));

  for (const version of ["01.0.0", "1.0.0-", "1.0.0+"]) {
    for (const factory of [true, false]) {
      const dir = join(tmp.dir, `v${version}-${factory}`);
      await Deno.mkdir(dir);
      const file = join(dir, "mod.js");
      const plugin = `{ id: "versioned", version: ${JSON.stringify(version)}, name: "Versioned", ` +
        "initialize: () => true, shutdown() {}, capabilities: () => [] }";
      await Deno.writeTextFile(file, `export default ${factory ? `() => (${plugin})` : plugin};\n`);
      const result = await amber(config, "plugins", "add", file);
      const what = `${version} (${factory ? "a factory" : "an object"}): ${result.err}`;
      strictEqual(result.code, 1, what);
      ok(result.err.startsWith(`amber: ${file}: the default export `), what);
      ok(
        result.err.includes(`: version '${version}' is not semver (e.g. 1.0.0)`),
        what,
      );
      strictEqual(result.out, "", what);
      deepStrictEqual(await snapshot(config), before, what);
    }
  }
});

Deno.test("a lock entry whose plugin now has a version that is not strict semver is failed at load, as at add", async () => {
  await using tmp = await tempDir();
  for (const version of ["01.0.0", "1.0.0-", "1.0.0+"]) {
    const config = join(tmp.dir, `config-${version}`);
    await Deno.mkdir(config);
    await switchHelloOn(config);
    const file = join(tmp.dir, `v${version}.js`);
    await Deno.writeTextFile(
      file,
      `export default { id: "broken", version: ${JSON.stringify(version)}, name: "Broken", ` +
        "initialize: () => true, shutdown() {}, capabilities: () => [] };\n",
    );
    await lockFile(config, "broken", file, "Plugin broken");
    const list = await amber(config, "plugins", "list");
    strictEqual(list.code, 0, list.err);
    const line = list.out.split("\n").find((l) => l.startsWith("  broken "));
    ok(
      line?.includes(
        `failed: ${file}: the default export is not a plugin: version '${version}' is not semver`,
      ),
      list.out,
    );
    match(list.out, /^ {2}hello +Hello +0\.1\.0 +active/m);
  }
});

Deno.test("ids: a bundled id is refused at add and skipped at load; remove refuses a bundled plugin and an unknown id", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await switchHelloOn(config);
  const file = await writePlugin(join(tmp.dir, "impostor"), "hello", "shout");
  const refused = await amber(config, "plugins", "add", file);
  strictEqual(refused.code, 1);
  match(refused.err, /its id 'hello' is taken by a bundled plugin/);

  await Deno.mkdir(config, { recursive: true });
  await lockFile(config, "hello", file, "Plugin hello");
  const list = await amber(config, "plugins", "list");
  strictEqual(list.code, 0, list.err);
  match(
    list.err,
    /plugin 'hello' \(load\): .*not loaded: its id 'hello' is taken by a bundled plugin/,
  );
  match(list.out, /^ {2}hello +Hello +0\.1\.0 +active +1 tool, 1 command +bundled$/m);
  // In the lock, `remove hello` drops the entry; the bundled plugin is untouched.
  strictEqual((await amber(config, "plugins", "remove", "hello")).code, 0);
  const bundled = await amber(config, "plugins", "remove", "hello");
  strictEqual(bundled.code, 1);
  match(
    bundled.err,
    /'hello' is bundled with amber and cannot be removed; switch it off with `amber plugins disable hello`/,
  );
  const unknown = await amber(config, "plugins", "remove", "nope");
  strictEqual(unknown.code, 2);
  match(unknown.err, /'nope' is not an added plugin; added plugins: \(none\)/);

  // Two specs cannot share an id.
  const first = await writePlugin(join(tmp.dir, "a"));
  const second = await writePlugin(join(tmp.dir, "b"));
  strictEqual((await amber(config, "plugins", "add", first)).code, 0);
  const clash = await amber(config, "plugins", "add", second);
  strictEqual(clash.code, 1);
  match(
    clash.err,
    /plugin id 'shouter' is already added from .*a\/mod\.js; run `amber plugins remove shouter` first/,
  );
});

Deno.test("a plugin's requirement with a semver range is honoured, and a corrupt lock is reported without stopping the host", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  const file = await writePlugin(
    join(tmp.dir, "shouter"),
    "shouter",
    "shout",
    'requires: { hello: "^0.1.0" },',
  );
  strictEqual((await amber(config, "plugins", "add", file)).code, 0);
  match((await amber(config, "plugins", "info", "shouter")).out, /requires: hello \^0\.1\.0/);
  strictEqual((await amber(config, "plugins", "disable", "hello", "--cascade")).code, 0);
  match(
    (await amber(config, "plugins", "list")).out,
    /shouter .*blocked: plugin 'shouter' requires 'hello', which is off/,
  );

  await Deno.writeTextFile(join(config, "plugins.lock.json"), "{ not json");
  const list = await amber(config, "plugins", "list");
  strictEqual(list.code, 0, list.err);
  match(list.err, /plugins\.lock\.json: not valid JSON/);
  const add = await amber(config, "plugins", "add", file);
  strictEqual(add.code, 1);
  match(add.err, /plugins\.lock\.json: not valid JSON/);
  strictEqual(await Deno.readTextFile(join(config, "plugins.lock.json")), "{ not json");
});

Deno.test("npm: and jsr: specs that cannot be plugins fail naming the spec and the cause; nothing is recorded", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  // semver is in the workspace's lock already: resolving it changes nothing on disk.
  const npm = await amber(config, "plugins", "add", "npm:semver@^7.8.6");
  strictEqual(npm.code, 1);
  match(
    npm.err,
    /^amber: npm:semver@\^7\.8\.6 \(.*semver.*\): the default export is not a plugin: /,
  );
  // JSR cannot be reached from these machines (nor from this test's permissions).
  const jsr = await amber(config, "plugins", "add", "jsr:@std/path");
  strictEqual(jsr.code, 1);
  match(
    jsr.err,
    /^amber: jsr:@std\/path: cannot fetch https:\/\/jsr\.io\/@std\/path\/meta\.json: \S/,
  );
  const bad = await amber(config, "plugins", "add", "npm:");
  strictEqual(bad.code, 1);
  match(bad.err, /npm:: not an npm specifier/);
  strictEqual(await exists(join(config, "plugins.lock.json")), false);
});

Deno.test("a trusted npm: plugin amber was not installed with is refused with what to do; deno.lock and node_modules untouched", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  const lock = await Deno.readTextFile(join(ROOT, "deno.lock"));
  // runAmber runs amber as `deno task amber` does: npm packages read as installed
  // (`--node-modules-dir=manual`; the installed command reads none: its build holds them).
  const add = await runAmber(
    config,
    ["plugins", "add", "npm:amber-test-absent-package@1.0.0", "--trusted"],
  );
  strictEqual(add.code, 1);
  match(
    add.err,
    /npm:amber-test-absent-package@1\.0\.0 is not installed where amber runs \(.*\): add it to amber's imports \(`deno add npm:amber-test-absent-package@1\.0\.0` in amber's folder\), then run `deno task install` again/,
  );
  strictEqual(await exists(join(config, "plugins.lock.json")), false);
  strictEqual(await Deno.readTextFile(join(ROOT, "deno.lock")), lock);
  strictEqual(
    await exists(join(ROOT, "node_modules", ".deno", "amber-test-absent-package@1.0.0")),
    false,
  );
});
