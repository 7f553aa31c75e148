// edit and write say what they change: `preview` (asked before an approval question) works out
// the file's text before and after without touching the disk, and equals the `change` their
// result then carries; a write outside the workspace previews its whole content as new; a file
// too large to diff carries no change, and the output says so.

import assert from "node:assert/strict";
import type { FileChange, ToolResult } from "@amber/core";
import { createToolEditPlugin } from "@amber/plugins/tool_edit";
import { createToolWritePlugin } from "@amber/plugins/tool_write";
import { makeRuntime } from "../_helpers.ts";

interface Workspace {
  readonly root: string;
  run(name: string, args: unknown): Promise<ToolResult>;
  preview(name: string, args: unknown): Promise<FileChange | undefined>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function workspace(): Promise<Workspace> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-change-" }));
  const { runtime, registries } = makeRuntime({ workspace: { root }, allOn: true });
  for (const plugin of [createToolEditPlugin(), createToolWritePlugin()]) runtime.register(plugin);
  await runtime.start();
  const signal = new AbortController().signal;
  return {
    root,
    run: (name, args) => registries.tool.execute(name, args, { signal }),
    preview: async (name, args) => {
      const tool = registries.tool.get(name)?.tool;
      assert.ok(tool?.preview !== undefined, `${name} has a preview`);
      return await tool.preview(args, { signal });
    },
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

// Every entry of a directory with its bytes and modification time: what "nothing changed" means.
async function snapshot(dir: string): Promise<string[]> {
  const entries: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const info = await Deno.stat(`${dir}/${entry.name}`);
    const bytes = entry.isFile ? [...await Deno.readFile(`${dir}/${entry.name}`)].join(",") : "";
    entries.push(`${entry.name} ${info.mtime?.getTime()} ${bytes}`);
  }
  return entries.sort();
}

Deno.test("edit: preview equals the change execute then makes, and writes nothing", async () => {
  await using ws = await workspace();
  const before = "one\ntwo\nthree\ntwo\n";
  await Deno.writeTextFile(`${ws.root}/a.txt`, before);
  const args = { path: "a.txt", old_string: "two", new_string: "2", replace_all: true };
  const files = await snapshot(ws.root);
  const preview = await ws.preview("edit", args);
  assert.deepEqual(preview, { path: "a.txt", before, after: "one\n2\nthree\n2\n" });
  assert.deepEqual(await snapshot(ws.root), files);
  const result = await ws.run("edit", args);
  assert.ok(result.ok, result.error);
  assert.deepEqual(result.change, preview);
  assert.equal(await Deno.readTextFile(`${ws.root}/a.txt`), preview?.after);
});

Deno.test("edit: a CRLF file's change has its line ends; a failing call previews nothing", async () => {
  await using ws = await workspace();
  await Deno.writeTextFile(`${ws.root}/w.txt`, "a\r\nb\r\n");
  const args = { path: "w.txt", old_string: "a\nb", new_string: "A\nB" };
  const preview = await ws.preview("edit", args);
  assert.deepEqual(preview, { path: "w.txt", before: "a\r\nb\r\n", after: "A\r\nB\r\n" });
  assert.deepEqual((await ws.run("edit", args)).change, preview);
  // Not there, ambiguous, a missing file, arguments that would not validate: no preview.
  assert.equal(
    await ws.preview("edit", { path: "w.txt", old_string: "zz", new_string: "y" }),
    undefined,
  );
  assert.equal(
    await ws.preview("edit", { path: "nope.txt", old_string: "a", new_string: "b" }),
    undefined,
  );
  assert.equal(
    await ws.preview("edit", { path: "w.txt", old_string: 5, new_string: "b" }),
    undefined,
  );
  assert.equal(await ws.preview("edit", null), undefined);
  const failed = await ws.run("edit", { path: "w.txt", old_string: "zz", new_string: "y" });
  assert.equal(failed.change, undefined);
});

Deno.test("edit: outside the workspace, the preview reads the file and says it is outside", async () => {
  await using ws = await workspace();
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-outside-" }));
  try {
    await Deno.writeTextFile(`${outside}/cfg`, "port = 1\n");
    const args = { path: `${outside}/cfg`, old_string: "1", new_string: "2" };
    const preview = await ws.preview("edit", args);
    assert.deepEqual(preview, {
      path: `${outside}/cfg`,
      before: "port = 1\n",
      after: "port = 2\n",
      outside: true,
    });
    assert.equal(await Deno.readTextFile(`${outside}/cfg`), "port = 1\n");
    assert.deepEqual((await ws.run("edit", args)).change, preview);
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("write: preview equals the change execute makes, over a new and an existing file", async () => {
  await using ws = await workspace();
  const create = { path: "src/new.ts", content: "export const x = 1;\n" };
  const files = await snapshot(ws.root);
  const created = await ws.preview("write", create);
  assert.deepEqual(created, { path: "src/new.ts", before: "", after: "export const x = 1;\n" });
  assert.deepEqual(await snapshot(ws.root), files);
  assert.deepEqual((await ws.run("write", create)).change, created);
  // Over a CRLF file with a byte order mark: the change shows the text as written (CRLF kept),
  // without the mark, which is no line of it.
  await Deno.writeFile(`${ws.root}/w.txt`, new TextEncoder().encode("\uFEFFold\r\nlines\r\n"));
  const over = { path: "w.txt", content: "new\nlines\n" };
  const replaced = await ws.preview("write", over);
  assert.deepEqual(replaced, {
    path: "w.txt",
    before: "old\r\nlines\r\n",
    after: "new\r\nlines\r\n",
  });
  const result = await ws.run("write", over);
  assert.deepEqual(result.change, replaced);
  assert.doesNotMatch(result.output, /too large/);
});

Deno.test("write: outside the workspace, the preview is the whole content as new, file unread", async () => {
  await using ws = await workspace();
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-outside-" }));
  try {
    await Deno.writeTextFile(`${outside}/secret.txt`, "old secret\n");
    const args = { path: `${outside}/secret.txt`, content: "replaced\n" };
    const preview = await ws.preview("write", args);
    assert.deepEqual(preview, {
      path: `${outside}/secret.txt`,
      before: "",
      after: "replaced\n",
      outside: true,
    });
    assert.equal(await Deno.readTextFile(`${outside}/secret.txt`), "old secret\n");
    // Once allowed, the result's change has what was really there.
    const result = await ws.run("write", args);
    assert.deepEqual(result.change, {
      path: `${outside}/secret.txt`,
      before: "old secret\n",
      after: "replaced\n",
      outside: true,
    });
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("edit and write: a file too large to diff carries no change, and says so", async () => {
  await using ws = await workspace();
  // Twice 600 KB (before and after) is past the limit; one 600 KB side with a small one is not.
  const big = "x".repeat(600 * 1024) + "\nend\n";
  await Deno.writeTextFile(`${ws.root}/big.txt`, big);
  const edited = await ws.run("edit", { path: "big.txt", old_string: "end", new_string: "END" });
  assert.ok(edited.ok, edited.error);
  assert.ok(edited.change === undefined);
  assert.match(edited.output, /too large to show as a diff/);
  assert.equal(
    await ws.preview("edit", { path: "big.txt", old_string: "END", new_string: "end" }),
    undefined,
  );
  const small = await ws.run("write", { path: "big.txt", content: "small\n" });
  assert.equal(small.change?.after, "small\n");
  await Deno.writeTextFile(`${ws.root}/big.txt`, "y".repeat(1024 * 1024 + 1));
  const written = await ws.run("write", { path: "big.txt", content: "small\n" });
  assert.ok(written.ok, written.error);
  assert.ok(written.change === undefined);
  assert.match(
    written.output,
    /^Overwrote big\.txt .*; the change is too large to show as a diff$/,
  );
  assert.equal(await Deno.readTextFile(`${ws.root}/big.txt`), "small\n");
  // A small write of a binary file: no text to diff, and nothing said about size.
  await Deno.writeFile(`${ws.root}/bin.dat`, new Uint8Array([0, 1, 2, 0]));
  const binary = await ws.run("write", { path: "bin.dat", content: "text\n" });
  assert.equal(binary.change, undefined);
  assert.doesNotMatch(binary.output, /too large/);
});
