// End to end: the `amber` command as a user runs it, in a real subprocess with the permissions of
// `deno task amber`, against a real config directory on disk.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { makeBundledPlugins } from "@amber/plugins";
import { tempDir } from "../_helpers.ts";
import { MAIN, PERMISSIONS, type Result, runAmber } from "./_subprocess.ts";
import { switchHelloOn } from "../_hello_on.ts";

const amber = (configDir: string, ...args: string[]): Promise<Result> => runAmber(configDir, args);

Deno.test("amber --version answers", async () => {
  await using tmp = await tempDir();
  const result = await amber(tmp.dir, "--version");
  strictEqual(result.code, 0);
  match(result.out, /^amber \d+\.\d+\.\d+$/);
});

Deno.test("amber plugins list groups the bundled plugins by category with their contributions", async () => {
  await using tmp = await tempDir();
  const result = await amber(tmp.dir, "plugins", "list");
  strictEqual(result.code, 0, result.err);
  const lines = result.out.split("\n");
  deepStrictEqual(lines.filter((l) => !l.startsWith(" ")), [
    "provider",
    "tools",
    "observability",
    "other",
  ]);
  // The worked example is off until switched on: a real model is not offered its tool.
  match(result.out, /^ {2}hello +Hello +0\.1\.0 +disabled +nothing +bundled$/m);
  match(result.out, /^ {2}metrics +Metrics +0\.1\.0 +active +4 subscriptions +bundled$/m);
});

Deno.test("amber cmd hello greet amber prints Hello, amber!", async () => {
  await using tmp = await tempDir();
  await switchHelloOn(tmp.dir);
  const result = await amber(tmp.dir, "cmd", "hello", "greet", "amber");
  strictEqual(result.code, 0, result.err);
  strictEqual(result.out, "Hello, amber!");
});

Deno.test("disable persists, removes the plugin's command and tool, and enable brings them back", async () => {
  await using tmp = await tempDir();
  await switchHelloOn(tmp.dir);
  const off = await amber(tmp.dir, "plugins", "disable", "hello");
  strictEqual(off.code, 0, off.err);
  match(off.out, /^hello: disabled \(saved to .*plugins\/hello\/plugin\.conf\)$/);
  match(await Deno.readTextFile(`${tmp.dir}/plugins/hello/plugin.conf`), /^enabled = false$/m);

  const gone = await amber(tmp.dir, "cmd", "hello", "greet", "amber");
  strictEqual(gone.code, 2);
  strictEqual(gone.err, "amber: unknown command root 'hello'; roots: set, get, agents");
  strictEqual((await amber(tmp.dir, "tools")).out.includes("greet"), false);
  match((await amber(tmp.dir, "plugins", "info", "hello")).out, /state: disabled/);

  const on = await amber(tmp.dir, "cmd", "set", "plugin", "on", "hello");
  strictEqual(on.code, 0, on.err);
  strictEqual(on.out, "hello: active");
  strictEqual((await amber(tmp.dir, "cmd", "hello", "greet", "amber")).out, "Hello, amber!");
});

Deno.test("amber tools lists each tool with its owner", async () => {
  await using tmp = await tempDir();
  await switchHelloOn(tmp.dir);
  const result = await amber(tmp.dir, "tools");
  strictEqual(result.code, 0, result.err);
  const rows = result.out.split("\n").map((l) => l.split(/\s{2,}/));
  deepStrictEqual(rows[0], ["tool", "owner", "access", "approval"]);
  deepStrictEqual(rows.find((r) => r[0] === "greet"), ["greet", "hello", "read-only", "never"]);
  deepStrictEqual(rows.find((r) => r[0] === "bash"), [
    "bash",
    "tool_bash",
    "writes",
    "decided per call",
  ]);
});

Deno.test("amber plugins info shows every ledgered contribution", async () => {
  await using tmp = await tempDir();
  await switchHelloOn(tmp.dir);
  const result = await amber(tmp.dir, "plugins", "info", "hello");
  strictEqual(result.code, 0, result.err);
  match(result.out, /^hello 0\.1\.0: Hello$/m);
  match(result.out, /^ {4}tool 'greet': greet$/m);
  match(result.out, /^ {4}command 'hello': hello$/m);
});

Deno.test("unknown plugins, commands, paths, panels and options exit 2 listing what exists", async () => {
  await using tmp = await tempDir();
  await switchHelloOn(tmp.dir);
  const cases: [string[], RegExp][] = [
    [["plugins", "info", "nope"], /unknown plugin 'nope'; known plugins: hello, metrics/],
    [["plugins", "enable", "nope"], /unknown plugin 'nope'; known plugins: hello, metrics/],
    [
      ["frobnicate"],
      /unknown command 'frobnicate'; commands: demo, run, sessions, serve, plugins, plugin, mcp, config, doctor, tools, cmd, status, panel/,
    ],
    [["cmd", "nope"], /unknown command root 'nope'; roots: set, get, hello/],
    [["cmd", "hello", "wave"], /'hello' has no 'wave'; choose one of: greet/],
    [["panel", "nope"], /unknown panel 'nope'; panels: plugins/],
    [["status", "--colour"], /unknown option '--colour'/],
    [["status", "--width", "zero"], /--width must be a positive whole number, got 'zero'/],
  ];
  for (const [args, pattern] of cases) {
    const result = await amber(tmp.dir, ...args);
    strictEqual(result.code, 2, `${args.join(" ")}: ${result.err}`);
    match(result.err, pattern);
  }
});

Deno.test("config.yaml is read: the model shows in the status bar and hello uses its greeting", async () => {
  await using tmp = await tempDir();
  await switchHelloOn(tmp.dir);
  await Deno.writeTextFile(
    `${tmp.dir}/config.yaml`,
    "model: gpt-test\nplugins:\n  hello:\n    greeting: Howdy\n",
  );
  const status = await amber(tmp.dir, "status", "--width", "60");
  strictEqual(status.code, 0, status.err);
  strictEqual(status.out, "gpt-test");
  strictEqual((await amber(tmp.dir, "cmd", "hello", "greet", "amber")).out, "Howdy, amber!");
});

Deno.test("a YAML error in config.yaml names the file, line and column", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(`${tmp.dir}/config.yaml`, "model: a\nplugins: [unclosed\n");
  const result = await amber(tmp.dir, "plugins", "list");
  strictEqual(result.code, 1);
  match(result.err, /config\.yaml:\d+:\d+: /);
  strictEqual(await Deno.readTextFile(`${tmp.dir}/config.yaml`), "model: a\nplugins: [unclosed\n");
});

Deno.test("a config field of the wrong type is named", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(`${tmp.dir}/config.yaml`, "model: 42\n");
  const result = await amber(tmp.dir, "plugins", "list");
  strictEqual(result.code, 1);
  match(result.err, /config\.yaml:1:8: model: expected a string, found number 42/);
});

Deno.test("a corrupt plugin.conf is reported with path and line, the default applies, the file is kept", async () => {
  await using tmp = await tempDir();
  await Deno.mkdir(`${tmp.dir}/plugins/hello`, { recursive: true });
  await Deno.writeTextFile(`${tmp.dir}/plugins/hello/plugin.conf`, "enabled: nope\n");
  const result = await amber(tmp.dir, "plugins", "list");
  strictEqual(result.code, 0);
  match(
    result.err,
    /plugin 'hello' \(plugin\.conf\): .*plugins\/hello\/plugin\.conf:1: expected 'key = value'/,
  );
  match(result.out, /hello +Hello +0\.1\.0 +disabled/, "its default: off");
  strictEqual(await Deno.readTextFile(`${tmp.dir}/plugins/hello/plugin.conf`), "enabled: nope\n");
});

Deno.test("amber panel plugins prints the console; amber status shrinks to the width", async () => {
  await using tmp = await tempDir();
  const panel = await amber(tmp.dir, "panel", "plugins", "--width", "30");
  strictEqual(panel.code, 0, panel.err);
  const lines = panel.out.split("\n");
  strictEqual(lines[0], "Plugins");
  ok(lines.every((l) => l.length <= 30), lines.join("\n"));
  await Deno.writeTextFile(`${tmp.dir}/config.yaml`, "model: a-very-long-model-name\n");
  const narrow = await amber(tmp.dir, "status", "--width", "10");
  strictEqual(narrow.out, "a-very-lo…");
});

Deno.test("amber config check passes a clean configuration", async () => {
  await using tmp = await tempDir();
  await switchHelloOn(tmp.dir);
  await Deno.writeTextFile(
    `${tmp.dir}/config.yaml`,
    "model: m\nplugins:\n  hello:\n    greeting: Hi\n",
  );
  const result = await amber(tmp.dir, "config", "check");
  strictEqual(result.code, 0, result.out + result.err);
  match(result.out, /no problems; (\d+) of \1 plugins active$/);
});

Deno.test("amber config check lists every problem with file, line and column, and exits 1", async () => {
  await using tmp = await tempDir();
  const text = "modle: x\nmodel: 3\nplugins:\n  hello:\n    greeting: 42\n  ghost: {}\n";
  await Deno.writeTextFile(`${tmp.dir}/config.yaml`, text);
  const result = await amber(tmp.dir, "config", "check");
  strictEqual(result.code, 1);
  const installed = makeBundledPlugins().map((p) => p.id).join(", ");
  const lines = result.out.split("\n").map((l) => l.replace(`${tmp.dir}/`, ""));
  deepStrictEqual(lines, [
    "config.yaml:1:1: modle: unknown field (fields: provider, model, baseUrl, apiKeyEnv, reasoningEffort, approval, plugins, timeouts, quarantine, secrets, mcp, models, compaction, permissions, compat)",
    "config.yaml:2:8: model: expected a string, found number 3",
    `config.yaml:6:10: plugins.ghost: no plugin 'ghost' is installed (installed: ${installed})`,
    "config.yaml:5:15: plugins.hello.greeting: expected string, received number",
    "4 problems",
  ]);
  strictEqual(await Deno.readTextFile(`${tmp.dir}/config.yaml`), text, "the file is untouched");
});

Deno.test("amber config check reports a YAML syntax error with its line and column", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(`${tmp.dir}/config.yaml`, "model: a\nplugins: [oops\n");
  const result = await amber(tmp.dir, "config", "check");
  strictEqual(result.code, 1);
  match(result.out, /config\.yaml:3:1: .*\n1 problem$/);
  const other = await amber(tmp.dir, "tools");
  strictEqual(other.code, 1);
  match(other.err, /`amber config check` lists every problem/);
});

Deno.test("amber plugins graph shows the activation order; info shows requires, bound, config", async () => {
  await using tmp = await tempDir();
  await switchHelloOn(tmp.dir);
  const graph = await amber(tmp.dir, "plugins", "graph");
  strictEqual(graph.code, 0, graph.err);
  match(graph.out, /^ +1\. hello +0\.1\.0 +active +requires nothing\n +2\. metrics /);
  const info = await amber(tmp.dir, "plugins", "info", "hello");
  match(info.out, /^ {2}requires: nothing$/m);
  match(info.out, /^ {2}bound: tools: exact \[greet\]; commands: exact \[hello\]$/m);
  match(info.out, /^ {2}config: \{"type":"object","properties":\{"greeting":/m);
});

Deno.test("a reader that goes away (amber ... | head) ends amber quietly, with no error printed", async () => {
  await using tmp = await tempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, MAIN, "plugins", "list"],
    env: { AMBER_CONFIG_DIR: tmp.dir, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Gone before amber writes a line: its first write meets a closed pipe.
  await child.stdout.cancel();
  const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
  strictEqual(stderr, "");
  strictEqual(status.code, 141);
});
