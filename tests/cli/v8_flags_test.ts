// amber's V8 flags only size the heap. A flag that changes the code V8 compiles (`--no-lazy` was
// measured: 5-20% less CPU for amber started alone) is part of what Deno's code cache is valid
// for, and that cache is shared: Deno's own lazily loaded modules (`ext:deno_node/...`, fetch)
// are cached once for every program of the user. Each amber start then threw away the cache of
// the next Deno program the user ran, and that program amber's: a small Deno script took 1.35x
// its CPU after such an amber, and amber 1.27x after the script. Every way amber starts, its
// tests are held to heap flags here. (tests/cli/install_test.ts checks the installed command's
// shim; tests/core/sandbox_process_test.ts the plugin process's whole command line, whose only V8
// flag is its heap limit.)

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { amberTaskFlags } from "../../tools/amber_task.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const tasks: Record<string, string> = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)).tasks;

const HEAP_FLAG = /^--(min-semi|max-semi|max-old)-space-size=\d+$/;

// The V8 flags of every `--v8-flags=a,b` argument that are not heap sizes.
function codeFlags(args: readonly string[]): string[] {
  return args.filter((arg) => arg.startsWith("--v8-flags=")).flatMap((arg) =>
    arg.slice("--v8-flags=".length).split(",")
  ).filter((flag) => !HEAP_FLAG.test(flag));
}

const taskArgs = (name: string): string[] => (tasks[name] ?? "").split(/\s+/);

Deno.test("deno task amber, compile and test give V8 heap sizes only", () => {
  assert.deepEqual(codeFlags(amberTaskFlags(ROOT)), []);
  assert.ok(amberTaskFlags(ROOT).some((flag) => flag.startsWith("--v8-flags=")));
  for (const task of ["compile", "test"]) assert.deepEqual(codeFlags(taskArgs(task)), [], task);
});

Deno.test("a flag that changes compiled code is caught", () => {
  assert.deepEqual(codeFlags(["--v8-flags=--min-semi-space-size=8,--no-lazy"]), ["--no-lazy"]);
});
