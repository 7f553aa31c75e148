/**
 * One MCP server as an amber plugin realized for the session: the plugin `mcp.<name>` whose
 * contributions are what the server offers while it is connected (its tools, its prompts as
 * commands, its resources as two tools and an attachment hook), and whose live version moves
 * whenever that changes, so the runtime swaps them at the next step boundary.
 *
 * Connecting happens in the background: `initialize` answers at once, and a slow server's tools
 * arrive by live refresh. A server that cannot be reached, crashes, times out or sends garbage
 * is this plugin's fault alone: it is reported, retried with a doubling delay, and after
 * `maxAttempts` failures in a row handed to `fail`, which switches the plugin off with the
 * reason.
 *
 * Hosts use {@linkcode McpServers} (servers.ts), which builds one of these per server.
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type Capability,
  type CommandCapability,
  describeError,
  type Diagnostic,
  type HookCapability,
  namespace,
  type Plugin,
  PluginCategory,
  type PluginContext,
  type StartedProcess,
  timeoutFor,
  type Tool,
} from "@amber/core";
import type { ConnectOptions, McpClientHandlers, McpConnection } from "./connect.ts";
import type { OAuthInteraction } from "./oauth.ts";
import { NOTHING_OFFERED, type Offer, type OfferKind, readList, readOffer } from "./_offer.ts";
import { type McpServerView, serverView } from "./server_view.ts";
import { MCP_OUTPUT_CAP, type McpToolPolicy } from "./tool_policy.ts";
import type { McpConnectionState, McpServerSpec } from "./types.ts";

type Live = typeof import("./_live.ts");
let live: Promise<Live> | undefined;
let loaded: Live | undefined;

// The SDK's half of the plugin, loaded by the first server that connects (see `_live.ts`).
function loadLive(): Promise<Live> {
  live ??= import("./_live.ts").then((module) => (loaded = module));
  return live;
}

/** What a host gives every server alike: where they run, and its side of their faults. */
export interface McpHostOptions {
  /** False: the plugins are registered and listed, and no server is ever started. */
  readonly connect: boolean;
  /**
   * When given, servers start connecting only once it settles: a front end passes its first
   * frame, so that loading the SDK and starting the servers never delay it.
   */
  readonly after?: PromiseLike<unknown>;
  /** Amber's environment, for `${VAR}` expansion and `bearerTokenEnv`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The workspace: the root servers are told of, a stdio server's working directory. */
  readonly workspace: string;
  /** The config directory (OAuth tokens). */
  readonly configDir: string;
  /** `mcp.trustReadOnly`: whether `readOnlyHint` tools run without asking, by default. */
  readonly trustReadOnly?: boolean;
  /** Server logging and stderr, `where: "log"`: for the diagnostics, never the screen. */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
  /** `PluginRuntime.fail`: a server given up on after `maxAttempts` failures in a row. */
  readonly fail?: (pluginId: string, where: string, message: string) => void;
  /** `PluginRuntime.report`: a failed connect, a lost connection, a failed re-read. */
  readonly report?: (diagnostic: Diagnostic) => void;
  /** A stdio server's process group, once started: the host tracks it. */
  readonly onSpawn?: (process: StartedProcess, argv: readonly string[]) => void;
  /** Shows an OAuth authorization URL to the user. */
  readonly oauth?: OAuthInteraction;
  /** Failed connects in a row before `fail`; 4 by default. */
  readonly maxAttempts?: number;
  /** The first retry's delay in ms, doubling with each failure after it; 1,000 by default. */
  readonly backoffMs?: number;
  /**
   * How to connect a server: `connectServer` by default (tests pass servers in memory).
   *
   * @ignore
   */
  readonly connector?: (options: ConnectOptions) => Promise<McpConnection>;
}

/** Options of {@linkcode McpServerPlugin}: one server, and the host's side of it. */
export interface McpServerPluginOptions extends McpHostOptions {
  /** The server. */
  readonly spec: McpServerSpec;
  /** Sampling, elicitation and roots: what the server may ask of amber. */
  readonly handlers: McpClientHandlers;
  /** Told whenever the state or a list changed. */
  readonly onChange?: () => void;
}

const DEFAULT_ATTEMPTS = 4;
const DEFAULT_BACKOFF_MS = 1_000;
// No retry waits longer than this, however many failures came before.
const MAX_BACKOFF_MS = 60_000;
// A connection that lived this long was a success: a crash after it starts the count afresh.
// A server that crashes soon after every connect is failing, and is given up on like one that
// never connects.
const STABLE_MS = 30_000;
const DEFAULT_TIMEOUT_S = 60;
// The share of the hook deadline an attachment's reads may take.
const ATTACH_SHARE = 0.8;
const IDLE: McpConnectionState = Object.freeze({ status: "idle" });

/**
 * One server's plugin and connection. `plugin` is what the host registers; the runtime drives
 * it (`initialize` connects, `shutdown` disconnects), and the host reads `view()` and may
 * `reconnect()`.
 */
export class McpServerPlugin {
  /** The plugin to register with the runtime. */
  readonly plugin: Plugin;
  readonly #options: McpServerPluginOptions;
  readonly #name: string;
  readonly #id: string;
  readonly #policy: McpToolPolicy;
  readonly #timeoutMs: number;
  // The read deadline of the attachment hook: it runs under the hook deadline, so a slow read
  // must give up first (and say so) rather than lose the whole attachment message.
  #attachMs: number;
  #state: McpConnectionState = IDLE;
  // Between initialize and shutdown.
  #active = false;
  #closed = false;
  #version = 0;
  #connection: McpConnection | undefined;
  #connectedAt = 0;
  #failures = 0;
  // The attempt in flight and how to call it off.
  #attempt: Promise<void> | undefined;
  #abort: AbortController | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #offer: Offer = NOTHING_OFFERED;
  // The contributions built from the offer, kept while their source is unchanged so that a
  // refresh sees an unchanged tool as the same object.
  #tools: readonly Tool[] = [];
  #toolCache = new Map<string, Tool>();
  #commands: readonly CommandCapability[] = [];
  #resourceTools: readonly Tool[] = [];
  #resourceSource: readonly Tool[] = [];
  #hook: HookCapability | undefined;
  // Re-reads of one list run one after another.
  #reads: Partial<Record<OfferKind, Promise<void>>> = {};

  /** Builds the plugin of `options.spec`; nothing connects before the runtime initializes it. */
  constructor(options: McpServerPluginOptions) {
    this.#options = options;
    const { spec } = options;
    this.#name = spec.name;
    this.#id = spec.pluginId;
    this.#timeoutMs = (spec.entry.timeout ?? DEFAULT_TIMEOUT_S) * 1_000;
    this.#attachMs = this.#timeoutMs;
    this.#policy = {
      trustReadOnly: spec.entry.trustReadOnly ?? options.trustReadOnly ?? false,
      timeoutMs: this.#timeoutMs,
      outputCap: MCP_OUTPUT_CAP,
    };
    const prefix = `mcp__${spec.name}__`;
    this.plugin = {
      id: spec.pluginId,
      version: "1.0.0",
      name: `MCP ${spec.name}`,
      description: describeSpec(spec),
      category: PluginCategory.Mcp,
      bound: {
        tools: namespace(prefix),
        // A command root is lower case, so a prompt's command is too.
        commands: namespace(prefix.toLowerCase()),
        phaseHooks: ["StepStart"],
      },
      liveVersion: () => this.#version,
      initialize: (context) => this.#initialize(context),
      shutdown: () => this.#shutdown(),
      capabilities: () => this.#capabilities(),
    };
  }

  /** The server's name. */
  get name(): string {
    return this.#name;
  }

  /** Where the connection stands. */
  get state(): McpConnectionState {
    return this.#state;
  }

  /** Whether the server is not on its way anywhere: idle, connected or failed. */
  get settled(): boolean {
    const status = this.#state.status;
    return status !== "connecting" && status !== "reconnecting";
  }

  /** What a front end shows of the server now. */
  view(): McpServerView {
    return serverView(this.#options.spec, this.#state, this.#offer);
  }

  /**
   * Drops the connection (or the attempt, or the wait for the next one) and connects at once,
   * with the count of failures started afresh; resolves with the state that attempt led to. A
   * server whose plugin is not active, or whose host does not connect, is left as it is.
   */
  async reconnect(): Promise<McpConnectionState> {
    if (!this.#active || !this.#options.connect || this.#closed) return this.#state;
    await this.#disconnect();
    if (!this.#active) return this.#state;
    this.#failures = 0;
    await this.#start();
    return this.#state;
  }

  /** Ends the connection for good: the host is done with the server. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#disconnect();
  }

  #initialize(context: PluginContext): boolean {
    const hookMs = timeoutFor(context.config(), "hook", this.#id);
    this.#attachMs = Math.max(1, Math.min(this.#timeoutMs, Math.floor(hookMs * ATTACH_SHARE)));
    this.#active = true;
    this.#failures = 0;
    this.#set(IDLE);
    // In the background: the session does not wait for a server.
    if (this.#options.connect && !this.#closed) {
      const after = this.#options.after;
      if (after === undefined) this.#start();
      else {
        const start = () => {
          if (this.#active && !this.#closed && this.#state.status === "idle") this.#start();
        };
        after.then(start, start);
      }
    }
    return true;
  }

  async #shutdown(): Promise<void> {
    this.#active = false;
    await this.#disconnect();
    // A server given up on says why until it is switched on again.
    if (this.#state.status !== "failed") this.#set(IDLE);
  }

  #capabilities(): readonly Capability[] {
    if (this.#connection === undefined) return [];
    const capabilities: Capability[] = [];
    if (this.#tools.length > 0) {
      capabilities.push({ kind: "tool", name: "tools", tools: this.#tools });
    }
    capabilities.push(...this.#commands);
    if (this.#hook !== undefined) {
      capabilities.push(
        { kind: "tool", name: "resources", tools: this.#resourceTools },
        this.#hook,
      );
    }
    return capabilities;
  }

  // Starts one attempt and resolves when it is over (connected, or failed and handled).
  #start(): Promise<void> {
    const abort = new AbortController();
    this.#abort = abort;
    this.#set({ status: "connecting", attempt: this.#failures + 1 });
    const attempt = this.#connect(abort.signal).finally(() => {
      if (this.#attempt === attempt) this.#attempt = undefined;
    });
    this.#attempt = attempt;
    return attempt;
  }

  async #connect(signal: AbortSignal): Promise<void> {
    const { spec, env, workspace, configDir, handlers, onSpawn, oauth } = this.#options;
    let connection: McpConnection;
    try {
      const connector = this.#options.connector ?? (await loadLive()).connectServer;
      connection = await connector({
        spec,
        env,
        workspace,
        configDir,
        handlers,
        onStderr: (line) => this.#log(`stderr: ${line}`),
        timeoutMs: this.#timeoutMs,
        signal,
        ...(onSpawn === undefined ? {} : { onSpawn }),
        ...(oauth === undefined ? {} : { oauth }),
      });
    } catch (error) {
      if (!signal.aborted) this.#fault(`could not connect: ${describeError(error)}`);
      return;
    }
    if (signal.aborted) {
      await connection.close();
      return;
    }
    const early = this.#listen(connection, await loadLive());
    try {
      const offer = await readOffer(connection.client, this.#timeoutMs, signal);
      // Built before the connection is in, so that what cannot be mapped is a failed connect.
      this.#build(connection.client, offer);
    } catch (error) {
      this.#forget();
      await connection.close();
      if (!signal.aborted) this.#fault(`could not list what it offers: ${describeError(error)}`);
      return;
    }
    if (signal.aborted) {
      this.#forget();
      await connection.close();
      return;
    }
    this.#abort = undefined;
    this.#connection = connection;
    this.#connectedAt = performance.now();
    this.#set({ status: "connected", transport: connection.transport, server: connection.server });
    this.#bump();
    for (const kind of early) this.#reread(connection, kind);
    connection.closed.then((reason) => this.#lost(connection, reason));
    if (connection.client.getServerCapabilities()?.logging !== undefined) {
      connection.client.setLoggingLevel("info", { timeout: this.#timeoutMs }).catch((error) =>
        this.#log(`setting its logging level failed: ${describeError(error)}`)
      );
    }
  }

  // What the server says on its own: a list changed, a log line. Set before the lists are read:
  // a list that changed meanwhile (returned in `early`) is read again once the connection is in.
  #listen(connection: McpConnection, sdk: Live): Set<OfferKind> {
    const client = connection.client;
    const early = new Set<OfferKind>();
    const relist = (kind: OfferKind) => () => {
      if (this.#connection === connection) this.#reread(connection, kind);
      else early.add(kind);
    };
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, relist("tools"));
    client.setNotificationHandler(sdk.PromptListChangedNotificationSchema, relist("prompts"));
    client.setNotificationHandler(sdk.ResourceListChangedNotificationSchema, relist("resources"));
    client.setNotificationHandler(sdk.LoggingMessageNotificationSchema, ({ params }) => {
      const data = typeof params.data === "string" ? params.data : safeJson(params.data);
      const logger = params.logger === undefined ? "" : `[${params.logger}] `;
      this.#log(`${params.level}: ${logger}${data}`);
    });
    return early;
  }

  #reread(connection: McpConnection, kind: OfferKind): void {
    const previous = this.#reads[kind] ?? Promise.resolve();
    const next = previous.then(async () => {
      if (this.#connection !== connection) return;
      let items: Offer[OfferKind];
      try {
        items = await readList(connection.client, kind, this.#timeoutMs);
      } catch (error) {
        if (this.#connection !== connection) return;
        this.#report(
          "refresh",
          `server '${this.#name}': re-reading its ${kind} failed; the previous ${kind} stay: ` +
            describeError(error),
        );
        return;
      }
      if (this.#connection !== connection) return;
      if (safeJson(items) === safeJson(this.#offer[kind])) return;
      try {
        this.#build(connection.client, { ...this.#offer, [kind]: items });
      } catch (error) {
        this.#report(
          "refresh",
          `server '${this.#name}': mapping its ${kind} failed: ${describeError(error)}`,
        );
        return;
      }
      this.#bump();
    });
    this.#reads[kind] = next;
  }

  // The contributions of `offer`; a tool whose definition did not change keeps its object.
  #build(client: Client, offer: Offer): void {
    // Loaded: a connection exists, so `#connect` loaded the SDK's half first.
    const { mcpAttachmentHook, mcpPromptCommands, mcpResourceTools, mcpTool } = loaded!;
    const previous = this.#offer;
    this.#offer = offer;
    if (offer.tools !== previous.tools) {
      const disabled = new Set(this.#options.spec.entry.disabledTools ?? []);
      const cache = new Map<string, Tool>();
      const tools: Tool[] = [];
      for (const tool of offer.tools) {
        if (disabled.has(tool.name)) continue;
        const key = safeJson(tool);
        const built = this.#toolCache.get(key) ?? mcpTool(this.#name, tool, client, this.#policy);
        cache.set(key, built);
        tools.push(built);
      }
      this.#toolCache = cache;
      this.#tools = this.#distinct(tools, (tool) => tool.name, "tool", new Set());
    }
    if (offer.prompts !== previous.prompts) {
      const commands = offer.prompts.length === 0
        ? []
        : mcpPromptCommands(this.#name, offer.prompts, client, this.#timeoutMs);
      this.#commands = this.#distinct(commands, (command) => command.root, "command", new Set());
    }
    if (client.getServerCapabilities()?.resources === undefined) {
      this.#resourceTools = [];
      this.#hook = undefined;
    } else if (this.#hook === undefined) {
      this.#hook = mcpAttachmentHook(this.#name, client, this.#attachMs);
      this.#resourceSource = mcpResourceTools(this.#name, client, this.#policy);
    }
    if (this.#hook !== undefined) {
      // The server's own tools keep their names; a resource tool they took is left out.
      const taken = new Set(this.#tools.map((tool) => tool.name));
      this.#resourceTools = this.#distinct(
        this.#resourceSource,
        (tool) => tool.name,
        "tool",
        taken,
      );
    }
  }

  // One of each name: two of a server's names can become one amber name (`a.b` and `a_b`, or
  // two prompts apart only in case), and a duplicate would fail the whole refresh. The first
  // keeps it; the others are left out, and said to be.
  #distinct<T>(
    items: readonly T[],
    nameOf: (item: T) => string,
    what: string,
    taken: Set<string>,
  ): T[] {
    const kept: T[] = [];
    for (const item of items) {
      const name = nameOf(item);
      if (taken.has(name)) {
        this.#report(
          "refresh",
          `server '${this.#name}': a second ${what} named ${name} is left out`,
        );
        continue;
      }
      taken.add(name);
      kept.push(item);
    }
    return kept;
  }

  // The connection ended without amber ending it: its tools go, and it is tried again.
  #lost(connection: McpConnection, reason: string): void {
    if (this.#connection !== connection) return;
    this.#forget();
    if (performance.now() - this.#connectedAt >= STABLE_MS) this.#failures = 0;
    this.#bump();
    this.#fault(`disconnected: ${reason}`);
  }

  // A failed attempt or a lost connection: reported, then retried later or given up on.
  #fault(reason: string): void {
    this.#failures++;
    const max = this.#options.maxAttempts ?? DEFAULT_ATTEMPTS;
    if (this.#failures >= max) {
      const why = `${reason} (${this.#failures} failures in a row)`;
      this.#report("connect", `server '${this.#name}' ${why}; giving up`);
      this.#set({ status: "failed", reason: why });
      try {
        this.#options.fail?.(this.#id, "connect", why);
      } catch {
        // The host's fault sink failing is no reason to leave this server half given up on.
      }
      return;
    }
    const delay = Math.min(
      (this.#options.backoffMs ?? DEFAULT_BACKOFF_MS) * 2 ** (this.#failures - 1),
      MAX_BACKOFF_MS,
    );
    this.#report("connect", `server '${this.#name}' ${reason}; retrying in ${delay} ms`);
    this.#set({
      status: "reconnecting",
      attempt: this.#failures + 1,
      retryAt: Date.now() + delay,
      reason,
    });
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (this.#active && !this.#closed) this.#start();
    }, delay);
    // Never what keeps amber running.
    Deno.unrefTimer(this.#retry);
  }

  // Calls off whatever is under way and closes the connection; its contributions go at the
  // next refresh.
  async #disconnect(): Promise<void> {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#abort?.abort();
    this.#abort = undefined;
    await this.#attempt;
    const connection = this.#connection;
    if (connection === undefined) return;
    this.#forget();
    this.#bump();
    await connection.close();
  }

  #forget(): void {
    this.#connection = undefined;
    this.#offer = NOTHING_OFFERED;
    this.#tools = [];
    this.#toolCache = new Map();
    this.#commands = [];
    this.#resourceTools = [];
    this.#resourceSource = [];
    this.#hook = undefined;
    this.#reads = {};
  }

  #bump(): void {
    this.#version++;
    this.#changed();
  }

  #set(state: McpConnectionState): void {
    this.#state = state;
    this.#changed();
  }

  #changed(): void {
    try {
      this.#options.onChange?.();
    } catch {
      // A front end's redraw failing is not this server's fault.
    }
  }

  #report(where: string, message: string): void {
    try {
      this.#options.report?.({ pluginId: this.#id, where, message });
    } catch {
      // The host's diagnostics failing must not stop the retries.
    }
  }

  #log(message: string): void {
    try {
      this.#options.onDiagnostic?.({ pluginId: this.#id, where: "log", message });
    } catch {
      // As above.
    }
  }
}

// One line for the plugin list: where the server was declared and what it runs or reaches.
function describeSpec(spec: McpServerSpec): string {
  const { entry } = spec;
  const what = entry.transport === "stdio"
    ? [entry.command ?? "", ...(entry.args ?? [])].join(" ")
    : `${entry.url ?? ""} (${entry.transport})`;
  return `MCP server from ${spec.source}: ${what}`;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
