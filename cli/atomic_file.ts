/**
 * Writing a file so that a reader never sees half of it: the text goes to a temporary file beside
 * it, which is then renamed over it.
 *
 * @module
 */

/**
 * Writes `text` to `path` atomically (a temporary file beside it, then a rename); on failure the
 * temporary file is removed and the error rethrown. The directory must exist.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeTextAtomic } from "./atomic_file.ts";
 * const dir = await Deno.makeTempDir();
 * await writeTextAtomic(`${dir}/a.json`, "{}\n");
 * assert.equal(await Deno.readTextFile(`${dir}/a.json`), "{}\n");
 * assert.deepEqual([...Deno.readDirSync(dir)].map((entry) => entry.name), ["a.json"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function writeTextAtomic(path: string, text: string): Promise<void> {
  const temp = `${path}.tmp-${crypto.randomUUID()}`;
  try {
    await Deno.writeTextFile(temp, text);
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}
