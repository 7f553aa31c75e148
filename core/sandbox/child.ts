/**
 * The plugin process's side of the sandbox: {@linkcode servePlugin} answers every host -> plugin
 * method of the protocol for one plugin, the same `Plugin` object an author writes for
 * in-process use, and {@linkcode runPluginProcess} is what a plugin's `deno run` process does
 * (`child_main.ts` is its entry module): speak the protocol on stdin and stdout, import the
 * plugin, serve it, and exit when the host closes stdin or says `shutdown`.
 *
 * In the process the plugin gets a context like the host's: its id, the workspace, the
 * configuration and its decoded section (read-only), event subscriptions (only the subscribed
 * types cross), the other plugins' tools as frozen stand-ins it cannot run, and the host's UI
 * when there is one. What cannot cross is refused with a {@linkcode SandboxLimitError}: an event
 * interceptor answers synchronously. Jobs, todos, sub-agents and processes are absent: they
 * would run things outside the process's grant.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Plugin } from "@amber/core";
 * import { Method, PROTOCOL_VERSION, RpcPeer, servePlugin } from "@amber/core/sandbox";
 * const greeter: Plugin = {
 *   id: "greeter",
 *   version: "1.0.0",
 *   name: "Greeter",
 *   initialize: () => true,
 *   shutdown: () => {},
 *   capabilities: () => [{
 *     kind: "tool",
 *     name: "greet",
 *     tools: [{
 *       name: "greet",
 *       description: "Greets.",
 *       parameters: { type: "object", properties: { name: { type: "string" } } },
 *       execute: (args) => ({ ok: true, output: `Hello, ${(args as { name: string }).name}!` }),
 *     }],
 *   }],
 * };
 * const up = new TransformStream<Uint8Array, Uint8Array>();
 * const down = new TransformStream<Uint8Array, Uint8Array>();
 * const host = new RpcPeer({ input: down.readable, output: up.writable });
 * const served = servePlugin(greeter, new RpcPeer({ input: up.readable, output: down.writable }));
 * const manifest = await host.request(Method.describe, {
 *   protocolVersion: PROTOCOL_VERSION,
 *   hostVersion: "0.1.0",
 * });
 * assert.equal((manifest as { id: string }).id, "greeter");
 * const ready = await host.request(Method.initialize, {
 *   pluginId: "greeter",
 *   workspace: "/work",
 *   config: { plugins: {} },
 *   section: {},
 *   tools: [],
 *   services: {},
 * });
 * assert.equal((ready as { ok: boolean }).ok, true);
 * const result = await host.request(Method.toolExecute, {
 *   capability: "greet",
 *   tool: "greet",
 *   args: { name: "amber" },
 * });
 * assert.deepEqual(result, { ok: true, output: "Hello, amber!" });
 * await host.request(Method.shutdown);
 * await served;
 * await host.close();
 * ```
 *
 * @module
 */

import { AmberError, describeError } from "../errors.ts";
import { RpcPeer } from "./json_rpc.ts";
import { Method } from "./protocol.ts";
import { containUnhandled, routeConsole } from "./_child_console.ts";
import { PluginServer } from "./_child_server.ts";

export { SandboxLimitError } from "./_child_scope.ts";

/** Options of {@linkcode servePlugin}. */
export interface ServePluginOptions {
  /** Where the plugin came from (its file or specifier), named in the messages about it. */
  readonly source?: string;
}

/**
 * Serves one plugin over `peer`, answering every host -> plugin method of the protocol, and
 * resolves when the connection ends or after the host's `shutdown` was answered (the output is
 * then closed). `plugin` is what the plugin's module exports by default: a plugin, a factory
 * `(api) => plugin` (called at `describe` with the host's version), or a promise of either; a
 * rejected promise (a failed import) and an invalid plugin are answered at `describe` as an
 * `RpcError` whose message names the plugin, `options.source` and the field (also in the
 * error's `data.field`). Nothing the plugin throws ends the serving: a throwing tool is an error
 * result, a throwing hook, gate or command an error answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Method, PROTOCOL_VERSION, RpcError, RpcPeer, servePlugin } from "@amber/core/sandbox";
 * const up = new TransformStream<Uint8Array, Uint8Array>();
 * const down = new TransformStream<Uint8Array, Uint8Array>();
 * const host = new RpcPeer({ input: down.readable, output: up.writable });
 * const child = new RpcPeer({ input: up.readable, output: down.writable });
 * const served = servePlugin({ id: "tiny", version: "01.0.0" }, child, { source: "/p/tiny.ts" });
 * await assert.rejects(
 *   host.request(Method.describe, { protocolVersion: PROTOCOL_VERSION, hostVersion: "0.1.0" }),
 *   (error: unknown) => {
 *     assert.ok(error instanceof RpcError);
 *     assert.match(error.message, /^the default export is not a plugin: version '01\.0\.0' is not semver/);
 *     assert.deepEqual(error.data, { field: "version" });
 *     return true;
 *   },
 * );
 * await host.close();
 * await served;
 * ```
 */
export function servePlugin(
  plugin: unknown,
  peer: RpcPeer,
  options: ServePluginOptions = {},
): Promise<void> {
  return new PluginServer(plugin, peer, options.source).finished;
}

/**
 * A plugin's module could not be imported in its process: the file, and Deno's own words
 * (a syntax error, a missing module, a permission the process was not granted).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginImportError } from "@amber/core/sandbox";
 * const error = new PluginImportError("/p/evil.ts", new Error("boom"));
 * assert.equal(error.name, "PluginImportError");
 * assert.equal(error.message, "cannot be imported: Error: boom");
 * assert.equal(error.file, "/p/evil.ts");
 * ```
 */
export class PluginImportError extends AmberError {
  /** The module that failed. */
  readonly file: string;
  /** Creates the error for `file`; `cause` is what the import threw. */
  constructor(file: string, cause: unknown) {
    // The host puts the file first, as it does for an import of its own. Deno wraps a module
    // that does not parse in a TypeError whose message names the real error.
    const words = cause instanceof Error
      ? /^[A-Z]\w*Error: /.test(cause.message) ? cause.message : `${cause.name}: ${cause.message}`
      : String(cause);
    super(`cannot be imported: ${words}`, { cause });
    this.name = "PluginImportError";
    this.file = file;
  }
}

/**
 * What a plugin's process does (`deno run --no-prompt <grant> child_main.ts <specifier>`, or
 * the single-file amber with `--amber-plugin-process <specifier>`): speaks the protocol on
 * stdin and stdout, routes `console` to the plugin's log (stdout is the protocol), logs what
 * the plugin leaves unhandled instead of dying of it, imports `specifier` (a path, a `file:`
 * URL, `npm:` or `jsr:`) and serves its default export. Exits when the host closes stdin
 * (also when the host was killed: no orphan) and after `shutdown`; never returns.
 *
 * @example
 * ```ts ignore
 * import { runPluginProcess } from "@amber/core/sandbox";
 * // The whole of a plugin process's entry module:
 * await runPluginProcess(Deno.args.at(-1) ?? "");
 * ```
 */
export async function runPluginProcess(specifier: string): Promise<never> {
  // Taken before the plugin is imported: a plugin that replaces `Deno.exit` must not keep its
  // process alive once amber is gone (stdin closed).
  const exit: (code?: number) => never = Deno.exit.bind(Deno);
  const peer = new RpcPeer({ input: Deno.stdin.readable, output: Deno.stdout.writable });
  const log = (level: string, message: string) => peer.notify(Method.log, { level, message });
  routeConsole(console, log);
  containUnhandled(log);
  const file = specifier === "" ? "(no plugin specifier given)" : specifier;
  const exported = importDefault(specifier).catch((error: unknown) => {
    throw new PluginImportError(file, error);
  });
  // Awaited at `describe`; until then its failure is not unhandled.
  exported.catch(() => {});
  await servePlugin(exported, peer, { source: file });
  // The plugin's own timers must not keep an orphan alive.
  return exit(0);
}

async function importDefault(specifier: string): Promise<unknown> {
  if (specifier === "") throw new Error("the process was started without a plugin to load");
  const module = await import(moduleUrl(specifier));
  return module.default;
}

// A path is made a file URL: imported as it is, it would resolve against this module.
function moduleUrl(specifier: string): string {
  if (/^(file|npm|jsr|https?|data):/.test(specifier)) return specifier;
  if (specifier.startsWith("/")) return new URL(specifier, "file:///").href;
  try {
    return new URL(specifier, `file://${Deno.cwd()}/`).href;
  } catch (error) {
    throw new Error(`a relative plugin path needs the working directory: ${describeError(error)}`);
  }
}
