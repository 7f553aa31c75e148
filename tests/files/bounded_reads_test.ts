// What a markdown command's `@path`, `` !`cmd` `` and a skill's `file` read is bounded: a FIFO
// is not waited on, a big file or a flood of output is read only as far as what is kept, and a
// command's background job does not outlast its deadline.

import { equal, match, ok } from "node:assert/strict";
import { expandTemplate, MAX_INCLUDED_CHARS, runShell } from "../../cli/files/markdown_commands.ts";
import { MAX_FILE_CHARS, skillCapabilities } from "../../cli/files/skills.ts";
import { readTextPrefix } from "../../cli/files/text_prefix.ts";
import type { Tool } from "@amber/core";
import { tempDir } from "../_helpers.ts";

const host = (workspace: string) => ({
  workspace,
  approve: () => Promise.resolve("no commands here"),
  run: () => Promise.resolve(""),
});

async function fifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  ok(made.success, new TextDecoder().decode(made.stderr));
}

Deno.test("`@fifo` stays text instead of waiting for a writer", async () => {
  await using tmp = await tempDir();
  await fifo(`${tmp.dir}/pipe`);
  equal(await expandTemplate("Read @pipe now", "", host(tmp.dir), "/x"), "Read @pipe now");
});

Deno.test("`@big` keeps the first characters and says how big the file is", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(`${tmp.dir}/big.log`, "x".repeat(MAX_INCLUDED_CHARS + 10));
  const text = await expandTemplate("@big.log", "", host(tmp.dir), "/x");
  match(text, new RegExp(`^<file path="big.log">\\nx{${MAX_INCLUDED_CHARS}}\\n\\[cut at `));
  match(text, new RegExp(`of ${MAX_INCLUDED_CHARS + 10} bytes\\]\\n</file>$`));
});

Deno.test("a skill's FIFO is refused and a big file is cut", async () => {
  await using tmp = await tempDir();
  const dir = `${tmp.dir}/release`;
  await Deno.mkdir(dir);
  await Deno.writeTextFile(`${dir}/SKILL.md`, "Cut a release.");
  await Deno.writeTextFile(`${dir}/big.txt`, "é".repeat(MAX_FILE_CHARS + 1));
  await fifo(`${dir}/pipe`);
  const skill = { name: "release", description: "Cut.", body: "Go.", dir, path: `${dir}/SKILL.md` };
  const context = { pluginId: "files.skills", workspace: tmp.dir, configDir: tmp.dir };
  const capability = skillCapabilities([skill], context).find((c) => c.kind === "tool");
  const tools = capability?.kind === "tool" ? capability.tools : [];
  const tool = (Array.isArray(tools) ? tools[0] : undefined) as Tool<
    { name: string; file?: string }
  >;
  const call = (file: string) =>
    tool.execute({ name: "release", file }, { signal: AbortSignal.timeout(5_000) } as never);
  const piped = await call("pipe");
  equal(piped.ok, false);
  const big = await call("big.txt");
  ok(big.ok);
  equal(big.output.indexOf("\n["), MAX_FILE_CHARS);
  match(big.output, /cut at \d+ chars of \d+ bytes\]$/);
});

Deno.test("readTextPrefix keeps the first characters, and the size of the whole", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(`${tmp.dir}/f`, "ab".repeat(1000));
  const read = await readTextPrefix(`${tmp.dir}/f`, 3);
  equal(read.text, "aba");
  ok(read.cut);
  equal(read.bytes, 2000);
});

const PATH = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };

Deno.test("a `!` line's flood of output is cut, and the command stopped", async () => {
  await using tmp = await tempDir();
  const started = performance.now();
  const text = await runShell("yes", tmp.dir, PATH, 20_000);
  ok(performance.now() - started < 10_000);
  equal(text.length, MAX_INCLUDED_CHARS + "\n[cut]".length);
  match(text, /^y\ny\n[\s\S]*\n\[cut\]$/);
});

Deno.test("a `!` line's background job does not keep it past its deadline", async () => {
  await using tmp = await tempDir();
  const started = performance.now();
  const text = await runShell("sleep 5 & echo started", tmp.dir, PATH, 300);
  ok(performance.now() - started < 3_000, `${performance.now() - started} ms`);
  equal(text, "started\n");
});
