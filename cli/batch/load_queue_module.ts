/**
 * Loads the modules that bring in BullMQ without its native MessagePack decoder. BullMQ's
 * `msgpackr` tries to open a native add-on (`msgpackr-extract`) when it loads; amber runs without
 * FFI permission, so on a terminal Deno would stop `amber worker` and `amber batch` at a
 * permission prompt, and elsewhere print a denial. `msgpackr` skips the add-on when
 * `MSGPACKR_NATIVE_ACCELERATION_DISABLED` is `true` as it loads, and decodes in JavaScript, as it
 * does after a denial anyway.
 *
 * @module
 */

import { loadModule } from "../lazy_modules.ts";

const SWITCH = "MSGPACKR_NATIVE_ACCELERATION_DISABLED";

/**
 * {@linkcode loadModule} of `name` with the native decoder switched off while it loads (unless
 * the environment already says otherwise); the environment is as it was afterwards, so the
 * sessions' commands do not inherit the switch.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { provideModules } from "../lazy_modules.ts";
 * import { loadQueueModule } from "./load_queue_module.ts";
 * let seen: string | undefined;
 * provideModules({
 *   "./example_queue.ts": () => {
 *     seen = Deno.env.get("MSGPACKR_NATIVE_ACCELERATION_DISABLED");
 *     return Promise.resolve({ ok: true });
 *   },
 * });
 * const loaded = await loadQueueModule<{ ok: boolean }>("./example_queue.ts");
 * assert.equal(loaded.ok, true);
 * assert.equal(seen, "true");
 * assert.equal(Deno.env.get("MSGPACKR_NATIVE_ACCELERATION_DISABLED"), undefined);
 * ```
 */
export async function loadQueueModule<T>(name: string): Promise<T> {
  if (Deno.env.get(SWITCH) !== undefined) return await loadModule<T>(name);
  Deno.env.set(SWITCH, "true");
  try {
    return await loadModule<T>(name);
  } finally {
    Deno.env.delete(SWITCH);
  }
}
