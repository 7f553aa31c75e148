// The plugin lock, written by hand for sources `amber plugins add` cannot add (a file that never
// parses, a module that hangs while loading): the lock format is documented, so a test may write
// it.

import { join } from "node:path";

/** The SHA-256 of the file at `path`, in lowercase hex: what a lock entry records. */
export async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The entry `amber plugins add` would write for the local `file`, recorded with `hash`. */
export function lockEntry(id: string, file: string, hash: string, name: string = id) {
  const url = `file://${file}`;
  return {
    id,
    name,
    version: "1.0.0",
    spec: file,
    kind: "file",
    specifier: url,
    resolved: url,
    sha256: hash,
    addedAt: new Date(0).toISOString(),
  };
}

/** Writes `configDir`'s lock with `plugins` as its entries. */
export async function writeLock(
  configDir: string,
  plugins: readonly ReturnType<typeof lockEntry>[],
): Promise<void> {
  await Deno.writeTextFile(
    join(configDir, "plugins.lock.json"),
    JSON.stringify({ version: 1, plugins }),
  );
}

/** Writes `configDir`'s lock with one entry: `file` as plugin `id`, at its current hash. */
export async function lockFile(
  configDir: string,
  id: string,
  file: string,
  name: string = id,
): Promise<void> {
  await writeLock(configDir, [lockEntry(id, file, await sha256(file), name)]);
}
