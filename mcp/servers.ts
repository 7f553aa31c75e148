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

import { AmberError, type Plugin } from "@amber/core";
import type { McpClientHandlers } from "./connect.ts";
import { workspaceRoots } from "./_roots.ts";
import { type McpHostOptions, McpServerPlugin } from "./server_plugin.ts";
import type { McpServerView } from "./server_view.ts";
import type {
  McpConnectionState,
  McpElicitationRequest,
  McpElicitationResult,
  McpSamplingRequest,
  McpSamplingResult,
  McpServerSpec,
} from "./types.ts";

/** Options of {@linkcode McpServers}: the servers, and what the host gives each alike. */
export interface McpServersOptions extends McpHostOptions {
  /** The servers, in the order they are listed. */
  readonly specs: readonly McpServerSpec[];
}

/**
 * The session's answers to what a server may ask: a sampling request, an elicitation. Each gets
 * the name of the server asking as its third argument, for the question put to the user.
 */
export interface McpRequestHandlers {
  /** Answers a sampling request (after the user approved it); absent: refused. */
  readonly sample?: (
    params: McpSamplingRequest,
    signal: AbortSignal,
    server: string,
  ) => Promise<McpSamplingResult>;
  /** Asks the user what the server wants to know; absent: refused. */
  readonly elicit?: (
    params: McpElicitationRequest,
    signal: AbortSignal,
    server: string,
  ) => Promise<McpElicitationResult>;
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
    const roots = workspaceRoots(options.workspace);
    // Both are always offered to a server and asked of the session when it comes to it: the
    // session sets its answers after the servers started connecting.
    const handlers = (server: string): McpClientHandlers => ({
      sample: (params, signal) => {
        const sample = this.#requests.sample;
        if (sample === undefined) return Promise.reject(new McpNoOneToAskError("sampling"));
        return sample(params, signal, server);
      },
      elicit: (params, signal) => {
        const elicit = this.#requests.elicit;
        // MCP has an answer for this: the user declined (the server carries on without one).
        if (elicit === undefined) return Promise.resolve({ action: "decline" });
        return elicit(params, signal, server);
      },
      roots: () => roots,
    });
    this.#servers = specs.map((spec) =>
      new McpServerPlugin({
        ...shared,
        spec,
        handlers: handlers(spec.name),
        onChange: () => this.#changed(),
      })
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
   * front end). Until one is set, or when it is absent, a sampling request is refused with an
   * error saying amber has no one to ask, and an elicitation is declined (`{action: "decline"}`).
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
