// `read` returns PNG, JPEG, GIF and WebP files as images, known by their first bytes: a model that
// takes images sees them, and the text names them. A file named .png that is text stays text.

import assert from "node:assert/strict";
import { createToolReadPlugin } from "@amber/plugins/tool_read";
import { makeRuntime } from "../_helpers.ts";

// A 1x1 transparent PNG.
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

async function workspace() {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-read-img-" }));
  const { runtime, registries } = makeRuntime({ workspace: { root }, allOn: true });
  runtime.register(createToolReadPlugin());
  await runtime.start();
  return {
    root,
    read: (path: string) =>
      registries.tool.execute("read", { path }, { signal: new AbortController().signal }),
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("read returns an image file as an image, its text naming it", async () => {
  await using ws = await workspace();
  await Deno.writeFile(`${ws.root}/shot.png`, PNG);
  const result = await ws.read("shot.png");
  assert.equal(result.ok, true, result.error);
  assert.equal(result.output, `shot.png: image/png image, ${PNG.length} bytes`);
  assert.equal(result.images?.length, 1);
  assert.equal(result.images![0].mimeType, "image/png");
  assert.deepEqual(
    Uint8Array.from(atob(result.images![0].data), (c) => c.charCodeAt(0)),
    PNG,
  );
});

Deno.test("read knows JPEG, GIF and WebP by their bytes, whatever the file is called", async () => {
  await using ws = await workspace();
  const files: [string, number[], string][] = [
    ["a.bin", [0xff, 0xd8, 0xff, 0xe0, 0, 0x10], "image/jpeg"],
    ["b", [...new TextEncoder().encode("GIF89a"), 1, 0, 1, 0], "image/gif"],
    ["c.img", [
      ...new TextEncoder().encode("RIFF"),
      4,
      0,
      0,
      0,
      ...new TextEncoder().encode("WEBPVP8 "),
    ], "image/webp"],
  ];
  for (const [name, bytes, type] of files) {
    await Deno.writeFile(`${ws.root}/${name}`, Uint8Array.from(bytes));
    const result = await ws.read(name);
    assert.equal(result.ok, true, result.error);
    assert.equal(result.images?.[0].mimeType, type, name);
  }
});

Deno.test("a text file called .png stays text, and an image over 5 MB is refused with its size", async () => {
  await using ws = await workspace();
  await Deno.writeTextFile(`${ws.root}/fake.png`, "not an image\n");
  const text = await ws.read("fake.png");
  assert.equal(text.ok, true, text.error);
  assert.equal(text.images, undefined);
  assert.match(text.output, /^ +1\tnot an image$/m);

  const big = new Uint8Array(5 * 1024 * 1024 + 1);
  big.set(PNG.subarray(0, 8));
  await Deno.writeFile(`${ws.root}/big.png`, big);
  const refused = await ws.read("big.png");
  assert.equal(refused.ok, false);
  assert.match(
    String(refused.error),
    /big\.png: it is an image \(image\/png\) of 5242881 bytes, over the 5242880 bytes \(5 MB\)/,
  );
});
