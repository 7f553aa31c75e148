// `deno task install` (the README's first step) installs `amber` as a command that works in any
// folder: installed into a temporary root, the command runs from a folder with no deno.json and
// reads its own config directory. What it runs is the build tools/install.ts makes (the
// single-file build, split into chunks and minified) in `lib/amber/` of the install root, with a
// config that maps `@amber/*` to that build's own modules and reads no npm package. So a trusted
// plugin that imports `@amber/core` gets amber's own classes (not a second copy of the package),
// and a sandboxed plugin that imports it loads in its process.

import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { delimiter, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { VERSION } from "@amber/cli";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { tempDir } from "../_helpers.ts";
import { switchHelloOn } from "../_hello_on.ts";
import { type Result, ROOT, runDeno } from "./_subprocess.ts";

Deno.test("deno task install puts an amber command in the install root that works in any folder", async () => {
  await using tmp = await tempDir();
  const root = join(tmp.dir, "install-root");
  const elsewhere = join(tmp.dir, "elsewhere");
  const config = join(tmp.dir, "config");
  await Deno.mkdir(elsewhere);
  await Deno.mkdir(config);
  // DENO_INSTALL_ROOT is `deno install --root` for a task, whose arguments would go to amber.
  const installed = await runDeno(["task", "install"], {
    cwd: ROOT,
    env: { DENO_INSTALL_ROOT: root },
  });
  strictEqual(installed.code, 0, installed.err);
  const command = join(root, "bin", "amber");
  strictEqual((await Deno.stat(command)).isFile, true, `${command} was not written`);
  const shim = await Deno.readTextFile(command);
  match(shim, /deno run .*--node-modules-dir=none/);
  // The build's chunks load by computed imports; without --quiet, one first imported while the
  // terminal UI is up has Deno draw its loading line over the screen (the tmux tests fail so).
  match(shim, /deno run .*--quiet/);
  // V8's young generation starts large enough that starting amber takes no scavenge; no other
  // V8 flag (tests/cli/v8_flags_test.ts says why).
  match(shim, /deno run .*--v8-flags=--min-semi-space-size=8 /);
  const [build] = builds(root);
  match(shim, new RegExp(`'${pathToFileURL(join(root, "lib", "amber", build, "main.js")).href}'`));
  // Nothing of the build is left in the checkout.
  const left = await Deno.stat(join(ROOT, "dist", "install-source")).then(() => true, () => false);
  strictEqual(left, false);

  // The shim runs `deno`: the one running this test, as on a user's PATH.
  const path = [dirname(Deno.execPath()), Deno.env.get("PATH") ?? ""].join(delimiter);
  const amber = async (...args: string[]): Promise<Result> => {
    const output = await new Deno.Command(command, {
      args,
      cwd: elsewhere,
      // Nothing of the checkout's environment but where the caches are.
      env: {
        ...cacheEnv(),
        PATH: path,
        AMBER_CONFIG_DIR: config,
        NO_COLOR: "1",
        OPENAI_API_KEY: "sk-test-key-1234",
      },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes).trimEnd();
    return { code: output.code, out: text(output.stdout), err: text(output.stderr) };
  };

  const version = await amber("--version");
  strictEqual(version.code, 0, version.err);
  strictEqual(version.out, `amber ${VERSION}`);

  const list = await amber("plugins", "list");
  strictEqual(list.code, 0, list.err);
  match(list.out, /^ {2}tool_read +Read +\S+ +active +1 tool +bundled$/m);
  match(list.out, /^ {2}hello +Hello +\S+ +disabled +nothing +bundled$/m);
  strictEqual(list.err, "");

  // config.yaml, read with the yaml package: CommonJS, imported when a file is there. (In the
  // split build such a package's chunk must export its names, not only `default`.)
  await switchHelloOn(config);
  await Deno.writeTextFile(join(config, "config.yaml"), "plugins:\n  hello:\n    greeting: Hi\n");
  const greeted = await amber("cmd", "hello", "greet", "amber");
  strictEqual(greeted.code, 0, greeted.err);
  strictEqual(greeted.out, "Hi, amber!");

  // A turn, which loads npm packages (the model catalog's snapshot, the JSON Schema validator).
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(
    { toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
    { text: "It says hi." },
  );
  await Deno.writeTextFile(join(elsewhere, "notes.txt"), "hi\n");
  const run = await amber(
    "run",
    "what is in notes.txt?",
    "--base-url",
    `${server.url}/v1`,
    "--approve",
    "auto",
  );
  strictEqual(run.code, 0, run.err);
  strictEqual(run.out, "It says hi.");

  // Plugins that import `@amber/core` at run time, the way docs/plugins.md shows: a trusted one,
  // in amber's process, checks that what amber throws at it is an instance of the class it
  // imported; a sandboxed one builds its tool with `defineTool`.
  const plugins = join(tmp.dir, "plugins");
  await Deno.mkdir(plugins);
  await Deno.writeTextFile(join(plugins, "asker.ts"), ASKER);
  await Deno.writeTextFile(join(plugins, "boxed.ts"), BOXED);
  const trusted = await amber("plugins", "add", join(plugins, "asker.ts"), "--trusted");
  strictEqual(trusted.code, 0, trusted.err);
  const sandboxed = await amber("plugins", "add", join(plugins, "boxed.ts"));
  strictEqual(sandboxed.code, 0, sandboxed.err);
  // Its process reads only the build's modules: no warning, no other config.
  strictEqual(sandboxed.err.includes("Warning"), false, sandboxed.err);
  for (const [tool, answer] of [["asker", "headless: true"], ["boxed", "boxed says hi"]]) {
    server.script({ toolCalls: [{ name: tool, arguments: {} }] }, { text: "Done." });
    const turn = await amber("run", `use ${tool}`, "--base-url", `${server.url}/v1`);
    strictEqual(turn.code, 0, turn.err);
    match(turn.err, new RegExp(`✓ ${tool} `));
    const request = server.chats.at(-1)?.body as { messages: { content: string }[] };
    strictEqual(request.messages.at(-1)?.content, answer);
  }

  // Installed again (after a pull): the build the command ran until then stays, for a session
  // still running from it; the one before that goes.
  const again = async () => {
    const result = await runDeno(["task", "install"], {
      cwd: ROOT,
      env: { DENO_INSTALL_ROOT: root },
    });
    strictEqual(result.code, 0, result.err);
  };
  await again();
  const [first, second] = builds(root);
  strictEqual(first, build);
  await again();
  const [kept, third, ...more] = builds(root);
  strictEqual(kept, second);
  deepStrictEqual(more, []);
  match(await Deno.readTextFile(command), new RegExp(`/lib/amber/${third}/main\\.js'`));
  strictEqual((await amber("--version")).out, `amber ${VERSION}`);
});

// The builds in the install root, oldest first (their names end in the time they were made).
function builds(root: string): string[] {
  return [...Deno.readDirSync(join(root, "lib", "amber"))].map((entry) => entry.name).sort();
}

// Asks the user under `amber run`, where the host's UI refuses every question with amber's
// UiUnavailableError.
const ASKER = `import { exact, UiUnavailableError } from "@amber/core";
let ui;
export default {
  id: "asker", version: "1.0.0", name: "Asker",
  bound: { tools: exact("asker") },
  initialize: (context) => { ui = context.host?.ui; return true; },
  shutdown() {},
  capabilities: () => [{ kind: "tool", name: "asker", tools: [{
    name: "asker", description: "Asks.", parameters: { type: "object", properties: {} },
    readOnly: true,
    execute: async () => {
      try {
        await ui.askText("Name?");
        return { ok: true, output: "answered" };
      } catch (error) {
        return { ok: true, output: \`headless: \${error instanceof UiUnavailableError}\` };
      }
    },
  }] }],
};
`;

const BOXED = `import { defineTool, exact } from "@amber/core";
export default {
  id: "boxed", version: "1.0.0", name: "Boxed",
  bound: { tools: exact("boxed") },
  initialize: () => true,
  shutdown() {},
  capabilities: () => [{ kind: "tool", name: "boxed", tools: [defineTool({
    name: "boxed", description: "Answers.", parameters: { type: "object", properties: {} },
    readOnly: true,
    execute: () => ({ ok: true, output: "boxed says hi" }),
  })] }],
};
`;

// Where Deno keeps its cache, and where the test run keeps amber's cache and temporary files (the
// test task names them, so that the tests write nothing into the user's home).
function cacheEnv(): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME", "AMBER_CACHE_DIR", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}
