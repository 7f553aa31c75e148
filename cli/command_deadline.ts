/**
 * Running a command of the command tree under its deadline: `amber cmd` and the interactive
 * session's slash line both dispatch through here, so a handler that never settles costs at
 * most `timeouts.command` (per plugin: `timeouts.plugins.<id>.command`) and then counts as a
 * fault of the plugin that contributed the command.
 *
 * @module
 */

import {
  type AmberConfig,
  type CommandOutcome,
  type CommandRegistry,
  DeadlineError,
  type Diagnostic,
  timeoutFor,
  withDeadline,
} from "@amber/core";
import { noteAbandonedWork } from "./containment.ts";

/** What a command's deadline needs of the runtime: its configuration, and where faults go. */
export interface CommandHost {
  /** The configuration in force. */
  config(): AmberConfig;
  /** Where the fault of a handler past its deadline is reported. */
  report(diagnostic: Diagnostic): void;
}

/**
 * Dispatches `root` + `path` with `arg` like `registry.dispatch`, within the `command` deadline
 * of the root's owner. A handler still running at the deadline is abandoned: the outcome is an
 * error saying so, and the owner (unless it is core) is reported a fault.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCommandRegistry } from "@amber/registries/commands";
 * import { dispatchWithin } from "./command_deadline.ts";
 * const commands = createCommandRegistry({
 *   coreRoots: {
 *     echo: { help: "Echo", handlers: { "": (arg) => arg } },
 *     stuck: { help: "Never answers", handlers: { "": () => new Promise<string>(() => {}) } },
 *   },
 * });
 * const host = {
 *   config: () => ({ plugins: {}, timeouts: { command: 20 } }),
 *   report: () => {},
 * };
 * assert.deepEqual(await dispatchWithin(host, commands, "echo", [], "hi"), { ok: true, text: "hi" });
 * assert.deepEqual(await dispatchWithin(host, commands, "stuck", [], ""), {
 *   ok: false,
 *   error: "command '/stuck' did not finish within 20 ms; it was abandoned",
 * });
 * ```
 */
export async function dispatchWithin(
  host: CommandHost,
  registry: CommandRegistry,
  root: string,
  path: readonly string[],
  arg: string,
): Promise<CommandOutcome> {
  const word = root.startsWith("/") ? root.slice(1) : root;
  const owner = registry.tree().find((node) => node.name === word)?.owner ?? "core";
  const line = [`/${word}`, ...path].join(" ");
  const what = owner === "core" ? `command '${line}'` : `command '${line}' of plugin '${owner}'`;
  const ms = timeoutFor(host.config(), "command", owner);
  try {
    return await withDeadline(() => registry.dispatch(root, path, arg), ms, what);
  } catch (error) {
    if (!(error instanceof DeadlineError)) throw error;
    // A handler cannot be cancelled; whatever it waits for stays behind.
    noteAbandonedWork();
    if (owner !== "core") {
      host.report({ pluginId: owner, where: `command '${line}'`, message: error.message, error });
    }
    return { ok: false, error: `${error.message}; it was abandoned` };
  }
}
