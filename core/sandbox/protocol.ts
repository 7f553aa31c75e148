/**
 * The sandbox protocol, version {@linkcode PROTOCOL_VERSION}: what the host and a plugin's
 * process say to each other over newline-delimited JSON-RPC 2.0 on the process's stdin and
 * stdout (stderr is the plugin's log). Every method name and every params and result shape is
 * here (a provider dialect's, in `protocol_dialect.ts`, re-exported); `docs/sandbox_protocol.md`
 * is the prose.
 *
 * The host asks (`describe`, `initialize`, then calls into capabilities); the plugin answers,
 * and pushes what a render needs before it is asked (`prompt.update`, `status.update`,
 * `panel.update`), because a render in the host is synchronous and cannot wait for a process.
 * A plugin process exits when its stdin closes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Method, PROTOCOL_VERSION } from "@amber/core/sandbox";
 * assert.equal(PROTOCOL_VERSION, 1);
 * assert.equal(Method.toolExecute, "tool.execute");
 * ```
 *
 * @module
 */

import type { CommandNode } from "../command.ts";
import type { CompactionPlan, SummaryRequest } from "../compaction.ts";
import type { AmberEvents } from "../events.ts";
import type { PhaseHookPoint } from "../hooks.ts";
import type { Plugin } from "../plugin.ts";
import type { Message, ToolCall } from "../message.ts";
import type { Preset } from "../provider.ts";
import type { StatusSnapshot, StatusText } from "../status.ts";
import type { JsonSchema, ToolResult } from "../tool.ts";
import type { NotifyTone } from "../ui.ts";

export * from "./protocol_dialect.ts";

/** The protocol version this build speaks; `describe` fails on any other. */
export const PROTOCOL_VERSION = 1;

/** Every method name, host -> plugin and plugin -> host. */
export const Method: {
  // host -> plugin, requests
  readonly describe: "describe";
  readonly initialize: "initialize";
  readonly shutdown: "shutdown";
  readonly toolExecute: "tool.execute";
  readonly toolRequiresApproval: "tool.requiresApproval";
  readonly commandRun: "command.run";
  readonly hookRun: "hook.run";
  readonly gateCheck: "gate.check";
  readonly guardDecide: "guard.decide";
  readonly compactorCompact: "compactor.compact";
  readonly actionRun: "action.run";
  readonly walletFetch: "wallet.fetch";
  readonly allowanceFetch: "allowance.fetch";
  readonly dialectCreate: "dialect.create";
  readonly dialectChatRequest: "dialect.chatRequest";
  readonly dialectFrames: "dialect.frames";
  readonly dialectEnd: "dialect.end";
  readonly dialectError: "dialect.error";
  readonly dialectModelsRequest: "dialect.modelsRequest";
  readonly dialectParseModels: "dialect.parseModels";
  readonly dialectAllowance: "dialect.allowance";
  // host -> plugin, notifications
  readonly dialectOpen: "dialect.open";
  readonly tick: "tick";
  readonly event: "event";
  readonly configChanged: "config.changed";
  readonly toolsChanged: "tools.changed";
  readonly statusSnapshot: "status.snapshot";
  readonly panelWidth: "panel.width";
  readonly panelKey: "panel.key";
  // plugin -> host, notifications
  readonly eventsSubscribe: "events.subscribe";
  readonly eventsUnsubscribe: "events.unsubscribe";
  readonly promptUpdate: "prompt.update";
  readonly statusUpdate: "status.update";
  readonly panelUpdate: "panel.update";
  readonly pluginChanged: "plugin.changed";
  readonly log: "log";
  readonly uiNotify: "ui.notify";
  // plugin -> host, requests
  readonly uiAsk: "ui.ask";
  readonly compactionSummarize: "compaction.summarize";
  readonly compactionNext: "compaction.next";
} = Object.freeze({
  describe: "describe",
  initialize: "initialize",
  shutdown: "shutdown",
  toolExecute: "tool.execute",
  toolRequiresApproval: "tool.requiresApproval",
  commandRun: "command.run",
  hookRun: "hook.run",
  gateCheck: "gate.check",
  guardDecide: "guard.decide",
  compactorCompact: "compactor.compact",
  actionRun: "action.run",
  walletFetch: "wallet.fetch",
  allowanceFetch: "allowance.fetch",
  dialectCreate: "dialect.create",
  dialectChatRequest: "dialect.chatRequest",
  dialectFrames: "dialect.frames",
  dialectEnd: "dialect.end",
  dialectError: "dialect.error",
  dialectModelsRequest: "dialect.modelsRequest",
  dialectParseModels: "dialect.parseModels",
  dialectAllowance: "dialect.allowance",
  dialectOpen: "dialect.open",
  tick: "tick",
  event: "event",
  configChanged: "config.changed",
  toolsChanged: "tools.changed",
  statusSnapshot: "status.snapshot",
  panelWidth: "panel.width",
  panelKey: "panel.key",
  eventsSubscribe: "events.subscribe",
  eventsUnsubscribe: "events.unsubscribe",
  promptUpdate: "prompt.update",
  statusUpdate: "status.update",
  panelUpdate: "panel.update",
  pluginChanged: "plugin.changed",
  log: "log",
  uiNotify: "ui.notify",
  uiAsk: "ui.ask",
  compactionSummarize: "compaction.summarize",
  compactionNext: "compaction.next",
});

/** `describe`: the host's side. */
export interface DescribeParams {
  /** The host's protocol version. */
  readonly protocolVersion: number;
  /** The host's amber version. */
  readonly hostVersion: string;
}

/** `describe`: the plugin as its module exports it, checked by the same validator as `register`. */
export interface PluginManifest extends
  Pick<
    Plugin,
    | "id"
    | "version"
    | "name"
    | "description"
    | "category"
    | "enabledByDefault"
    | "requires"
    | "bound"
    | "permissions"
  > {
  /** The protocol version the plugin process speaks. */
  readonly protocolVersion: number;
  /** Whether it has `liveVersion`. */
  readonly live: boolean;
  /** Whether it has `tick`. */
  readonly ticks: boolean;
}

/** A tool as another plugin sees it: `tools.changed` and `initialize` carry a list of these. */
export interface ToolInfo {
  /** The tool's name. */
  readonly name: string;
  /** The plugin that owns it. */
  readonly owner: string;
  /** Its description. */
  readonly description: string;
  /** Its parameters as JSON Schema. */
  readonly schema: JsonSchema;
  /** Its verb, if any. */
  readonly verb?: string;
  /** Whether it only reads. */
  readonly readOnly?: boolean;
}

/** `initialize`: what the plugin's context holds. */
export interface InitializeParams {
  /** The plugin's id. */
  readonly pluginId: string;
  /** The workspace root. */
  readonly workspace: string;
  /**
   * The host configuration (the `AmberConfig`), as JSON, with `plugins` holding this plugin's
   * section only: other plugins' sections may hold their tokens.
   */
  readonly config: unknown;
  /** The plugin's section of it, undecoded: the plugin process decodes it with its schema. */
  readonly section: unknown;
  /** The tools there are now. */
  readonly tools: readonly ToolInfo[];
  /** The host services carried: `ui` when the host has a UI. */
  readonly services: { readonly ui?: { readonly interactive: boolean } };
}

/** `initialize`: what `Plugin.initialize` said, and, when it said yes, what it contributes. */
export type InitializeResult =
  | { readonly ok: false; readonly reason?: string }
  | {
    readonly ok: true;
    readonly capabilities: readonly CapabilityDescriptor[];
    /** `liveVersion()` now, for a live plugin. */
    readonly liveVersion?: number;
  };

/** A tool as it crosses: its function parts stay in the plugin process. */
export interface ToolDescriptor {
  /** `Tool.name`. */
  readonly name: string;
  /** `Tool.description`. */
  readonly description: string;
  /** The parameters as JSON Schema (a Standard Schema is converted; it validates in the plugin). */
  readonly parameters: JsonSchema;
  /** `Tool.verb`. */
  readonly verb?: string;
  /** `Tool.readOnly`. */
  readonly readOnly?: boolean;
  /** Whether it has `requiresApproval`, which the host then asks (`tool.requiresApproval`). */
  readonly asksApproval: boolean;
}

/** A capability as it crosses: its data, with the last render where it has one. */
export type CapabilityDescriptor =
  | { readonly kind: "tool"; readonly name: string; readonly tools: readonly ToolDescriptor[] }
  | {
    readonly kind: "prompt";
    readonly name: string;
    readonly priority: number;
    readonly text: string;
  }
  | {
    readonly kind: "status";
    readonly name: string;
    readonly priority: number;
    readonly dropPriority: number;
    /** Rendered from `emptyStatusSnapshot()`; `status.update` brings later ones. */
    readonly text: StatusText;
  }
  | {
    readonly kind: "panel";
    readonly name: string;
    readonly id: string;
    readonly title: string;
    /** Rendered at {@linkcode PANEL_WIDTH}; `panel.update` brings later ones. */
    readonly lines: readonly string[];
    /** Whether it has `onKey`. */
    readonly keys: boolean;
  }
  | {
    readonly kind: "command";
    readonly name: string;
    readonly root: string;
    readonly help: string;
    readonly man?: string;
    readonly subtree: { readonly [name: string]: CommandNode };
    /** The paths that have handlers. */
    readonly handlers: readonly string[];
  }
  | {
    readonly kind: "provider";
    readonly name: string;
    readonly flavor: string;
    readonly presets: readonly Preset[];
    /** Whether it has a dialect, which then runs in the plugin process. */
    readonly dialect: boolean;
  }
  | {
    readonly kind: "wallet";
    readonly name: string;
    readonly provider: string;
    readonly currency?: string;
  }
  | { readonly kind: "allowance"; readonly name: string; readonly provider: string }
  | { readonly kind: "hook"; readonly name: string; readonly point: PhaseHookPoint }
  | { readonly kind: "gate"; readonly name: string }
  | { readonly kind: "guard"; readonly name: string }
  | { readonly kind: "compactor"; readonly name: string }
  | { readonly kind: "action"; readonly name: string }
  | { readonly kind: "state"; readonly name: string; readonly initial: unknown };

/** The width a panel is first rendered at. */
export const PANEL_WIDTH = 80;

/**
 * `tool.execute` params; the result is a `ToolResult`. Progress values are strings, or
 * `{ output: string }` for the tool's streamed output (`ToolCallContext.output`).
 */
export interface ToolExecuteParams {
  /** The tool capability's name. */
  readonly capability: string;
  /** The tool's name. */
  readonly tool: string;
  /** The arguments as the model sent them. */
  readonly args: unknown;
  /** The model's call being run (`ToolCallContext.callId`); absent when the host had none. */
  readonly callId?: string;
}

/** `tool.requiresApproval` params; the result is a boolean. */
export interface ToolApprovalParams {
  /** The tool capability's name. */
  readonly capability: string;
  /** The tool's name. */
  readonly tool: string;
  /** The arguments. */
  readonly args: unknown;
}

/**
 * `command.run` params; the result is the handler's text, or its reply `{text?, prompt?}` (a
 * `prompt` is sent to the model as the user's message).
 */
export interface CommandRunParams {
  /** The command capability's name. */
  readonly name: string;
  /** The handler's path (`""` for the root). */
  readonly path: string;
  /** The argument text. */
  readonly arg: string;
}

/** The run state as it crosses: a map's entries. */
export type StateEntries = readonly (readonly [string, unknown])[];

/** `hook.run` params; the result is a `HookReaction`. */
export interface HookRunParams {
  /** The hook's name. */
  readonly name: string;
  /** `HookInput` with `state` as entries. */
  readonly input: {
    readonly point: PhaseHookPoint;
    readonly step: number;
    readonly transcript: readonly Message[];
    readonly state: StateEntries;
    readonly tool?: { readonly call: ToolCall; readonly result: ToolResult };
    /** At `BeforeCompaction`: the compaction about to run. */
    readonly compaction?: CompactionPlan;
  };
}

/** `gate.check` params; the result is a `GateOutcome`. */
export interface GateCheckParams {
  /** The gate's name. */
  readonly name: string;
  /** `GateInput` with `state` as entries. */
  readonly input: { readonly call: ToolCall; readonly args: unknown; readonly state: StateEntries };
}

/** `guard.decide` params; the result is a `RunEndDecision`. */
export interface GuardDecideParams {
  /** The guard's name. */
  readonly name: string;
  /** `GuardInput` with `state` as entries. */
  readonly input: {
    readonly step: number;
    readonly transcript: readonly Message[];
    readonly state: StateEntries;
  };
}

/**
 * `compactor.compact` params (cancellable); the result is a `CompactionResult`. While it runs,
 * the plugin may ask the host `compaction.summarize` and `compaction.next`, naming the
 * compaction by `compaction`.
 */
export interface CompactorCompactParams {
  /** The compactor's name. */
  readonly name: string;
  /** The handle of this compaction, for the plugin's `compaction.*` requests while it runs. */
  readonly compaction: number;
  /** `CompactionInput` as data: `state` as entries, and no functions. */
  readonly input: CompactionPlan & {
    readonly messages: readonly Message[];
    readonly state: StateEntries;
    /**
     * Tokens per character of `messages` by the host's estimate: the plugin process estimates
     * other messages in proportion, since an estimate is synchronous and cannot cross.
     */
    readonly tokensPerChar: number;
  };
}

/** `compaction.summarize` params (plugin -> host); the result is the summary's text. */
export interface CompactionSummarizeParams {
  /** The compaction's handle, from `compactor.compact`. */
  readonly compaction: number;
  /** The summary asked for. */
  readonly request: SummaryRequest;
}

/**
 * `compaction.next` params (plugin -> host); the result is the `CompactionResult` of the rest
 * of the chain. The plugin may change the messages, the turns kept and the instructions; the
 * rest of the input is the host's.
 */
export interface CompactionNextParams {
  /** The compaction's handle, from `compactor.compact`. */
  readonly compaction: number;
  /** What the plugin changed, if anything. */
  readonly input?: {
    readonly messages?: readonly Message[];
    readonly keepTurns?: number;
    readonly instructions?: string;
  };
}

/** `action.run` params (cancellable); the result is a `ToolResult`. */
export interface ActionRunParams {
  /** The action's name. */
  readonly name: string;
  /** The scheduled call. */
  readonly input: { readonly correlationId: string; readonly call: ToolCall };
}

/** `wallet.fetch` and `allowance.fetch` params; the result is a number, a snapshot, or null. */
export interface AccountFetchParams {
  /** The capability's name. */
  readonly name: string;
  /** `AccountRequest` without its signal. */
  readonly request: {
    readonly provider: string;
    readonly baseUrl: string;
    readonly apiKey?: string;
  };
}

/** `event` params: one event of a type the plugin subscribed to. */
export interface EventParams {
  /** The event type. */
  readonly type: keyof AmberEvents;
  /** Its payload. */
  readonly payload: unknown;
}

/** `config.changed` params. */
export interface ConfigChangedParams {
  /** The host configuration now, with `plugins` holding this plugin's section only. */
  readonly config: unknown;
  /** The plugin's section now, undecoded. */
  readonly section: unknown;
}

/** `tools.changed` params. */
export interface ToolsChangedParams {
  /** The tools there are now. */
  readonly tools: readonly ToolInfo[];
}

/** `status.snapshot` params: segments render from this until the next one. */
export interface StatusSnapshotParams {
  /** The snapshot. */
  readonly snapshot: StatusSnapshot;
}

/** `panel.width` params. */
export interface PanelWidthParams {
  /** The panel's id. */
  readonly id: string;
  /** The width it is shown at. */
  readonly width: number;
}

/** `panel.key` params. */
export interface PanelKeyParams {
  /** The panel's id. */
  readonly id: string;
  /** The key. */
  readonly key: string;
}

/** `events.subscribe` / `events.unsubscribe` params. */
export interface SubscribeParams {
  /** The event type. */
  readonly type: keyof AmberEvents;
}

/** `prompt.update` params. */
export interface PromptUpdateParams {
  /** The prompt block's name. */
  readonly name: string;
  /** Its text now. */
  readonly text: string;
}

/** `status.update` params. */
export interface StatusUpdateParams {
  /** The segment's name. */
  readonly name: string;
  /** Its render now. */
  readonly text: StatusText;
}

/** `panel.update` params. */
export interface PanelUpdateParams {
  /** The panel's id. */
  readonly id: string;
  /** The width these lines were rendered at. */
  readonly width: number;
  /** The lines. */
  readonly lines: readonly string[];
}

/** `plugin.changed` params: a live plugin's contributions moved. */
export interface PluginChangedParams {
  /** `liveVersion()` now. */
  readonly liveVersion: number;
  /** Its capabilities now. */
  readonly capabilities: readonly CapabilityDescriptor[];
}

/** `log` params: a line the plugin wrote with `console`. */
export interface LogParams {
  /** `log`, `info`, `warn`, `error` or `debug`. */
  readonly level: string;
  /** The text. */
  readonly message: string;
}

/** `ui.notify` params. */
export interface UiNotifyParams {
  /** The message. */
  readonly message: string;
  /** Its tone. */
  readonly tone?: NotifyTone;
}

/** `ui.ask` params; the result is the answer, or null when there is none. */
export type UiAskParams =
  | { readonly kind: "text"; readonly question: string; readonly initial?: string }
  | { readonly kind: "secret"; readonly question: string }
  | { readonly kind: "choose"; readonly question: string; readonly choices: readonly string[] }
  | { readonly kind: "confirm"; readonly question: string };
