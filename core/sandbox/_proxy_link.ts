// What every proxy of a sandboxed plugin's capabilities calls through: a request under the
// deadline of its seam, a notification, and the plugin's id for messages. The stand-in plugin
// (`sandboxed_plugin.ts`) implements it over its current process, so a proxy built before a
// restart talks to the new process and one built for a process that ended answers at once.

import { AmberError } from "../errors.ts";
import type { Seam } from "../limits.ts";

/** Options of one call into the plugin process. */
export interface LinkCallOptions {
  /** Sent across as `$/cancelRequest` when aborted. */
  readonly signal?: AbortSignal;
  /** Receives each `$/progress` value. */
  readonly onProgress?: (value: unknown) => void;
  /**
   * Adds the `toolGrace` deadline to the seam's: the kernel cancels a tool at its deadline and
   * waits the grace for it, so the process is killed only once the kernel has given up on it.
   */
  readonly withGrace?: boolean;
}

/** A proxy's way into the plugin process. */
export interface ProxyLink {
  /** The plugin's id. */
  readonly pluginId: string;
  /**
   * Sends a request under the deadline of `seam` (`timeoutFor` of the host's configuration);
   * past it the process is killed and the call rejects with a `DeadlineError`. Rejects with a
   * {@linkcode PluginEndedError} when the process is gone, and an `RpcError` for the plugin's
   * own error answer.
   */
  call<T>(
    method: string,
    params: unknown,
    seam: Seam,
    what: string,
    options?: LinkCallOptions,
  ): Promise<T>;
  /** Sends a notification; nothing happens when the process is gone. */
  notify(method: string, params?: unknown): void;
}

/**
 * A call into a sandboxed plugin whose process is not running (it ended, was killed, or the
 * plugin was switched off): answered at once, naming the plugin and why.
 */
export class PluginEndedError extends AmberError {
  /** The plugin. */
  readonly pluginId: string;
  /** Why its process is gone. */
  readonly reason: string;
  /** Creates the error. */
  constructor(pluginId: string, reason: string, options?: ErrorOptions) {
    super(`plugin '${pluginId}' is not running: ${reason}`, options);
    this.name = "PluginEndedError";
    this.pluginId = pluginId;
    this.reason = reason;
  }
}
