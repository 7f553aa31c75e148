// What a sandboxed plugin is handed inside its own process: the context `initialize` receives and
// the services its capability factories receive, one object as in the host (`_plugin_scope.ts`).
// Everything that belongs to the host arrives as data and is handed out read-only: the
// configuration, the section, the workspace, the other plugins' tools. What would reach outside
// the process's grant (jobs, todos, sub-agents, processes) is absent; the UI crosses as requests.

import type { AmberConfig } from "../config.ts";
import { AmberError } from "../errors.ts";
import type {
  AmberEvents,
  EventHandler,
  EventInterceptor,
  InterceptableEvent,
  PluginEvents,
  Subscription,
} from "../events.ts";
import { deepFreeze, readOnlyView } from "../read_only.ts";
import type { HostServices, PluginContext, PluginServices, Workspace } from "../services.ts";
import type { Tool, ToolEntry, ToolResult, ToolView } from "../tool.ts";
import { type NotifyTone, type UiService, UiUnavailableError } from "../ui.ts";
import { Method, type ToolInfo, type UiAskParams } from "./protocol.ts";
import { messageOf } from "../_message_of.ts";

/**
 * Something a plugin asked of its context that cannot cross a process: an event interceptor
 * (it must answer synchronously, before the host goes on). The message says to run the plugin
 * with `trusted: true` when it needs it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SandboxLimitError } from "@amber/core/sandbox";
 * const error = new SandboxLimitError("greeter", "events.intercept('turnStarted')", "it is synchronous");
 * assert.equal(error.name, "SandboxLimitError");
 * assert.match(error.message, /trusted: true/);
 * ```
 */
export class SandboxLimitError extends AmberError {
  /** The plugin that asked. */
  readonly pluginId: string;
  /** What it asked for. */
  readonly feature: string;
  /** Creates the error: plugin `pluginId` asked for `feature`, which cannot cross because `why`. */
  constructor(pluginId: string, feature: string, why: string, options?: ErrorOptions) {
    super(
      `plugin '${pluginId}' runs sandboxed, where ${feature} is not available (${why}); ` +
        "set `trusted: true` for it to run it in-process",
      options,
    );
    this.name = "SandboxLimitError";
    this.pluginId = pluginId;
    this.feature = feature;
  }
}

/** How a scope talks to the host: the peer's requests and notifications, and the log. */
export interface ScopeLink {
  /** Sends a notification to the host. */
  notify(method: string, params: unknown): void;
  /** Sends a request to the host. */
  request<T>(method: string, params: unknown, options?: { signal?: AbortSignal }): Promise<T>;
  /** Writes a line to the plugin's log. */
  log(level: string, message: string): void;
}

/** What `initialize` carried, as a scope keeps it. */
export interface ScopeData {
  readonly pluginId: string;
  readonly workspace: string;
  readonly config: unknown;
  readonly section: unknown;
  readonly tools: readonly ToolInfo[];
  readonly ui?: { readonly interactive: boolean };
}

interface Listener {
  readonly handler: (event: never) => unknown;
}

/** The plugin's context and services in its process. */
export class ChildScope implements PluginContext, PluginServices, PluginEvents {
  readonly pluginId: string;
  readonly workspace: Workspace;
  readonly tools: ToolView;
  readonly host: HostServices;
  readonly #link: ScopeLink;
  readonly #listeners = new Map<keyof AmberEvents, Listener[]>();
  #config: unknown;
  #section: unknown;
  #tools: readonly ToolEntry[] = [];
  #byName = new Map<string, ToolEntry>();

  constructor(data: ScopeData, link: ScopeLink) {
    this.pluginId = data.pluginId;
    this.#link = link;
    this.#config = data.config;
    this.#section = data.section;
    this.workspace = Object.freeze({ root: data.workspace });
    this.setTools(data.tools);
    const tools = (): readonly ToolEntry[] => this.#tools;
    const byName = (): Map<string, ToolEntry> => this.#byName;
    // One view for the whole activation that reads the latest list: a plugin that keeps
    // `ctx.tools` sees what `tools.changed` brought.
    this.tools = Object.freeze({
      get: (name: string) => byName().get(name),
      list: () => tools(),
    });
    this.host = Object.freeze(
      data.ui === undefined ? {} : { ui: uiService(link, data.ui.interactive) },
    );
    // As the host's scope: the plugin reads its id and services, never re-points them.
    Object.freeze(this);
  }

  get owner(): string {
    return this.pluginId;
  }

  get events(): PluginEvents {
    return this;
  }

  config(): AmberConfig {
    return readOnlyView(this.#config) as AmberConfig;
  }

  section(): unknown {
    return readOnlyView(this.#section);
  }

  /** The host's configuration is now `config`. */
  setConfig(config: unknown): void {
    this.#config = config;
  }

  /** The plugin's section decoded anew. */
  setSection(section: unknown): void {
    this.#section = section;
  }

  /** The host's tools are now `infos`. */
  setTools(infos: readonly ToolInfo[]): void {
    const entries = infos.map((info) => entryOf(info, this.pluginId));
    this.#tools = Object.freeze(entries);
    this.#byName = new Map(entries.map((entry) => [entry.tool.name, entry]));
  }

  subscribe<K extends keyof AmberEvents>(
    type: K,
    handler: EventHandler<AmberEvents[K]>,
  ): Subscription {
    const listener: Listener = { handler: handler as (event: never) => unknown };
    const list = this.#listeners.get(type);
    if (list === undefined) {
      this.#listeners.set(type, [listener]);
      // Only the first handler of a type asks the host: only subscribed types ever cross.
      this.#link.notify(Method.eventsSubscribe, { type });
    } else list.push(listener);
    let live = true;
    return {
      unsubscribe: () => {
        if (!live) return;
        live = false;
        const current = this.#listeners.get(type);
        if (current === undefined) return;
        const rest = current.filter((item) => item !== listener);
        if (rest.length > 0) this.#listeners.set(type, rest);
        else {
          this.#listeners.delete(type);
          this.#link.notify(Method.eventsUnsubscribe, { type });
        }
      },
    };
  }

  intercept<K extends InterceptableEvent>(
    type: K,
    _interceptor: EventInterceptor<AmberEvents[K]>,
  ): Subscription {
    throw new SandboxLimitError(
      this.pluginId,
      `events.intercept('${type}')`,
      "an interceptor answers synchronously, which a call to another process cannot",
    );
  }

  /** Hands an event the host sent to every handler of its type, frozen; a throw is logged. */
  deliver(type: keyof AmberEvents, payload: unknown): void {
    const list = this.#listeners.get(type);
    if (list === undefined) return;
    const event = deepFreeze(payload) as never;
    for (const listener of list) {
      try {
        listener.handler(event);
      } catch (error) {
        this.#link.log("error", `event ${type}: a handler threw: ${messageOf(error)}`);
      }
    }
  }
}

// Another plugin's tool as a sandboxed plugin sees it: its data, frozen, and an `execute` that
// says why it cannot run it (the tool lives in the host or in another process).
function entryOf(info: ToolInfo, viewer: string): ToolEntry {
  const schema = deepFreeze(structuredClone(info.schema));
  const refusal: ToolResult = Object.freeze({
    ok: false,
    output: "",
    error: `tool '${info.name}' of plugin '${info.owner}' cannot be run from plugin '${viewer}': ` +
      "a sandboxed plugin cannot run other plugins' tools",
  });
  const tool: Tool = {
    name: info.name,
    description: info.description,
    parameters: schema,
    execute: () => refusal,
  };
  if (info.verb !== undefined) (tool as { verb?: string }).verb = info.verb;
  if (info.readOnly !== undefined) (tool as { readOnly?: boolean }).readOnly = info.readOnly;
  return Object.freeze({ tool: Object.freeze(tool), owner: info.owner, schema });
}

// The UI as requests to the host. A host without a person to answer refuses here, without a
// round trip, as its own headless UI would.
function uiService(link: ScopeLink, interactive: boolean): UiService {
  const ask = async (
    service: string,
    params: UiAskParams,
    signal: AbortSignal | undefined,
  ): Promise<unknown> => {
    if (!interactive) throw new UiUnavailableError(service, params.question);
    return await link.request(Method.uiAsk, params, signal === undefined ? {} : { signal });
  };
  return Object.freeze(
    {
      interactive,
      async askText(question, options) {
        const params: UiAskParams = options?.initial === undefined
          ? { kind: "text", question }
          : { kind: "text", question, initial: options.initial };
        const answer = await ask("askText", params, options?.signal);
        return typeof answer === "string" ? answer : undefined;
      },
      async askSecret(question, options) {
        const answer = await ask("askSecret", { kind: "secret", question }, options?.signal);
        return typeof answer === "string" ? answer : undefined;
      },
      async choose<T extends string>(
        question: string,
        choices: readonly T[],
        options?: { readonly signal?: AbortSignal },
      ): Promise<T | undefined> {
        const params: UiAskParams = { kind: "choose", question, choices: [...choices] };
        const answer = await ask("choose", params, options?.signal);
        return choices.find((choice) => choice === answer);
      },
      async confirm(question, options) {
        return await ask("confirm", { kind: "confirm", question }, options?.signal) === true;
      },
      notify(message: string, tone?: NotifyTone) {
        link.notify(Method.uiNotify, tone === undefined ? { message } : { message, tone });
      },
    } satisfies UiService,
  );
}
