// `deno task install` (the README's first step) installs `amber` as a command that works in any
// folder: installed into a temporary root, the command runs from a folder with no deno.json,
// resolves the workspace's packages and npm dependencies, and reads its own config directory. It
// reads its npm packages from the `node_modules` the install filled, without checking that folder
// again at every start (`--node-modules-dir=manual`: the start-up cost of that check grows with
// the number of packages).

import { match, strictEqual } from "node:assert/strict";
import { delimiter, dirname, join } from "node:path";
import { VERSION } from "@amber/cli";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { tempDir } from "../_helpers.ts";
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
  match(await Deno.readTextFile(command), /deno run .*--node-modules-dir=manual/);

  // The shim runs `deno`: the one running this test, as on a user's PATH.
  const path = [dirname(Deno.execPath()), Deno.env.get("PATH") ?? ""].join(delimiter);
  const amber = async (...args: string[]): Promise<Result> => {
    const output = await new Deno.Command(command, {
      args,
      cwd: elsewhere,
      // Nothing of the checkout's environment but where Deno keeps its cache.
      env: {
        ...denoEnv(),
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
});

function denoEnv(): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}
