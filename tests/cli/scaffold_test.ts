// The plugin author's kit end to end: `amber plugin new` writes a package; `deno test`,
// `deno publish --dry-run`, `deno fmt --check` and `deno lint` pass in it as generated (real
// subprocesses, offline); amber adds it and its tool and command work; its vendored types accept
// what @amber/core hands a plugin; and @amber/core/testing activates it with real registries.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import type { PluginFactory } from "@amber/core";
import { testPlugin } from "@amber/core/testing";
import { createRegistries } from "@amber/registries";
import { tempDir } from "../_helpers.ts";
import { type Result, ROOT, runAmber, runDeno } from "./_subprocess.ts";

const run = (cwd: string, args: readonly string[]): Promise<Result> => runDeno(args, { cwd });
const amber = (configDir: string, ...args: string[]): Promise<Result> =>
  runAmber(configDir, args, { cwd: configDir, env: { INIT_CWD: configDir } });

Deno.test("amber plugin new: a package that tests, publishes, formats and lints as generated, and that amber loads", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await Deno.mkdir(config);
  const dir = join(tmp.dir, "word_tools");

  const created = await amber(config, "plugin", "new", "word_tools", dir, "--scope", "acme");
  strictEqual(created.code, 0, created.err);
  match(created.out, new RegExp(`^created @acme/word-tools in ${dir}: deno\\.json, mod\\.ts`));
  const files = [];
  for await (const entry of Deno.readDir(dir)) files.push(entry.name);
  deepStrictEqual(files.sort(), [
    "LICENSE",
    "README.md",
    "amber_types.ts",
    "deno.json",
    "mod.ts",
    "mod_test.ts",
  ]);
  const manifest = JSON.parse(await Deno.readTextFile(join(dir, "deno.json")));
  deepStrictEqual(
    [manifest.name, manifest.version, manifest.license, manifest.exports, manifest.imports],
    ["@acme/word-tools", "0.1.0", "MIT", "./mod.ts", {}],
  );
  match(await Deno.readTextFile(join(dir, "LICENSE")), /^MIT License/);
  match(await Deno.readTextFile(join(dir, "README.md")), /amber plugins add \.\/mod\.ts/);

  const test = await run(dir, ["test"]);
  strictEqual(test.code, 0, `${test.out}\n${test.err}`);
  match(test.out, /ok \| 4 passed \| 0 failed/);

  const publish = await run(dir, ["publish", "--dry-run", "--allow-dirty"]);
  strictEqual(publish.code, 0, `${publish.out}\n${publish.err}`);
  const report = `${publish.out}\n${publish.err}`;
  match(report, /Simulating publish of @acme\/word-tools@0\.1\.0/);
  match(report, /Dry run complete/);
  strictEqual(report.includes("mod_test.ts"), false, "tests are excluded from publishing");

  const fmt = await run(dir, ["fmt", "--check"]);
  strictEqual(fmt.code, 0, fmt.err);
  const lint = await run(dir, ["lint"]);
  strictEqual(lint.code, 0, lint.err);

  const added = await amber(config, "plugins", "add", join(dir, "mod.ts"));
  strictEqual(added.code, 0, added.err);
  match(added.out, /state: active \(1 tool, 1 command\)/);
  const tools = await amber(config, "tools");
  deepStrictEqual(
    tools.out.split("\n").map((l) => l.split(/\s{2,}/)).find((row) =>
      row[0] === "word_tools_greet"
    ),
    ["word_tools_greet", "word_tools", "read-only", "never"],
  );
  strictEqual((await amber(config, "cmd", "word_tools", "greet", "amber")).out, "Hello, amber!");
  await Deno.writeTextFile(
    join(config, "config.yaml"),
    "plugins:\n  word_tools:\n    greeting: Hi\n",
  );
  strictEqual((await amber(config, "cmd", "word_tools", "greet", "amber")).out, "Hi, amber!");
});

Deno.test("the scaffold's vendored types accept what @amber/core hands a plugin, and testPlugin activates it", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await Deno.mkdir(config);
  const dir = join(tmp.dir, "greeter");
  strictEqual((await amber(config, "plugin", "new", "greeter", dir)).code, 0);

  // Type-checked against the workspace's @amber/core: the factory is a PluginFactory.
  const compat = join(tmp.dir, "compat.ts");
  await Deno.writeTextFile(
    compat,
    `import { createPluginHostApi, type Plugin, type PluginFactory } from "@amber/core";
import create from "./greeter/mod.ts";
const factory: PluginFactory = create;
const plugin: Plugin = create(createPluginHostApi("0.1.0"));
console.log(plugin.id, typeof factory);
`,
  );
  const check = await run(tmp.dir, ["check", "--config", join(ROOT, "deno.json"), compat]);
  strictEqual(check.code, 0, check.err);

  const module = await import(`file://${join(dir, "mod.ts")}`) as { default: PluginFactory };
  await using host = await testPlugin(module.default, {
    registries: createRegistries(),
    config: { greeting: "Howdy" },
  });
  deepStrictEqual(host.tools(), ["greeter_greet"]);
  strictEqual((await host.execute("greeter_greet", { name: "amber" })).output, "Howdy, amber!");
  const invalid = await host.execute("greeter_greet", { name: 42 });
  strictEqual(invalid.ok, false);
  deepStrictEqual(await host.command("/greeter greet amber"), { ok: true, text: "Howdy, amber!" });
  await host.disable();
  strictEqual(host.state().status, "disabled");
});

Deno.test("amber plugin new refuses a non-empty directory, a bad id, a bundled id and a bad scope", async () => {
  await using tmp = await tempDir();
  const dir = join(tmp.dir, "taken");
  await Deno.mkdir(dir);
  await Deno.writeTextFile(join(dir, "keep.txt"), "mine\n");
  const full = await amber(tmp.dir, "plugin", "new", "taken", dir);
  strictEqual(full.code, 1);
  match(full.err, /taken is not empty; choose a new or empty directory/);
  deepStrictEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["keep.txt"]);

  const cases: [string[], number, RegExp][] = [
    [["plugin", "new", "Bad-Id"], 2, /plugin id 'Bad-Id' is not a slug/],
    [["plugin", "new", "hello"], 2, /'hello' is taken by a bundled plugin/],
    [["plugin", "new"], 2, /usage: amber plugin new <id> \[dir\]/],
    [["plugin", "new", "ok_id", join(tmp.dir, "x"), "--scope", "Bad Scope"], 1, /not a JSR scope/],
  ];
  for (const [args, code, pattern] of cases) {
    const result = await amber(tmp.dir, ...args);
    strictEqual(result.code, code, `${args.join(" ")}: ${result.err}`);
    match(result.err, pattern);
  }
  ok(!(await Deno.stat(join(tmp.dir, "x")).then(() => true, () => false)));
});

Deno.test("amber plugin new with no dir writes ./<id> in the shell's directory", async () => {
  await using tmp = await tempDir();
  const created = await amber(tmp.dir, "plugin", "new", "here");
  strictEqual(created.code, 0, created.err);
  ok((await Deno.stat(join(tmp.dir, "here", "mod.ts"))).isFile);
});
