/**
 * The MCP servers of a session: one plugin per configured server (see `server_plugin.ts`), and
 * what a host and its front ends need of them together: their views, a reconnect, a wait for
 * start-up, the session's answers to sampling and elicitation, a change signal, and the close.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * import { McpServers } from "@amber/mcp";
 *
 * // A server the host lists but does not start (`amber plugins list` builds it like this).
 * const servers = new McpServers({
 *   specs: [{
 *     name: "everything",
 *     pluginId: "mcp.everything",
 *     entry: { transport: "stdio", command: "npx", args: ["-y", "server-everything"] },
 *     source: "config.yaml",
 *     fromWorkspace: false,
 *   }],
 *   connect: false,
 *   env: {},
 *   workspace: "/ws",
 *   configDir: "/cfg",
 * });
 * const runtime = new PluginRuntime({ registries: createRegistries(), allOn: true });
 * for (const plugin of servers.plugins()) runtime.register(plugin);
 * await runtime.start();
 * assert.equal(runtime.state("mcp.everything").status, "active");
 * assert.equal(runtime.info("mcp.everything").plugin.category, "mcp");
 * assert.deepEqual(servers.get("everything")?.state, { status: "idle" });
 * await runtime.stop();
 * await servers.close();
 * ```
 *
 * @module
 */

import { pathToFileURL } from "node:url";
import { basename } from "node:path";
import type { Diagnostic, Plugin, StartedProcess } from "@amber/core";
import { AmberError } from "@amber/core";
import type { ConnectOptions, McpClientHandlers, McpConnection } from "./connect.ts";
import type { OAuthInteraction } from "./oauth.ts";
import { McpServerPlugin, type McpServerView } from "./server_plugin.ts";
import type { McpConnectionState, McpServerSpec } from "./types.ts";

/** Options of {@linkcode McpServers}. */
export interface McpServersOptions {
  /** The servers, in the order they are listed. */
  readonly specs: readonly McpServerSpec[];
  /** False: the plugins are registered and listed, and no server is ever started. */
  readonly connect: boolean;
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
  /** How to connect a server: `connectServer` by default (tests pass servers in memory). */
  readonly connector?: (options: ConnectOptions) => Promise<McpConnection>;
}

/** The session's answers to what a server may ask: a sampling request, an elicitation. */
export interface McpRequestHandlers {
  /** Answers a sampling request (after the user approved it); absent: refused. */
  readonly sample?: McpClientHandlers["sample"];
  /** Asks the user what the server wants to know; absent: refused. */
  readonly elicit?: McpClientHandlers["elicit"];
}

/** `reconnect` of a server that is not configured. */
export class UnknownMcpServerError extends AmberError {
  /** The name asked for. */
  readonly server: string;
  /** Creates the error. */
  constructor(server: string, options?: ErrorOptions) {
    super(`no MCP server named '${server}' is configured`, options);
    this.name = "UnknownMcpServerError";
    this.server = server;
  }
}

// A server asked for something only a person can give, and the session has no one to ask.
class McpNoOneToAskError extends AmberError {
  constructor(what: string) {
    super(`amber has no one to ask (headless): ${what} is declined`);
    this.name = "McpNoOneToAskError";
  }
}

/**
 * The servers of one session, each a plugin `mcp.<name>` to register with the runtime before it
 * starts. A server connects when the runtime initializes its plugin (when `connect`), in the
 * background; its tools, prompts and resources arrive by live refresh.
 */
export class McpServers {
  readonly #servers: readonly McpServerPlugin[];
  readonly #byName = new Map<string, McpServerPlugin>();
  readonly #plugins: readonly Plugin[];
  readonly #listeners = new Set<() => void>();
  #requests: McpRequestHandlers = {};

  /** Builds one plugin per spec; nothing connects yet. */
  constructor(options: McpServersOptions) {
    const { specs, ...shared } = options;
    const roots = [{
      uri: pathToFileURL(options.workspace).href,
      name: basename(options.workspace),
    }];
    const handlers: McpClientHandlers = {
      sample: (params, signal) => {
        const sample = this.#requests.sample;
        if (sample === undefined) return Promise.reject(new McpNoOneToAskError("sampling"));
        return sample(params, signal);
      },
      elicit: (params, signal) => {
        const elicit = this.#requests.elicit;
        if (elicit === undefined) return Promise.reject(new McpNoOneToAskError("elicitation"));
        return elicit(params, signal);
      },
      roots: () => roots,
    };
    this.#servers = specs.map((spec) =>
      new McpServerPlugin({ ...shared, spec, handlers, onChange: () => this.#changed() })
    );
    for (const server of this.#servers) this.#byName.set(server.name, server);
    this.#plugins = this.#servers.map((server) => server.plugin);
  }

  /** One plugin per server, in spec order: register them with the runtime before it starts. */
  plugins(): readonly Plugin[] {
    return this.#plugins;
  }

  /** Every server as a front end shows it, in spec order. */
  list(): readonly McpServerView[] {
    return this.#servers.map((server) => server.view());
  }

  /** The server named `name` (as configured), if there is one. */
  get(name: string): McpServerView | undefined {
    return this.#byName.get(name)?.view();
  }

  /**
   * Closes server `name`'s connection and connects again at once, failures counted afresh;
   * resolves with the state that led to. A server whose plugin is off or failed is left as it
   * is (switching the plugin on connects it). Rejects with {@linkcode UnknownMcpServerError}
   * for a name that is not configured.
   */
  reconnect(name: string): Promise<McpConnectionState> {
    const server = this.#byName.get(name);
    if (server === undefined) return Promise.reject(new UnknownMcpServerError(name));
    return server.reconnect();
  }

  /**
   * Resolves once no server is connecting or waiting to retry (each is idle, connected or
   * failed), or after `timeoutMs`, whichever is first. `amber run` waits on it before its first
   * request; an interactive session does not.
   */
  ready(timeoutMs: number): Promise<void> {
    if (this.#settled()) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    const done = () => {
      clearTimeout(timer);
      stop();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    const stop = this.onChange(() => {
      if (this.#settled()) done();
    });
    return promise;
  }

  /**
   * Sets who answers the servers' sampling and elicitation requests (the session, through its
   * front end). Until one is set, or when it is absent, such a request is refused with an error
   * saying amber has no one to ask.
   */
  setHandlers(handlers: McpRequestHandlers): void {
    this.#requests = { ...handlers };
  }

  /** Calls `listener` whenever a server's state or lists changed; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    // Each registration is its own, even of the same function.
    const own = () => listener();
    this.#listeners.add(own);
    return () => this.#listeners.delete(own);
  }

  /** Closes every connection (a stdio server's processes are gone when it resolves). */
  async close(): Promise<void> {
    await Promise.all(this.#servers.map((server) => server.close()));
  }

  #settled(): boolean {
    return this.#servers.every((server) => server.settled);
  }

  #changed(): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch {
        // One front end's listener failing does not stop the others.
      }
    }
  }
}
