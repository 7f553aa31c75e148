// One plugin served over one peer: the plugin process's answers to every host -> plugin method
// of the protocol. The plugin is the same object an author writes for in-process use; what the
// host's runtime does with it in-process (validate it, decode its section, initialize it, run
// its tool factories, validate a tool's arguments, contain what it throws) is done here the same
// way, and only data crosses.

import type { AccountRequest } from "../wallet.ts";
import { type CommandReply, commandReplyProblem } from "../command.ts";
import { describeError, describeValueType } from "../errors.ts";
import type { AmberEvents } from "../events.ts";
import type { Plugin } from "../plugin.ts";
import { decodePluginConfig } from "../plugin_config.ts";
import { createPluginHostApi, pluginFromExport } from "../plugin_module.ts";
import { pluginProblem, PluginValidationError, validatePlugin } from "../plugin_validation.ts";
import { isToolResult, type ToolResult } from "../tool.ts";
import { type RpcCall, RpcError, RpcErrorCode, type RpcPeer } from "./json_rpc.ts";
import { outputProgress } from "./_tool_output.ts";
import {
  type AccountFetchParams,
  type ActionRunParams,
  type CommandRunParams,
  type CompactionNextParams,
  type CompactionSummarizeParams,
  type CompactorCompactParams,
  type ConfigChangedParams,
  type DescribeParams,
  type EventParams,
  type GateCheckParams,
  type GuardDecideParams,
  type HookRunParams,
  type InitializeParams,
  type InitializeResult,
  Method,
  type PanelKeyParams,
  type PanelWidthParams,
  type PluginManifest,
  PROTOCOL_VERSION,
  type StatusSnapshotParams,
  type ToolExecuteParams,
  type ToolsChangedParams,
} from "./protocol.ts";
import {
  NOTHING_SERVED,
  serveCapabilities,
  type ServedCapabilities,
} from "./_child_capabilities.ts";
import { Renders } from "./_child_renders.ts";
import { serveDialects } from "./_child_dialect.ts";
import { checkStandardArguments } from "../tool_parameters.ts";
import { messageOf } from "../_message_of.ts";
import { ChildScope, type ScopeLink } from "./_child_scope.ts";
import { scaledEstimate } from "./_compaction_estimate.ts";
import type { CompactionInput, CompactionResult } from "../compaction.ts";

const PERMISSION_KINDS = ["read", "write", "net", "env", "run"] as const;

/** Serves one plugin over `peer` until the connection ends or the host says `shutdown`. */
export class PluginServer {
  readonly #peer: RpcPeer;
  readonly #exported: unknown;
  readonly #source: string | undefined;
  readonly #link: ScopeLink;
  readonly #renders: Renders;
  readonly #finished = Promise.withResolvers<void>();
  #loading: Promise<Plugin> | undefined;
  #plugin: Plugin | undefined;
  #scope: ChildScope | undefined;
  #served: ServedCapabilities = NOTHING_SERVED;
  #live: number | undefined;
  #stopping = false;

  constructor(exported: unknown, peer: RpcPeer, source: string | undefined) {
    this.#exported = exported;
    this.#peer = peer;
    this.#source = source;
    const log = (level: string, message: string) => peer.notify(Method.log, { level, message });
    this.#link = {
      notify: (method, params) => {
        try {
          peer.notify(method, params);
        } catch (error) {
          // A value JSON cannot carry (a BigInt in a state key's value, say) is the plugin's
          // mistake: said in its log, not thrown into the answer that caused it.
          log("error", `${method} could not be sent: ${describeError(error)}`);
        }
      },
      request: (method, params, options) => peer.request(method, params, options),
      log,
    };
    this.#renders = new Renders(this.#link);
    peer.closed.then(() => this.#finished.resolve());
    this.#register();
  }

  /** Settles when the connection ended, or after `shutdown` was answered. */
  get finished(): Promise<void> {
    return this.#finished.promise;
  }

  #register(): void {
    this.#request(Method.describe, (params) => this.#describe(params as DescribeParams));
    this.#request(Method.initialize, (params) => this.#initialize(params as InitializeParams));
    this.#request(Method.shutdown, () => this.#shutdown());
    this.#request(
      Method.toolExecute,
      (params, call) => this.#execute(params as ToolExecuteParams, call),
    );
    this.#request(
      Method.toolRequiresApproval,
      (params) => this.#approval(params as ToolExecuteParams),
    );
    this.#request(Method.commandRun, (params) => this.#command(params as CommandRunParams));
    this.#request(Method.hookRun, (params) => {
      const { name, input } = params as HookRunParams;
      return this.#find(this.#served.hooks, "hook", name).run({
        ...input,
        state: new Map(input.state),
      });
    });
    this.#request(Method.gateCheck, (params) => {
      const { name, input } = params as GateCheckParams;
      return this.#find(this.#served.gates, "gate", name).check({
        ...input,
        state: new Map(input.state),
      });
    });
    this.#request(Method.guardDecide, (params) => {
      const { name, input } = params as GuardDecideParams;
      return this.#find(this.#served.guards, "guard", name).decide({
        ...input,
        state: new Map(input.state),
      });
    });
    this.#request(
      Method.compactorCompact,
      (params, call) => this.#compact(params as CompactorCompactParams, call),
    );
    this.#request(Method.actionRun, (params, call) => {
      const { name, input } = params as ActionRunParams;
      return this.#find(this.#served.actions, "action", name).run({
        ...input,
        signal: call.signal,
      });
    });
    this.#request(Method.walletFetch, async (params, call) => {
      const { name, request } = params as AccountFetchParams;
      const wallet = this.#find(this.#served.wallets, "wallet", name);
      return await wallet.fetch(accountRequest(request, call.signal)) ?? null;
    });
    this.#request(Method.allowanceFetch, async (params, call) => {
      const { name, request } = params as AccountFetchParams;
      const allowance = this.#find(this.#served.allowances, "allowance", name);
      return await allowance.fetch(accountRequest(request, call.signal)) ?? null;
    });
    // A provider whose dialect runs here: the `dialect.*` methods, served from the providers of
    // the plugin's current capabilities.
    serveDialects(this.#peer, (flavor) => this.#served.dialects.get(flavor));
    this.#notification(Method.tick, () => this.#plugin?.tick?.());
    this.#notification(Method.event, (params) => {
      const { type, payload } = params as EventParams;
      this.#scope?.deliver(type as keyof AmberEvents, payload);
    });
    this.#notification(
      Method.configChanged,
      (params) => this.#configChanged(params as ConfigChangedParams),
    );
    this.#notification(Method.toolsChanged, (params) => {
      this.#scope?.setTools((params as ToolsChangedParams).tools);
    });
    this.#notification(Method.statusSnapshot, (params) => {
      this.#renders.setSnapshot((params as StatusSnapshotParams).snapshot);
    });
    this.#notification(Method.panelWidth, (params) => {
      const { id, width } = params as PanelWidthParams;
      this.#renders.setWidth(id, width);
    });
    this.#notification(Method.panelKey, (params) => {
      const { id, key } = params as PanelKeyParams;
      this.#renders.panelOf(id)?.onKey?.(key);
    });
  }

  // Every request is followed, before its answer goes out, by the pushes it caused.
  #request(method: string, answer: (params: unknown, call: RpcCall) => unknown): void {
    this.#peer.handle(method, async (params, call) => {
      try {
        return await answer(params ?? {}, call);
      } finally {
        this.#afterMessage();
      }
    });
  }

  // A notification has no one to answer: what it throws goes to the log.
  #notification(method: string, receive: (params: unknown) => unknown): void {
    this.#peer.onNotification(method, (params) => {
      const fail = (error: unknown) =>
        this.#link.log("error", `${method} failed: ${describeError(error)}`);
      let outcome: unknown;
      try {
        outcome = receive(params ?? {});
      } catch (error) {
        fail(error);
      }
      if (outcome instanceof Promise) outcome.catch(fail).finally(() => this.#afterMessage());
      else this.#afterMessage();
    });
  }

  // A live plugin whose version moved is resolved anew and the host told; then every render is
  // compared with what the host has.
  #afterMessage(): void {
    const plugin = this.#plugin;
    if (plugin === undefined || this.#scope === undefined || this.#stopping) return;
    if (plugin.liveVersion !== undefined) this.#checkLive(plugin);
    this.#renders.push();
  }

  #checkLive(plugin: Plugin): void {
    let version: number;
    try {
      version = plugin.liveVersion!();
    } catch (error) {
      this.#link.log("error", `liveVersion() failed: ${describeError(error)}`);
      return;
    }
    if (version === this.#live) return;
    this.#live = version;
    const served = this.#resolve(plugin);
    if (typeof served === "string") {
      // The host keeps the contributions it has, as a failed refresh keeps the environment.
      this.#link.log("error", `live version ${version}: ${served}`);
      return;
    }
    this.#served = served;
    this.#link.notify(Method.pluginChanged, {
      liveVersion: version,
      capabilities: served.descriptors,
    });
  }

  #resolve(plugin: Plugin): ServedCapabilities | string {
    let capabilities: unknown;
    try {
      capabilities = plugin.capabilities();
    } catch (error) {
      return `capabilities() failed: ${describeError(error)}`;
    }
    return serveCapabilities(plugin.id, capabilities, this.#scope!, this.#renders);
  }

  async #describe(params: DescribeParams): Promise<PluginManifest> {
    if (params.protocolVersion !== PROTOCOL_VERSION) {
      throw new RpcError(
        RpcErrorCode.InvalidRequest,
        `the host speaks sandbox protocol version ${params.protocolVersion}, ` +
          `this plugin process speaks version ${PROTOCOL_VERSION}: use the same amber for both`,
        { host: params.protocolVersion, plugin: PROTOCOL_VERSION },
      );
    }
    const plugin = await this.#load(String(params.hostVersion));
    return manifestOf(plugin);
  }

  #load(hostVersion: string): Promise<Plugin> {
    return this.#loading ??= this.#loadOnce(hostVersion).then((plugin) => this.#plugin = plugin);
  }

  async #loadOnce(hostVersion: string): Promise<Plugin> {
    let value: unknown;
    try {
      value = await this.#exported;
    } catch (error) {
      // An import that failed names its module (`PluginImportError.file`) for the host to show.
      const file = (error as { file?: unknown } | null)?.file;
      const data = typeof file === "string" ? { field: "plugin", file } : { field: "plugin" };
      throw new RpcError(RpcErrorCode.PluginError, messageOf(error), data);
    }
    // The same words as an import into amber: `pluginFromExport` and the validator behind it.
    let plugin: Plugin;
    try {
      plugin = validatePlugin(
        await pluginFromExport(value, createPluginHostApi(hostVersion)),
        this.#source,
      );
    } catch (error) {
      const field = error instanceof PluginValidationError
        ? error.field
        : typeof value === "function"
        ? "plugin"
        : pluginProblem(value)?.field ?? "plugin";
      throw new RpcError(RpcErrorCode.PluginError, messageOf(error), { field });
    }
    const problem = permissionsProblem(plugin.permissions);
    if (problem !== undefined) {
      const where = this.#source === undefined ? "" : ` (${this.#source})`;
      throw new RpcError(RpcErrorCode.PluginError, `plugin '${plugin.id}'${where}: ${problem}`, {
        field: "permissions",
      });
    }
    return plugin;
  }

  async #initialize(params: InitializeParams): Promise<InitializeResult> {
    if (this.#loading === undefined) {
      throw new RpcError(RpcErrorCode.InvalidRequest, "initialize came before describe");
    }
    const plugin = await this.#loading;
    if (this.#scope !== undefined) {
      throw new RpcError(
        RpcErrorCode.InvalidRequest,
        `plugin '${plugin.id}' is already initialized in this process; a new activation needs a new process`,
      );
    }
    const decoded = await decodePluginConfig(plugin, params.section);
    if (!decoded.ok) {
      return { ok: false, reason: decoded.errors.map((error) => error.message).join("; ") };
    }
    const scope = new ChildScope({
      pluginId: params.pluginId,
      workspace: params.workspace,
      config: params.config,
      section: decoded.value,
      tools: params.tools ?? [],
      ui: params.services?.ui,
    }, this.#link);
    let ready: unknown;
    try {
      ready = await plugin.initialize(scope);
    } catch (error) {
      return { ok: false, reason: `initialize failed: ${describeError(error)}` };
    }
    if (ready !== true) return { ok: false, reason: "initialize returned false" };
    this.#scope = scope;
    let live: number | undefined;
    let served: ServedCapabilities | string;
    try {
      live = plugin.liveVersion?.();
      served = this.#resolve(plugin);
    } catch (error) {
      served = `liveVersion() failed: ${describeError(error)}`;
    }
    if (typeof served === "string") {
      // The host will not shut down a plugin that never became active: this process does.
      this.#scope = undefined;
      await this.#shutdownPlugin(plugin);
      return { ok: false, reason: served };
    }
    this.#served = served;
    this.#live = live;
    return live === undefined
      ? { ok: true, capabilities: served.descriptors }
      : { ok: true, capabilities: served.descriptors, liveVersion: live };
  }

  async #shutdown(): Promise<null> {
    this.#stopping = true;
    const plugin = this.#plugin;
    this.#served = NOTHING_SERVED;
    try {
      if (plugin !== undefined && this.#scope !== undefined) {
        this.#scope = undefined;
        await plugin.shutdown();
      }
    } finally {
      // A turn later, once the answer went out, the output is closed and the process may end.
      setTimeout(() => this.#peer.close().then(() => this.#finished.resolve()), 0);
    }
    return null;
  }

  async #shutdownPlugin(plugin: Plugin): Promise<void> {
    try {
      await plugin.shutdown();
    } catch (error) {
      this.#link.log("error", `shutdown failed: ${describeError(error)}`);
    }
  }

  async #execute(params: ToolExecuteParams, call: RpcCall): Promise<ToolResult> {
    const served = this.#served.tools.get(params.capability)?.get(params.tool);
    if (served === undefined) {
      return errorResult(
        `unknown tool '${params.tool}' in capability '${params.capability}' of plugin '${this.#plugin?.id}'`,
      );
    }
    const name = params.tool;
    const parsed = argumentsOf(params.args);
    if (typeof parsed === "string") {
      return errorResult(`invalid arguments for tool '${name}': not valid JSON: ${parsed}`);
    }
    let input = parsed.value;
    const standard = served.parameters.standard;
    if (standard !== undefined) {
      let checked: Awaited<ReturnType<typeof checkStandardArguments>>;
      try {
        checked = await checkStandardArguments(standard, input);
      } catch (error) {
        return errorResult(`tool '${name}' could not validate its arguments: ${messageOf(error)}`);
      }
      if (!checked.ok) return errorResult(`invalid arguments for tool '${name}': ${checked.error}`);
      input = checked.value;
    }
    let result: unknown;
    try {
      result = await served.tool.execute(input, {
        signal: call.signal,
        // Params are JSON from another process: only a string is taken for an id.
        ...(typeof params.callId === "string" ? { callId: params.callId } : {}),
        progress: (message: string) => call.progress(String(message)),
        output: (chunk: string) => call.progress(outputProgress(String(chunk))),
      });
    } catch (error) {
      return errorResult(`tool '${name}' failed: ${messageOf(error)}`);
    }
    if (!isToolResult(result)) {
      return errorResult(
        `tool '${name}' failed: it returned ${describeValueType(result)} instead of a ToolResult`,
      );
    }
    return result;
  }

  async #approval(params: ToolExecuteParams): Promise<boolean> {
    const served = this.#served.tools.get(params.capability)?.get(params.tool);
    if (served === undefined) {
      throw new RpcError(RpcErrorCode.InvalidParams, `unknown tool '${params.tool}'`);
    }
    const ask = served.tool.requiresApproval;
    if (ask === undefined) return false;
    return await ask.call(served.tool, params.args) === true;
  }

  // A compactor runs here on the conversation as data; what it asks of the host (a summary, the
  // rest of the chain) crosses back as requests naming the compaction. `next` sends only what
  // the compactor changed: the conversation is not sent back unless it is another one.
  #compact(params: CompactorCompactParams, call: RpcCall): unknown {
    const { name, compaction, input } = params;
    const compactor = this.#find(this.#served.compactors, "compactor", name);
    const { state, tokensPerChar, ...plan } = input;
    const signal = call.signal;
    const given: CompactionInput = {
      ...plan,
      state: new Map(state),
      signal,
      summarize: (request) => {
        const ask: CompactionSummarizeParams = { compaction, request };
        return this.#peer.request<string>(Method.compactionSummarize, ask, { signal });
      },
      estimate: (messages) => scaledEstimate(messages, tokensPerChar),
    };
    return compactor.compact(given, (changed) => {
      const ask: CompactionNextParams = { compaction, input: changes(given, changed) };
      return this.#peer.request<CompactionResult>(Method.compactionNext, ask, { signal });
    });
  }

  async #command(params: CommandRunParams): Promise<string | CommandReply> {
    const command = this.#find(this.#served.commands, "command", params.name);
    const handler = command.handlers[params.path];
    if (typeof handler !== "function") {
      throw new RpcError(
        RpcErrorCode.InvalidParams,
        `command '${params.name}' has no handler at '${params.path}'`,
      );
    }
    const reply: unknown = await handler(params.arg);
    const problem = commandReplyProblem(reply);
    if (problem !== undefined) throw new Error(`command '${command.root}': its handler ${problem}`);
    if (typeof reply === "string") return reply;
    const { text, prompt } = reply as CommandReply;
    return { ...(text === undefined ? {} : { text }), ...(prompt === undefined ? {} : { prompt }) };
  }

  async #configChanged(params: ConfigChangedParams): Promise<void> {
    const plugin = this.#plugin;
    const scope = this.#scope;
    if (plugin === undefined || scope === undefined) return;
    const decoded = await decodePluginConfig(plugin, params.section);
    scope.setConfig(params.config);
    if (decoded.ok) scope.setSection(decoded.value);
    else {
      // As in-process: a section that no longer decodes is reported, the plugin keeps its value.
      for (const error of decoded.errors) this.#link.log("warn", error.message);
    }
  }

  #find<T>(table: ReadonlyMap<string, T>, kind: string, name: string): T {
    const found = table.get(name);
    if (found === undefined) {
      throw new RpcError(
        RpcErrorCode.InvalidParams,
        `plugin '${this.#plugin?.id}' has no ${kind} '${name}'`,
      );
    }
    return found;
  }
}

function manifestOf(plugin: Plugin): PluginManifest {
  const manifest: { -readonly [K in keyof PluginManifest]: PluginManifest[K] } = {
    protocolVersion: PROTOCOL_VERSION,
    id: plugin.id,
    version: plugin.version,
    name: plugin.name,
    live: typeof plugin.liveVersion === "function",
    ticks: typeof plugin.tick === "function",
  };
  if (plugin.description !== undefined) manifest.description = plugin.description;
  if (plugin.category !== undefined) manifest.category = plugin.category;
  if (plugin.enabledByDefault !== undefined) manifest.enabledByDefault = plugin.enabledByDefault;
  if (plugin.requires !== undefined) manifest.requires = plugin.requires;
  if (plugin.bound !== undefined) manifest.bound = plugin.bound;
  if (plugin.permissions !== undefined) manifest.permissions = plugin.permissions;
  return manifest;
}

// The shape only (lists of strings); what may be asked is the host's check (permissions.ts).
function permissionsProblem(permissions: unknown): string | undefined {
  if (permissions === undefined) return undefined;
  if (typeof permissions !== "object" || permissions === null || Array.isArray(permissions)) {
    return "permissions is not an object";
  }
  for (const kind of PERMISSION_KINDS) {
    const list = (permissions as Record<string, unknown>)[kind];
    if (list === undefined) continue;
    if (!Array.isArray(list) || !list.every((item) => typeof item === "string")) {
      return `permissions.${kind} is not a list of strings`;
    }
  }
  return undefined;
}

function accountRequest(
  request: AccountFetchParams["request"],
  signal: AbortSignal,
): AccountRequest {
  return { ...request, signal };
}

// Models send JSON text ("" for no arguments); the host may also send the parsed value.
function argumentsOf(args: unknown): { value: unknown } | string {
  if (args === undefined) return { value: {} };
  if (typeof args !== "string") return { value: args };
  if (args.trim() === "") return { value: {} };
  try {
    return { value: JSON.parse(args) };
  } catch (error) {
    return messageOf(error);
  }
}

function errorResult(error: string): ToolResult {
  return { ok: false, output: "", error };
}

// What a compactor changed in the input it hands `next`: the messages (when they are another
// list), the turns kept and the instructions. The rest of the input is the host's.
function changes(
  given: CompactionInput,
  changed: CompactionInput | undefined,
): CompactionNextParams["input"] {
  if (changed === undefined || changed === given) return {};
  return {
    ...(changed.messages === given.messages ? {} : { messages: changed.messages }),
    ...(changed.keepTurns === given.keepTurns ? {} : { keepTurns: changed.keepTurns }),
    // Instructions taken away cross as none asked for: JSON has no undefined.
    ...(changed.instructions === given.instructions
      ? {}
      : { instructions: changed.instructions ?? "" }),
  };
}
