/**
 * The host's stand-in for a plugin that runs in a process of its own: a real {@linkcode Plugin}
 * whose id, version, name, requirements and bound are what the process described, so the
 * runtime validates, orders, activates and switches it off like any plugin, and whose
 * capabilities are proxies that cross to the process for every call (see `protocol.ts`).
 *
 * Every call has the deadline of its seam (`timeoutFor` of the host's configuration); past it
 * the process is killed, since a spinning plugin cannot be asked to stop. When the process ends
 * while the plugin is active (it exited, was killed, wrote garbage to its stdout), `onFault` is
 * told once, which a host wires to `PluginRuntime.fail`, and every later call answers at once
 * with an error naming the plugin and why. Switching the plugin off ends its process;
 * switching it back on starts a new one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { any, PluginRuntime } from "@amber/core";
 * import { loadSandboxedPlugin, RpcPeer } from "@amber/core/sandbox";
 * import { createRegistries } from "@amber/registries";
 *
 * // A plugin process in memory: two peers, and a plugin side answering by hand.
 * const up = new TransformStream<Uint8Array, Uint8Array>();
 * const down = new TransformStream<Uint8Array, Uint8Array>();
 * const child = new RpcPeer({ input: down.readable, output: up.writable });
 * child.handle("describe", () => ({
 *   protocolVersion: 1, id: "hello", version: "1.0.0", name: "Hello",
 *   bound: { prompts: any() }, live: false, ticks: false,
 * }));
 * child.handle("initialize", () => ({
 *   ok: true,
 *   capabilities: [{ kind: "prompt", name: "hello", priority: 400, text: "Say hello." }],
 * }));
 * child.handle("shutdown", () => null);
 * const peer = new RpcPeer({ input: up.readable, output: down.writable });
 * const { promise: ended, resolve: end } = Promise.withResolvers<
 *   { reason: string; expected: boolean }
 * >();
 * const connection = {
 *   peer,
 *   call: <T>(method: string, params: unknown) => peer.request<T>(method, params),
 *   ended,
 *   stop: async () => {
 *     await peer.close();
 *     end({ reason: "stopped", expected: true });
 *   },
 *   kill: (reason: string) => end({ reason, expected: false }),
 * };
 *
 * const sandboxed = await loadSandboxedPlugin({
 *   specifier: "file:///plugins/hello/mod.ts",
 *   pluginId: "hello",
 *   grant: {},
 *   workspace: "/ws",
 *   dataDir: "/cfg/plugins/hello/data",
 *   readFolders: [],
 *   hostVersion: "1.0.0",
 *   importTimeoutMs: 1_000,
 *   connect: () => connection,
 * });
 * const runtime = new PluginRuntime({ registries: createRegistries(), allOn: true });
 * runtime.register(sandboxed.plugin);
 * await runtime.start();
 * assert.equal(runtime.state("hello").status, "active");
 * assert.deepEqual(runtime.registries.prompt.assemble([]).blocks, ["hello"]);
 * await runtime.stop();
 * await sandboxed.close();
 * ```
 *
 * @module
 */

import type { AmberConfig } from "../config.ts";
import { AmberError, describeError } from "../errors.ts";
import type { AmberEvents, Subscription } from "../events.ts";
import { DeadlineError, type Seam, timeoutFor } from "../limits.ts";
import type { Plugin } from "../plugin.ts";
import type { PluginContext, PluginServices } from "../services.ts";
import type { ToolEntry, ToolView } from "../tool.ts";
import type { NotifyTone, UiService } from "../ui.ts";
import { proxyCapabilities } from "./_proxy_capabilities.ts";
import { CompactionDesk } from "./_proxy_compactor.ts";
import { proxyDialect } from "./_proxy_dialect.ts";
import { type LinkCallOptions, PluginEndedError, type ProxyLink } from "./_proxy_link.ts";
import { RenderBoard } from "./_proxy_renders.ts";
import { answerQuestion } from "./_proxy_ui.ts";
import type { ConnectionEnd, PluginConnection } from "./connection.ts";
import { PeerClosedError } from "./json_rpc.ts";
import { spawnPluginProcess } from "./process.ts";
import type { SpawnPluginOptions } from "./process_command.ts";
import {
  type CapabilityDescriptor,
  type DescribeParams,
  type InitializeParams,
  type InitializeResult,
  type LogParams,
  Method,
  type PluginChangedParams,
  type PluginManifest,
  PROTOCOL_VERSION,
  type SubscribeParams,
  type ToolInfo,
  type UiAskParams,
  type UiNotifyParams,
} from "./protocol.ts";
import { initializeProblem, manifestProblem, PLAIN_NO } from "./_process_answers.ts";

export { PluginEndedError } from "./_proxy_link.ts";

/** A sandboxed plugin's process ended while the plugin was active: what the host is told. */
export interface SandboxFault {
  /** The plugin. */
  readonly pluginId: string;
  /** Where it happened: `sandbox`, for its process. */
  readonly where: string;
  /** Why the process ended, for the user ("its process exited with code 1: ..."). */
  readonly message: string;
}

/** Options of {@linkcode loadSandboxedPlugin}: how to start the process, and the host's side. */
export interface SandboxedPluginOptions extends SpawnPluginOptions {
  /**
   * Starts the plugin's process and returns the host's end of it; by default
   * `spawnPluginProcess(options)`. Called again when the plugin is switched back on after its
   * process ended. Tests pass a connection in memory.
   */
  readonly connect?: () => PluginConnection;
  /** The host's amber version, sent with `describe`. */
  readonly hostVersion: string;
  /** The id the plugin must describe itself with (the one the lock recorded), if any. */
  readonly expectedId?: string;
  /**
   * How long the process has to import the plugin and describe it, in ms; past it the process
   * is killed and the load rejects with a `DeadlineError`. A restart after a switch-off uses
   * the `import` seam of the configuration instead.
   */
  readonly importTimeoutMs: number;
  /** Told once when the process ends while the plugin is active; wire it to `PluginRuntime.fail`. */
  readonly onFault?: (fault: SandboxFault) => void;
  /**
   * How often an active plugin's process is asked whether it still answers (ms; 10,000 by
   * default). One that does not within the `hook` deadline is killed: a plugin that spins where
   * no call of amber's waits on it (a timer, a render-only plugin) is found all the same.
   */
  readonly livenessMs?: number;
}

/** A plugin running in its own process, as the host holds it. */
export interface SandboxedPlugin {
  /** The stand-in to register with the runtime. */
  readonly plugin: Plugin;
  /** What the process described. */
  readonly manifest: PluginManifest;
  /** The id of the plugin's process while one runs. */
  readonly pid: number | undefined;
  /** Ends the process, if one runs, without a `shutdown` request; the host is done with it. */
  close(): Promise<void>;
}

/**
 * A sandboxed plugin could not be loaded or initialized in its process: the import failed, the
 * process ended first, it describes another plugin or speaks another protocol.
 */
export class SandboxedPluginError extends AmberError {
  /** The plugin (or what stands for it before it described itself). */
  readonly pluginId: string;
  /** Creates the error. */
  constructor(pluginId: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SandboxedPluginError";
    this.pluginId = pluginId;
  }
}

// How long a plugin is given to answer `shutdown` before its process is stopped anyway.
// How often an active plugin process is checked for an answer.
const LIVENESS_MS = 10_000;
const SHUTDOWN_MS = 1_000;
// How long to wait for a process's verdict once its connection closed.
const VERDICT_MS = 1_000;
// How many event types one plugin may subscribe to: each is a handler on the host's bus.
const MAX_SUBSCRIPTIONS = 64;

/**
 * Starts a plugin's process, asks it to `describe` the plugin (within `importTimeoutMs`, else
 * the process is killed and this rejects with a `DeadlineError`), checks the protocol version
 * and `expectedId`, and returns the stand-in {@linkcode Plugin} for it. Any other failure is a
 * {@linkcode SandboxedPluginError} carrying the plugin process's own words (an import error
 * names the file), and leaves no process behind.
 */
export async function loadSandboxedPlugin(
  options: SandboxedPluginOptions,
): Promise<SandboxedPlugin> {
  const sandbox = new Sandbox(options);
  const manifest = await sandbox.open(options.importTimeoutMs);
  return {
    plugin: sandbox.plugin(manifest),
    manifest,
    get pid() {
      return sandbox.pid;
    },
    close: () => sandbox.close(),
  };
}

// One plugin's process as the host holds it: it starts and restarts the process, answers what
// the process asks of the host, and is the link every proxy calls through.
class Sandbox implements ProxyLink {
  readonly #options: SandboxedPluginOptions;
  readonly #board = new RenderBoard();
  readonly #desk = new CompactionDesk();
  readonly #subscriptions = new Map<string, Subscription>();
  #id: string;
  #manifest: PluginManifest | undefined;
  #connection: PluginConnection | undefined;
  // Why there is no process, for the calls that find none.
  #gone = "it was not started";
  #active = false;
  #context: PluginContext | undefined;
  #descriptors: readonly CapabilityDescriptor[] = [];
  #live = 0;
  // The configuration and section the process was last sent.
  #config: unknown;
  #section: unknown;
  #toolList: readonly ToolEntry[] | undefined;
  // Calls in flight (a liveness check waits while there is one).
  #calls = 0;

  constructor(options: SandboxedPluginOptions) {
    this.#options = options;
    this.#id = options.expectedId ?? options.pluginId;
  }

  get pluginId(): string {
    return this.#id;
  }

  get pid(): number | undefined {
    return this.#connection?.pid;
  }

  // Starts a process and has it describe the plugin; the same plugin as before on a restart.
  async open(deadlineMs: number): Promise<PluginManifest> {
    const connection = (this.#options.connect ?? (() => spawnPluginProcess(this.#options)))();
    this.#connection = connection;
    this.#listen(connection);
    connection.ended.then((end) => this.#ended(connection, end));
    let described: unknown;
    try {
      const params: DescribeParams = {
        protocolVersion: PROTOCOL_VERSION,
        hostVersion: this.#options.hostVersion,
      };
      described = await connection.call(Method.describe, params, {
        deadlineMs,
        what: `plugin '${this.#id}': import`,
      });
    } catch (error) {
      // Why the process ended is read before it is stopped, which would be a verdict of its own.
      const why = error instanceof PeerClosedError
        ? await verdict(connection)
        : describeError(error);
      await this.#drop(connection);
      if (error instanceof DeadlineError) throw error;
      throw new SandboxedPluginError(
        this.#id,
        `plugin '${this.#id}': its process could not load it: ${why}`,
        { cause: error },
      );
    }
    const problem = manifestProblem(described, {
      expectedId: this.#manifest?.id ?? this.#options.expectedId,
      version: this.#manifest?.version,
    });
    if (problem !== undefined) {
      await this.#drop(connection);
      throw new SandboxedPluginError(this.#id, `plugin '${this.#id}': ${problem}`);
    }
    const manifest = described as PluginManifest;
    this.#manifest = manifest;
    this.#id = manifest.id;
    return manifest;
  }

  plugin(manifest: PluginManifest): Plugin {
    const plugin: { -readonly [K in keyof Plugin]: Plugin[K] } = {
      id: manifest.id,
      version: manifest.version,
      name: manifest.name,
      initialize: (context) => this.#initialize(context),
      shutdown: () => this.#shutdown(),
      capabilities: () =>
        proxyCapabilities(
          this.#descriptors,
          this,
          this.#board,
          (flavor) => () => proxyDialect(this, flavor),
          this.#desk,
          manifest.permissions?.env ?? [],
        ),
    };
    const { description, category, enabledByDefault, requires, bound, permissions } = manifest;
    if (description !== undefined) plugin.description = description;
    if (category !== undefined) plugin.category = category;
    if (enabledByDefault !== undefined) plugin.enabledByDefault = enabledByDefault;
    if (requires !== undefined) plugin.requires = requires;
    if (bound !== undefined) plugin.bound = bound;
    if (permissions !== undefined) plugin.permissions = permissions;
    if (manifest.live) plugin.liveVersion = () => this.#live;
    if (manifest.ticks) {
      plugin.tick = () => {
        this.#syncContext();
        this.notify(Method.tick);
      };
    }
    return plugin;
  }

  async close(): Promise<void> {
    this.#active = false;
    const connection = this.#connection;
    if (connection === undefined) return;
    this.#forget("amber closed it");
    await connection.stop();
  }

  call<T>(
    method: string,
    params: unknown,
    seam: Seam,
    what: string,
    options: LinkCallOptions = {},
  ): Promise<T> {
    const connection = this.#connection;
    if (connection === undefined) return Promise.reject(new PluginEndedError(this.#id, this.#gone));
    this.#syncContext();
    const config = this.#hostConfig();
    let deadlineMs = timeoutFor(config, seam, this.#id);
    if (options.withGrace) deadlineMs += timeoutFor(config, "toolGrace", this.#id);
    this.#calls++;
    return connection.call<T>(method, params, {
      deadlineMs,
      what,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    }).catch(async (error) => {
      if (!(error instanceof PeerClosedError)) throw error;
      throw new PluginEndedError(this.#id, await verdict(connection), { cause: error });
    }).finally(() => this.#calls--);
  }

  notify(method: string, params?: unknown): void {
    try {
      this.#connection?.peer.notify(method, params);
    } catch {
      // A value JSON cannot carry (an event payload's `data`) is not sent; nothing else is lost.
    }
  }

  // A re-enable after a switch-off starts a new process first; the import and the initialize
  // together stay within the initialize deadline, so the runtime never gives up on a process
  // that then lives on.
  async #initialize(context: PluginContext): Promise<boolean> {
    this.#context = context;
    const config = context.config();
    const ms = timeoutFor(config, "initialize", this.#id);
    const deadline = performance.now() + ms;
    let initializeMs = ms;
    if (this.#connection === undefined) {
      this.#board.forget();
      await this.open(Math.min(ms, timeoutFor(config, "import", this.#id)));
      initializeMs = Math.max(1, Math.floor(deadline - performance.now()));
    }
    const connection = this.#connection!;
    const section = context.section();
    this.#config = config;
    this.#section = section;
    const ui = this.#ui();
    const params: InitializeParams = {
      pluginId: this.#id,
      workspace: context.workspace.root,
      config: ownConfig(config, this.#id),
      section,
      tools: this.#toolInfos(context.tools),
      services: ui === undefined ? {} : { ui: { interactive: ui.interactive } },
    };
    let result: unknown;
    try {
      result = await connection.call(Method.initialize, params, {
        deadlineMs: initializeMs,
        what: `plugin '${this.#id}': initialize`,
      });
    } catch (error) {
      const why = error instanceof PeerClosedError ? await verdict(connection) : undefined;
      await this.#drop(connection);
      if (why === undefined) throw error;
      throw new PluginEndedError(this.#id, why, { cause: error });
    }
    const refusal = initializeProblem(result);
    if (refusal !== undefined || performance.now() > deadline) {
      await this.#drop(connection);
      // A plain no reads as it does in-process; the process's reason (a section that does not
      // decode...) is worth more than that.
      if (refusal === "" || refusal === PLAIN_NO) return false;
      throw new SandboxedPluginError(this.#id, refusal ?? "initialize answered too late");
    }
    const ready = result as Extract<InitializeResult, { ok: true }>;
    this.#descriptors = ready.capabilities;
    this.#live = ready.liveVersion ?? 0;
    this.#board.reset(ready.capabilities);
    this.#active = true;
    this.#watch(connection);
    return true;
  }

  async #shutdown(): Promise<void> {
    this.#active = false;
    const connection = this.#connection;
    if (connection === undefined) return;
    this.#forget("it was switched off");
    if (connection.peer.open) {
      await connection.call(Method.shutdown, undefined, {
        deadlineMs: SHUTDOWN_MS,
        what: `plugin '${this.#id}': shutdown`,
      }).catch(() => {});
    }
    await connection.stop();
  }

  // Asks the process now and then for its manifest (it answers from memory): a spinning one
  // misses the deadline and is killed, which fails the plugin with the reason.
  #watch(connection: PluginConnection): void {
    const every = this.#options.livenessMs ?? LIVENESS_MS;
    const timer = setInterval(() => {
      if (this.#connection !== connection || !this.#active) {
        clearInterval(timer);
        return;
      }
      // A call in flight has its own deadline: a long tool is not a spin, and is not cut short.
      if (this.#calls > 0) return;
      const params: DescribeParams = {
        protocolVersion: PROTOCOL_VERSION,
        hostVersion: this.#options.hostVersion,
      };
      connection.call(Method.describe, params, {
        deadlineMs: timeoutFor(this.#hostConfig(), "hook", this.#id),
        what: `plugin '${this.#id}': a liveness check`,
      }).catch(() => {});
    }, every);
    // Never what keeps amber running.
    Deno.unrefTimer(timer);
    connection.ended.finally(() => clearInterval(timer));
  }

  // The process is no longer this plugin's: its end is no fault, and calls say `why`.
  #forget(why: string): void {
    this.#connection = undefined;
    this.#gone = why;
    this.#context = undefined;
    this.#subscriptions.clear();
  }

  // Ends a process that failed to load or initialize the plugin; the next activation starts
  // a new one.
  async #drop(connection: PluginConnection): Promise<void> {
    if (this.#connection === connection) this.#forget("it failed to start");
    await connection.stop(0);
  }

  #ended(connection: PluginConnection, end: ConnectionEnd): void {
    if (this.#connection !== connection) return;
    const active = this.#active;
    this.#active = false;
    this.#forget(end.reason);
    if (!active || end.expected) return;
    try {
      this.#options.onFault?.({ pluginId: this.#id, where: "sandbox", message: end.reason });
    } catch {
      // The host's fault sink failing must not become this plugin's problem, nor the host's.
    }
  }

  // What the process may say at any time: its renders, a live change, its log, its event
  // subscriptions, what it asks of the user, and what its compactor asks while it runs.
  #listen(connection: PluginConnection): void {
    const peer = connection.peer;
    this.#board.listen(peer);
    this.#desk.listen(peer);
    peer.onNotification(Method.pluginChanged, (params) => {
      const { liveVersion, capabilities } = (params ?? {}) as Partial<PluginChangedParams>;
      if (typeof liveVersion !== "number" || !Array.isArray(capabilities)) return;
      this.#descriptors = capabilities;
      this.#live = liveVersion;
      this.#board.reset(capabilities);
    });
    peer.onNotification(Method.log, (params) => {
      const { level, message } = (params ?? {}) as Partial<LogParams>;
      this.#options.onLog?.(`${String(level ?? "log")}: ${String(message)}`);
    });
    peer.onNotification(Method.eventsSubscribe, (params) => {
      const type = (params as Partial<SubscribeParams> | undefined)?.type;
      const context = this.#context;
      if (typeof type !== "string" || context === undefined) return;
      if (this.#subscriptions.has(type) || this.#subscriptions.size >= MAX_SUBSCRIPTIONS) return;
      // Through the plugin's context: ledgered, so a switch-off removes it with the rest.
      const subscription = context.events.subscribe(
        type as keyof AmberEvents,
        (payload) => this.notify(Method.event, { type, payload }),
      );
      this.#subscriptions.set(type, subscription);
    });
    peer.onNotification(Method.eventsUnsubscribe, (params) => {
      const type = (params as Partial<SubscribeParams> | undefined)?.type;
      if (typeof type !== "string") return;
      this.#subscriptions.get(type)?.unsubscribe();
      this.#subscriptions.delete(type);
    });
    peer.onNotification(Method.uiNotify, (params) => {
      const { message, tone } = (params ?? {}) as Partial<UiNotifyParams>;
      this.#ui()?.notify(String(message), tone as NotifyTone | undefined);
    });
    peer.handle(
      Method.uiAsk,
      (params, call) => answerQuestion(this.#ui(), params as UiAskParams, call.signal),
    );
  }

  // The runtime's context is also the plugin's services (one scope object); its `host` carries
  // the UI when the host has one.
  #ui(): UiService | undefined {
    return (this.#context as Partial<PluginServices> | undefined)?.host?.ui;
  }

  #hostConfig(): AmberConfig {
    return this.#context?.config() ?? { plugins: {} };
  }

  // Before the process is asked anything, it hears of what changed in its context. The runtime
  // hands out the same read-only view until the host attaches a new configuration, so a changed
  // view is a changed configuration.
  #syncContext(): void {
    const context = this.#context;
    if (context === undefined) return;
    const config = context.config();
    const section = context.section();
    // Other plugins' tools come and go; the process's view follows before it is next asked
    // anything. The registry hands out the same list until it changes, so this is one compare.
    if (context.tools.list() !== this.#toolList) {
      this.notify(Method.toolsChanged, { tools: this.#toolInfos(context.tools) });
    }
    if (config === this.#config && section === this.#section) return;
    this.#config = config;
    this.#section = section;
    this.notify(Method.configChanged, { config: ownConfig(config, this.#id), section });
  }

  #toolInfos(tools: ToolView): ToolInfo[] {
    const list = tools.list();
    this.#toolList = list;
    return toolInfos(list);
  }
}

// What of the configuration crosses to a plugin's process: everything but the other plugins'
// sections, which may hold their tokens and are none of its business.
function ownConfig(config: AmberConfig, id: string): AmberConfig {
  const own = config.plugins?.[id];
  return { ...config, plugins: own === undefined ? {} : { [id]: own } };
}

function toolInfos(tools: readonly ToolEntry[]): ToolInfo[] {
  return tools.map(({ tool, owner, schema }): ToolInfo => ({
    name: tool.name,
    owner,
    description: tool.description,
    schema,
    ...(tool.verb === undefined ? {} : { verb: tool.verb }),
    ...(tool.readOnly === undefined ? {} : { readOnly: tool.readOnly }),
  }));
}

// Why `connection`'s process ended, once it has said so (a closed pipe comes a moment before
// the exit status).
async function verdict(connection: PluginConnection): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("its process ended"), VERDICT_MS);
  });
  try {
    return await Promise.race([connection.ended.then((end) => end.reason), late]);
  } finally {
    clearTimeout(timer);
  }
}
