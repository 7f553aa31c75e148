// V8 flags that change the code V8 compiles are part of the key of the code cache Deno keeps: a
// process started with other such flags than the last one finds the cache of every module they
// share unusable, compiles them again and replaces it, so the next process of the first kind does
// the same. amber runs with `--no-lazy` (the whole of a module compiled at once, and so cached at
// once); every way amber starts, its plugins' processes and the tests that start them must agree.
// (tests/cli/install_test.ts checks the installed command's shim.)

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { HOST_V8_FLAGS, pluginProcessCommand } from "@amber/core/sandbox";
import { amberTaskFlags } from "../../tools/amber_task.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const tasks: Record<string, string> = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)).tasks;

// The V8 flags of one `--v8-flags=a,b` argument, without those that only size the heap (which
// left the cache alone when alternated with and without them).
function codeFlags(args: readonly string[]): string[] {
  const v8 = args.filter((arg) => arg.startsWith("--v8-flags=")).flatMap((arg) =>
    arg.slice("--v8-flags=".length).split(",")
  );
  return v8.filter((flag) => !/^--(min-semi|max-old|max-semi)-space-size=/.test(flag)).sort();
}

const taskArgs = (name: string): string[] => (tasks[name] ?? "").split(/\s+/);

Deno.test("deno task amber runs V8 with the host's flags (--no-lazy)", () => {
  assert.deepEqual(codeFlags(amberTaskFlags(ROOT)), [...HOST_V8_FLAGS].sort());
  assert.ok(HOST_V8_FLAGS.includes("--no-lazy"));
});

Deno.test("deno task compile builds the executable with the task's code flags", () => {
  assert.deepEqual(codeFlags(taskArgs("compile")), codeFlags(amberTaskFlags(ROOT)));
});

const spawnOptions = {
  specifier: "file:///plugins/greeter/mod.ts",
  pluginId: "greeter",
  grant: {},
  workspace: "/ws",
  dataDir: "/cfg/greeter/data",
  readFolders: ["/plugins/greeter"],
  denoPath: "/bin/deno",
  env: {},
};

Deno.test("a sandboxed plugin's process runs with the host's code flags", () => {
  const { args } = pluginProcessCommand(spawnOptions);
  assert.deepEqual(codeFlags(args), codeFlags(amberTaskFlags(ROOT)));
  // The heap limit is still there beside it.
  assert.ok(args.some((arg) => /^--v8-flags=.*--max-old-space-size=512/.test(arg)), args.join(" "));
});

Deno.test("a build run without those flags runs its plugin processes without them", () => {
  // The one-file bundle (`deno run -A dist/amber.js`): its plugin processes run the bundle too.
  const { args } = pluginProcessCommand({ ...spawnOptions, v8Flags: [] });
  assert.deepEqual(codeFlags(args), []);
  assert.ok(args.includes("--v8-flags=--max-old-space-size=512"), args.join(" "));
});

Deno.test("deno task test runs the tests with the task's code flags", () => {
  // The tests import amber's modules and start amber and plugin processes from them.
  assert.deepEqual(codeFlags(taskArgs("test")), codeFlags(amberTaskFlags(ROOT)));
});
