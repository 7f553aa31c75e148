// Every doc example that `deno test --doc` runs checks its result: an example without an assertion
// passes whatever the code does, so it would not catch the API it shows going wrong. Examples that
// cannot run there (a real terminal, a plugin process) are marked `ts ignore` and are not run.

import { ok } from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { MEMBERS, projectModules } from "../.ci/cycles.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The ```ts blocks of a file's doc comments that `deno test --doc` runs: where each starts. */
function runnableExamples(text: string): { line: number; code: string }[] {
  const lines = text.split("\n");
  const found: { line: number; code: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^\s*\*\s?```(\S*)(.*)$/.exec(lines[i]);
    if (fence === null || !/^(ts|typescript|js|javascript)$/.test(fence[1])) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*\*\s?```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    if (!/\bignore\b/.test(fence[2])) found.push({ line: start + 1, code: body.join("\n") });
  }
  return found;
}

Deno.test("runnableExamples finds the blocks deno test --doc runs, not the ignored ones", () => {
  const text = [
    "/**",
    " * @example",
    " * ```ts",
    " * f();",
    " * ```",
    " * ```ts ignore",
    " * g();",
    " * ```",
    " */",
  ].join("\n");
  const found = runnableExamples(text);
  ok(found.length === 1 && found[0].line === 3 && found[0].code === " * f();", String(found));
});

Deno.test("every doc example that runs asserts something", async () => {
  const without: string[] = [];
  let examples = 0;
  for (const file of await projectModules(ROOT, MEMBERS)) {
    for (const example of runnableExamples(await Deno.readTextFile(file))) {
      examples++;
      if (!/\bassert\b/.test(example.code)) without.push(`${relative(ROOT, file)}:${example.line}`);
    }
  }
  ok(examples > 100, `only ${examples} examples found: is the walk right?`);
  ok(without.length === 0, `doc examples without an assertion:\n${without.join("\n")}`);
});
