// One file: `deno bundle` of the CLI (what `deno task bundle` runs) to a temporary directory,
// then the single file run by `deno run` from a directory with no deno.json: the version, the
// plugin list, the lazily imported yaml (config.yaml) and semver (a version range), a third-party
// plugin loaded from an absolute path, and the demo (whose tool calls validate arguments with the
// lazily imported @cfworker/json-schema).

import { match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { VERSION } from "@amber/cli";
import { makeBundledPlugins } from "@amber/plugins";
import { tempDir } from "../_helpers.ts";
import { type Result, ROOT, runDeno } from "./_subprocess.ts";
import { switchHelloOn } from "../_hello_on.ts";

const deno = (cwd: string, args: readonly string[], env: Record<string, string> = {}) =>
  runDeno(args, { cwd, env });

Deno.test("the bundled single file runs: --version, plugins list, config, a third-party plugin, demo", async (t) => {
  await using tmp = await tempDir();
  const bundle = join(tmp.dir, "amber.js");
  const built = await deno(ROOT, [
    "bundle",
    "--platform",
    "deno",
    "--output",
    bundle,
    join(ROOT, "cli", "standalone.ts"),
  ]);
  strictEqual(built.code, 0, built.err);
  const work = join(tmp.dir, "work");
  const config = join(tmp.dir, "config");
  await Deno.mkdir(work);
  await Deno.mkdir(config);
  await switchHelloOn(config);
  const amber = (...args: string[]): Promise<Result> =>
    deno(work, ["run", "-A", bundle, ...args], { AMBER_CONFIG_DIR: config, INIT_CWD: work });

  await t.step("--version", async () => {
    const result = await amber("--version");
    strictEqual(result.code, 0, result.err);
    strictEqual(result.out, `amber ${VERSION}`);
  });

  await t.step("plugins list", async () => {
    const result = await amber("plugins", "list");
    strictEqual(result.code, 0, result.err);
    strictEqual(result.err, "");
    match(result.out, /^ {2}hello +Hello +0\.1\.0 +active +1 tool, 1 command +bundled$/m);
    const rows = result.out.split("\n").filter((line) => line.startsWith("  "));
    strictEqual(rows.length, makeBundledPlugins().length);
    ok(rows.every((row) => / active .* bundled$/.test(row)), result.out);
  });

  await t.step("config.yaml is parsed (yaml is imported lazily)", async () => {
    await Deno.writeTextFile(join(config, "config.yaml"), "plugins:\n  hello:\n    greeting: Hi\n");
    const result = await amber("cmd", "hello", "greet", "amber");
    strictEqual(result.code, 0, result.err);
    strictEqual(result.out, "Hi, amber!");
    await Deno.remove(join(config, "config.yaml"));
  });

  await t.step(
    "a third-party plugin loads from an absolute path (semver range checked)",
    async () => {
      const file = join(tmp.dir, "plugin", "mod.js");
      await Deno.mkdir(join(tmp.dir, "plugin"));
      await Deno.writeTextFile(
        file,
        `export default (api) => ({
  id: "echoer", version: "1.0.0", name: "Echoer " + api.version,
  requires: { hello: "^0.1.0" },
  bound: { tools: api.exact("echo") },
  initialize: () => true, shutdown() {},
  capabilities: () => [{ kind: "tool", name: "echo", tools: [{
    name: "echo", description: "Echo.", parameters: { type: "object", properties: {} },
    execute: () => ({ ok: true, output: "echo" }),
  }] }],
});
`,
      );
      const added = await amber("plugins", "add", file);
      strictEqual(added.code, 0, added.err);
      match(added.out, /state: active \(1 tool\)/);
      const list = await amber("plugins", "list");
      match(
        list.out,
        new RegExp(
          `^ {2}echoer +Echoer ${VERSION} +1\\.0\\.0 +active +1 tool +${file} \\(sandboxed\\)$`,
          "m",
        ),
      );
      match((await amber("tools")).out, /^echo +echoer /m);
    },
  );

  await t.step("demo", async () => {
    // The demo keeps its workspace for the user to look at: here, inside the test's directory.
    const demoTmp = join(tmp.dir, "demo-tmp");
    await Deno.mkdir(demoTmp);
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", bundle, "demo"],
      cwd: work,
      env: { NO_COLOR: "1", AMBER_CONFIG_DIR: config, TMPDIR: demoTmp },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(output.stderr);
    strictEqual(output.code, 0, err);
    const out = `${new TextDecoder().decode(output.stdout)}\n${err}`;
    // Every tool call of the demo went through argument validation and succeeded.
    match(out, /✓ edit/);
    strictEqual(out.includes("✗"), false, out);
  });
});
