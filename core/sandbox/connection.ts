/**
 * The host's end of one plugin process, as the stand-in plugin uses it: calls with deadlines,
 * and one verdict when the process ends. `process.ts` implements it over a real `deno run`
 * child; a test can implement it over two {@linkcode RpcPeer}s in memory.
 *
 * @module
 */

import type { RpcPeer } from "./json_rpc.ts";

/** Options of {@linkcode PluginConnection.call}. */
export interface CallOptions {
  /**
   * How long the plugin has to answer. Past it the process is killed (a spinning plugin cannot
   * be asked to stop) and the call rejects with a `DeadlineError` naming `what`.
   */
  readonly deadlineMs: number;
  /** What the call is, for messages: "tool 'echo' of plugin 'greeter'". */
  readonly what: string;
  /** Sends `$/cancelRequest` when aborted; the deadline still applies. */
  readonly signal?: AbortSignal;
  /** Receives each `$/progress` value. */
  readonly onProgress?: (value: unknown) => void;
}

/** How a plugin process ended. */
export interface ConnectionEnd {
  /**
   * Why, for the user: "its process exited with code 0", "its process was killed: tool 'x' did
   * not answer within 500 ms", "it wrote to stdout what is not the protocol: 'hello'".
   */
  readonly reason: string;
  /** Whether the host ended it on purpose (`stop()`), not a fault of the plugin. */
  readonly expected: boolean;
}

/** The host's end of one plugin process. */
export interface PluginConnection {
  /** The peer: register the plugin's notifications and requests here. */
  readonly peer: RpcPeer;
  /** The process id, when there is a process. */
  readonly pid?: number;
  /**
   * Sends a request with a deadline; rejects with `DeadlineError` (after killing the process),
   * `RpcError` (the plugin's error answer) or `PeerClosedError` (the process ended first).
   */
  call<T>(method: string, params: unknown, options: CallOptions): Promise<T>;
  /** Settles once, when the process has ended, with why. */
  readonly ended: Promise<ConnectionEnd>;
  /**
   * Ends it on purpose: closes its stdin (the plugin process exits when it sees that), waits up
   * to `graceMs`, then kills it. Resolves when it is gone.
   */
  stop(graceMs?: number): Promise<void>;
  /** Kills it now; `ended` then gives `reason`. */
  kill(reason: string): void;
}
