/**
 * Where `plugins.lock.json` is, apart from what reads and checks it (`plugin_lock.ts`): a host
 * looks for the file at every start, and loads the lock's reader (with its module-graph checks)
 * only when there is one.
 *
 * @module
 */

import { join } from "node:path";

/** The lock file's name in the config directory. */
export const PLUGIN_LOCK_FILE = "plugins.lock.json";

/**
 * The path of `plugins.lock.json` in `configDir`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginLockPath } from "@amber/cli/third-party";
 * assert.equal(pluginLockPath("/cfg"), "/cfg/plugins.lock.json");
 * ```
 */
export function pluginLockPath(configDir: string): string {
  return join(configDir, PLUGIN_LOCK_FILE);
}
