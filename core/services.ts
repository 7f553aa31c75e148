/**
 * What a plugin is handed: the context at initialization, and the services a capability's
 * factory receives at install.
 *
 * @module
 */

import type { AmberConfig } from "./config.ts";
import type { PluginEvents } from "./events.ts";
import type { ToolView } from "./tool.ts";
import type { UiService } from "./ui.ts";

/** The workspace the agent works in. */
export interface Workspace {
  /** Its absolute root directory. */
  readonly root: string;
}

/** A background process started by a tool. */
export interface JobInfo {
  /** The job's id. */
  readonly id: string;
  /** The command line. */
  readonly command: readonly string[];
  /** Whether it is still running. */
  readonly running: boolean;
  /** The exit code once it ended. */
  readonly exitCode?: number;
}

/** The host's background jobs. */
export interface JobService {
  /** Starts a command in the workspace. */
  start(command: readonly string[]): Promise<JobInfo>;
  /** The output gathered since the last read. */
  read(id: string): Promise<{ readonly output: string; readonly info: JobInfo }>;
  /** Stops a job. */
  stop(id: string): Promise<JobInfo>;
  /** Every job. */
  list(): readonly JobInfo[];
}

/** One item of the host's todo list. */
export interface TodoItem {
  /** What to do. */
  readonly content: string;
  /** Where it stands. */
  readonly status: "pending" | "in_progress" | "completed";
}

/** The host's todo list. */
export interface TodoService {
  /** The list now. */
  list(): readonly TodoItem[];
  /** Replaces the list. */
  write(items: readonly TodoItem[]): void;
  /**
   * Calls `listener` with the new list after every `write`; returns what stops it. Optional: a
   * front end showing the list live (the interactive session's todo panel) uses it when there.
   */
  subscribe?(listener: (items: readonly TodoItem[]) => void): () => void;
}

/**
 * A defined agent a sub-agent can run as (a markdown file's `agents/<name>.md`): its system
 * prompt, the tools it may call and the model it runs on.
 */
export interface AgentDefinition {
  /** The name the `task` tool's `agent` parameter takes. */
  readonly name: string;
  /** When to use it, for the model choosing one. */
  readonly description: string;
  /** The sub-agent's system prompt, in place of amber's own. */
  readonly systemPrompt: string;
  /**
   * The tools it may call: names or globs (`*`, `mcp__github__*`); every tool when absent. The
   * sub-agent's requests carry only these, and a gate blocks a call to any other.
   */
  readonly tools?: readonly string[];
  /** The model, on the session's provider; the session's when absent. */
  readonly model?: string;
  /** Where it was defined (a file path), for listings. */
  readonly path?: string;
}

/** How {@linkcode SubagentService.run} runs a sub-agent. */
export interface SubagentRunOptions {
  /** Cancels the sub-agent. */
  readonly signal: AbortSignal;
  /** The defined agent to run as; a general sub-agent with the session's prompt when absent. */
  readonly agent?: AgentDefinition;
}

/** The host's sub-agents. */
export interface SubagentService {
  /** Runs a nested agent on `prompt` and returns its final answer. */
  run(prompt: string, options: SubagentRunOptions): Promise<string>;
  /**
   * The defined agents, first-defined first; the same array for as long as they do not change,
   * so a caller may compare by identity. Absent for a host that defines none.
   */
  agents?(): readonly AgentDefinition[];
}

/** A process group a tool started, as the host sees it. */
export interface StartedProcess {
  /** The group leader's pid, which is also the group's id. */
  readonly pid: number;
  /** Settles when the whole group is gone. */
  readonly finished: Promise<unknown>;
  /** Stops the whole group; resolves when it is gone. */
  stop(): Promise<unknown>;
}

/** How the processes the agent starts are run: what they inherit, and who stops them. */
export interface ProcessPolicy {
  /**
   * The environment for a child process (the host's, without its secrets), and the secret values
   * kept out of it, to be redacted from what the child prints.
   */
  environment(): { readonly env: Record<string, string>; readonly secrets: readonly string[] };
  /**
   * Hands the host a process group a tool started: the host stops it when amber exits or is
   * signalled, and keeps a record of it until it ends, so that the next start finds it if amber
   * was killed.
   */
  track(group: StartedProcess, command: readonly string[]): void;
}

/** What an editor is asked at a call: when to give up. */
export interface EditorCallOptions {
  /** Aborted when the call is no longer wanted (the run was cancelled). */
  readonly signal?: AbortSignal;
}

/** A command to run in one of the editor's terminals. */
export interface EditorCommand {
  /** The program. */
  readonly command: string;
  /** Its arguments. */
  readonly args: readonly string[];
  /** The absolute directory it runs in. */
  readonly cwd: string;
  /** Variables added to the editor's environment for it. */
  readonly env?: Readonly<Record<string, string>>;
  /** The most output bytes the editor keeps; it drops the start of the output beyond them. */
  readonly outputByteLimit?: number;
  /** Aborting it kills the command; the result then says `killed`. */
  readonly signal: AbortSignal;
  /**
   * The tool call the command belongs to (`ToolCallContext.callId`), so the front end can show
   * the terminal in that call's row; without it the terminal is shown nowhere.
   */
  readonly toolCallId?: string;
}

/** How a command run in an editor terminal ended. */
export interface EditorCommandResult {
  /** The output the editor kept (stdout and stderr as its terminal shows them). */
  readonly output: string;
  /** Whether the editor dropped the start of the output to stay within its byte limit. */
  readonly truncated: boolean;
  /** The exit code; absent when a signal ended it or the editor did not say. */
  readonly exitCode?: number;
  /** The signal that ended it, if one did. */
  readonly signal?: string;
  /** Whether it was killed because {@linkcode EditorCommand.signal} aborted. */
  readonly killed: boolean;
}

/**
 * What an editor driving amber (over the Agent Client Protocol) offers instead of amber's own
 * file and process access. Each member is present only when the editor offers it; a tool uses
 * a member that is there and its own Deno I/O otherwise. Paths are absolute. A member rejects
 * with an `Error` when the editor fails or answers nonsense; nothing here throws synchronously.
 */
export interface EditorService {
  /** The text of `path` as the editor has it: an open buffer's unsaved text included. */
  readTextFile?(path: string, options?: EditorCallOptions): Promise<string>;
  /** Replaces the whole text of `path` with `text` through the editor, creating the file. */
  writeTextFile?(path: string, text: string, options?: EditorCallOptions): Promise<void>;
  /** Runs a command in an editor terminal until it ends or its signal aborts. */
  runCommand?(command: EditorCommand): Promise<EditorCommandResult>;
}

/**
 * Services only a host provides. Each is absent until the host attaches it; a capability that
 * needs one declines when it is missing.
 */
export interface HostServices {
  /** Background jobs. */
  readonly jobs?: JobService;
  /** The todo list. */
  readonly todos?: TodoService;
  /** Sub-agents. */
  readonly subagents?: SubagentService;
  /** Aborted when the user cancels. */
  readonly signal?: AbortSignal;
  /** Questions to and notices for the user; a headless host's refuses every question. */
  readonly ui?: UiService;
  /** The environment and the tracking of the processes tools start. */
  readonly processes?: ProcessPolicy;
  /** The editor's files and terminals, when an editor drives amber and offers them. */
  readonly editor?: EditorService;
}

/**
 * What `initialize` receives.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type Plugin, type PluginContext, PluginRuntime } from "@amber/core";
 * import { createRegistries } from "@amber/registries";
 * let context: PluginContext | undefined;
 * const completed: string[] = [];
 * const plugin: Plugin = {
 *   id: "watcher",
 *   version: "1.0.0",
 *   name: "Watcher",
 *   initialize(ctx) {
 *     context = ctx;
 *     ctx.events.subscribe("toolCompleted", (event) => completed.push(event.name));
 *     return true;
 *   },
 *   shutdown() {},
 *   capabilities: () => [],
 * };
 * const runtime = new PluginRuntime({ registries: createRegistries() });
 * runtime.register(plugin);
 * await runtime.start();
 * assert.equal(context?.pluginId, "watcher");
 * const result = { ok: true, output: "" };
 * runtime.events.publish("toolCompleted", { callId: "1", name: "read", result, durationMs: 3 });
 * assert.deepEqual(completed, ["read"]);
 * await runtime.stop();
 * ```
 */
export interface PluginContext {
  /** The plugin's own id. */
  readonly pluginId: string;
  /** Subscriptions made here belong to the plugin and end when it is disabled. */
  readonly events: PluginEvents;
  /** The tools: frozen entries whose tools are stand-ins; a write throws a `TypeError`. */
  readonly tools: ToolView;
  /**
   * The host's live configuration as a read-only view (a write throws a `TypeError`): call it
   * when you need it, never keep what it returns.
   */
  config(): AmberConfig;
  /** This plugin's section of the configuration, read live, as a read-only view. */
  section(): unknown;
  /** The workspace, read-only. */
  readonly workspace: Workspace;
}

/**
 * What a capability's factory receives at install.
 */
export interface PluginServices {
  /** The plugin being installed. */
  readonly owner: string;
  /** The tools: frozen entries whose tools are stand-ins; a write throws a `TypeError`. */
  readonly tools: ToolView;
  /** Subscriptions made here belong to the plugin; handlers get each payload read-only. */
  readonly events: PluginEvents;
  /** The host's live configuration, as a read-only view. */
  config(): AmberConfig;
  /**
   * The host's services; each may be absent. For a plugin, a frozen object of its own whose
   * services call the host's and return read-only values.
   */
  readonly host: HostServices;
  /** The workspace, read-only. */
  readonly workspace: Workspace;
}
