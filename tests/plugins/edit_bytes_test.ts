// The file tools change no byte they were not asked to: edit keeps a BOM and line ends and
// refuses what is not UTF-8, read says when a file is not UTF-8, write keeps an existing file's
// conventions.

import assert from "node:assert/strict";
import type { ToolResult } from "@amber/core";
import { createToolEditPlugin } from "@amber/plugins/tool_edit";
import { createToolReadPlugin } from "@amber/plugins/tool_read";
import { createToolWritePlugin } from "@amber/plugins/tool_write";
import { makeRuntime } from "../_helpers.ts";

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const BOM = [0xef, 0xbb, 0xbf];

interface Workspace {
  readonly root: string;
  run(name: string, args: unknown): Promise<ToolResult>;
  bytes(name: string): Promise<number[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function workspace(): Promise<Workspace> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-bytes-" }));
  const { runtime, registries } = makeRuntime({ workspace: { root }, allOn: true });
  for (const plugin of [createToolEditPlugin(), createToolReadPlugin(), createToolWritePlugin()]) {
    runtime.register(plugin);
  }
  await runtime.start();
  return {
    root,
    run: (name, args) =>
      registries.tool.execute(name, args, { signal: new AbortController().signal }),
    bytes: async (name) => [...await Deno.readFile(`${root}/${name}`)],
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

function okOutput(result: ToolResult): string {
  assert.ok(result.ok, `expected ok, got error: ${result.error}`);
  return result.output;
}

Deno.test("edit refuses a file that is not valid UTF-8 and leaves every byte", async () => {
  await using ws = await workspace();
  // Latin-1 "café" on line 2: 0xe9 is not UTF-8.
  const latin1 = [...encode("first\nQcaf"), 0xe9, ...encode(" au lait\nlast\n")];
  await Deno.writeFile(`${ws.root}/menu.txt`, new Uint8Array(latin1));
  const result = await ws.run("edit", { path: "menu.txt", old_string: "last", new_string: "end" });
  assert.equal(result.ok, false);
  assert.match(result.error ?? "", /^cannot edit menu\.txt: it is not valid UTF-8/);
  assert.match(result.error ?? "", /offset 10, on line 2/);
  assert.deepEqual(await ws.bytes("menu.txt"), latin1);
});

Deno.test("edit keeps a UTF-8 byte order mark and every byte outside the replacement", async () => {
  await using ws = await workspace();
  const before = "héllo wörld 🎉\nkeep\tthis\r\nbare\rcarriage\nTOKEN tail";
  await Deno.writeFile(`${ws.root}/bom.txt`, new Uint8Array([...BOM, ...encode(before)]));
  okOutput(await ws.run("edit", { path: "bom.txt", old_string: "TOKEN", new_string: "ünïcode" }));
  const after = before.replace("TOKEN", "ünïcode");
  assert.deepEqual(await ws.bytes("bom.txt"), [...BOM, ...encode(after)]);
});

Deno.test("edit gives new text a CRLF file's line ends, however the old text matched", async () => {
  await using ws = await workspace();
  await Deno.writeTextFile(`${ws.root}/win.txt`, "a\r\nb\r\nc\r\n");
  // A one-line old_string matches as it is; the new text's LF breaks become CRLF.
  okOutput(await ws.run("edit", { path: "win.txt", old_string: "a", new_string: "x\ny" }));
  assert.equal(await Deno.readTextFile(`${ws.root}/win.txt`), "x\r\ny\r\nb\r\nc\r\n");
  // A multi-line old_string with LF matches the CRLF text.
  okOutput(await ws.run("edit", { path: "win.txt", old_string: "b\nc", new_string: "B\nC" }));
  assert.equal(await Deno.readTextFile(`${ws.root}/win.txt`), "x\r\ny\r\nB\r\nC\r\n");
});

Deno.test("edit matches CRLF text against an LF file and writes LF", async () => {
  await using ws = await workspace();
  await Deno.writeTextFile(`${ws.root}/unix.txt`, "one\ntwo\nthree\n");
  okOutput(
    await ws.run("edit", { path: "unix.txt", old_string: "one\r\ntwo", new_string: "1\r\n2" }),
  );
  assert.equal(await Deno.readTextFile(`${ws.root}/unix.txt`), "1\n2\nthree\n");
});

Deno.test("edit in a mixed file changes only the matched region", async () => {
  await using ws = await workspace();
  const before = "lf line\ncrlf line\r\nlast\n";
  await Deno.writeTextFile(`${ws.root}/mixed.txt`, before);
  okOutput(await ws.run("edit", { path: "mixed.txt", old_string: "lf line\n", new_string: "" }));
  assert.equal(await Deno.readTextFile(`${ws.root}/mixed.txt`), "crlf line\r\nlast\n");
});

Deno.test("edit and read name UTF-16 instead of calling it binary", async () => {
  await using ws = await workspace();
  const utf16 = [0xff, 0xfe, 0x68, 0x00, 0x69, 0x00];
  await Deno.writeFile(`${ws.root}/wide.txt`, new Uint8Array(utf16));
  const edited = await ws.run("edit", { path: "wide.txt", old_string: "h", new_string: "H" });
  assert.match(edited.error ?? "", /^cannot edit wide\.txt: it is UTF-16LE text/);
  const read = await ws.run("read", { path: "wide.txt" });
  assert.match(read.error ?? "", /^cannot read wide\.txt: it is UTF-16LE text/);
  assert.deepEqual(await ws.bytes("wide.txt"), utf16);
});

Deno.test("read says when a file is not UTF-8, and where", async () => {
  await using ws = await workspace();
  await Deno.writeFile(
    `${ws.root}/legacy.txt`,
    new Uint8Array([...encode("ok\nna"), 0xef, ...encode("ve\n")]),
  );
  const output = okOutput(await ws.run("read", { path: "legacy.txt" }));
  assert.match(output, /^ {4}1\tok\n {4}2\tna\uFFFDve\n/);
  assert.match(
    output,
    /\[legacy\.txt is not valid UTF-8: the first bad byte is at offset 5, on line 2;/,
  );
  // A sequence cut off by the end of the file counts too.
  await Deno.writeFile(`${ws.root}/cut.txt`, new Uint8Array([...encode("a\nb"), 0xe2, 0x82]));
  assert.match(
    okOutput(await ws.run("read", { path: "cut.txt" })),
    /cut\.txt is not valid UTF-8: the first bad byte is at offset 3, on line 2;/,
  );
  // Valid UTF-8 gets no note.
  await Deno.writeTextFile(`${ws.root}/fine.txt`, "ünïcode 🎉\n");
  assert.doesNotMatch(okOutput(await ws.run("read", { path: "fine.txt" })), /UTF-8/);
});

Deno.test("write over an existing file keeps its BOM and CRLF line ends, and says so", async () => {
  await using ws = await workspace();
  await Deno.writeFile(
    `${ws.root}/win.txt`,
    new Uint8Array([...BOM, ...encode("old\r\nfile\r\n")]),
  );
  const output = okOutput(await ws.run("write", { path: "win.txt", content: "new\ntext\n" }));
  assert.match(output, /kept its CRLF line ends and UTF-8 byte order mark$/);
  assert.deepEqual(await ws.bytes("win.txt"), [...BOM, ...encode("new\r\ntext\r\n")]);
  // Content with carriage returns of its own is written as given (the BOM still kept).
  okOutput(await ws.run("write", { path: "win.txt", content: "a\r\nb\nc" }));
  assert.deepEqual(await ws.bytes("win.txt"), [...BOM, ...encode("a\r\nb\nc")]);
  // An LF file and a new file get exactly the content.
  await Deno.writeTextFile(`${ws.root}/unix.txt`, "x\ny\n");
  const plain = okOutput(await ws.run("write", { path: "unix.txt", content: "p\nq\n" }));
  assert.doesNotMatch(plain, /kept/);
  assert.equal(await Deno.readTextFile(`${ws.root}/unix.txt`), "p\nq\n");
  okOutput(await ws.run("write", { path: "fresh.txt", content: "\uFEFFz\n" }));
  assert.deepEqual(await ws.bytes("fresh.txt"), [...BOM, ...encode("z\n")]);
});

Deno.test("write over a file that is not UTF-8 text takes the content as given", async () => {
  await using ws = await workspace();
  await Deno.writeFile(`${ws.root}/blob.bin`, new Uint8Array([...BOM, 0x00, 0x0d, 0x0a]));
  okOutput(await ws.run("write", { path: "blob.bin", content: "a\nb" }));
  assert.equal(await Deno.readTextFile(`${ws.root}/blob.bin`), "a\nb");
});
