/**
 * A `task` sub-agent run as a defined agent (`agents/<name>.md`): its system prompt in place of
 * amber's own, only its tools, and its model. The kernel is the same as every run's; the agent's
 * settings reach it through what the session hands `runAgent`: the model name, a model port that
 * rewrites each request (the system prompt, the tools offered), and a host gate that blocks a
 * call to any other tool the model names anyway.
 *
 * An agent's `tools` name amber's tools as `cli/files/tool_patterns.ts` says (names and globs
 * without regard to case, Claude Code's names standing for amber's tools, so a
 * `.claude/agents/` file works unchanged). An entry that matches no tool is said
 * (see {@linkcode AgentTools.unknown}) and the agent runs with the tools that did match; when
 * none did, it runs with no tools at all and can only answer. `model: inherit` and Claude Code's
 * aliases (`sonnet`, `opus`, `haiku`) use the session's model: they name no model of a provider.
 *
 * @module
 */

import type { AgentDefinition, ChatRequest, GateInput, GateOutcome, Message } from "@amber/core";
import type { ModelPort, RunOptions, RunResult } from "@amber/core/kernel";
import { skillNames } from "../files/file_bounds.ts";
import { toolMatcher, toolsMatcher } from "../files/tool_patterns.ts";
import { subagentAnswer, subagentGate } from "./subagent_sessions.ts";

// Model names that mean "the session's model" rather than a model of the provider.
const SESSION_MODELS = new Set(["inherit", "sonnet", "opus", "haiku"]);

/** The sub-agent's own tool, which a sub-agent never has: its recursion would have no bound. */
const TASK_TOOL = "task";

/** The tools an agent may call, as resolved against the tools a session has. */
export interface AgentTools {
  /** Whether the agent may call the tool named so. */
  allows(name: string): boolean;
  /** The names the sub-agent's requests offer, in the session's order. */
  readonly names: readonly string[];
  /** The entries of the agent's `tools` that matched no tool of the session, as written. */
  readonly unknown: readonly string[];
}

/**
 * Resolves `agent`'s `tools` against the names of the session's tools. `task` is never among
 * them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentTools } from "./agent_runs.ts";
 * const session = ["read", "search", "bash", "task", "mcp__gh__issues"];
 * const tools = agentTools({ tools: ["Read", "Grep", "mcp__gh__*", "WebFetch"] }, session);
 * assert.deepEqual(tools.names, ["read", "search", "mcp__gh__issues"]);
 * assert.deepEqual(tools.unknown, ["WebFetch"]);
 * assert.equal(tools.allows("bash"), false);
 * assert.deepEqual(agentTools({}, session).names, ["read", "search", "bash", "mcp__gh__issues"]);
 * ```
 */
export function agentTools(
  agent: Pick<AgentDefinition, "tools">,
  sessionTools: readonly string[],
): AgentTools {
  const listed = agent.tools === undefined ? undefined : toolsMatcher(agent.tools);
  // Asked for every call: a tool that arrives mid-run (an MCP server's) is judged the same way.
  const allows = (name: string): boolean =>
    name !== TASK_TOOL && (listed === undefined || listed(name));
  const unknown = agent.tools === undefined
    ? []
    : agent.tools.filter((entry) => !sessionTools.some(toolMatcher(entry)));
  return { allows, names: sessionTools.filter(allows), unknown };
}

/**
 * The model an agent runs on: its own, unless it names none or one that means the session's
 * (`inherit`, Claude Code's `sonnet`, `opus`, `haiku`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentModel } from "./agent_runs.ts";
 * assert.equal(agentModel({ model: "small-model" }, "big-model"), "small-model");
 * assert.equal(agentModel({ model: "sonnet" }, "big-model"), "big-model");
 * assert.equal(agentModel({}, "big-model"), "big-model");
 * ```
 */
export function agentModel(agent: Pick<AgentDefinition, "model">, sessionModel: string): string {
  const model = agent.model?.trim();
  if (model === undefined || model === "" || SESSION_MODELS.has(model.toLowerCase())) {
    return sessionModel;
  }
  return model;
}

/**
 * The host gate of an agent's run: it blocks `task` (as every sub-agent's gate does) and every
 * tool outside the agent's, naming the agent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentGate, agentTools } from "./agent_runs.ts";
 * const gate = agentGate("reviewer", agentTools({ tools: ["read"] }, ["read", "bash"]));
 * const input = (name: string) => ({ call: { id: "1", name, arguments: "{}" }, args: {}, state: new Map() });
 * assert.equal(gate(input("read")).kind, "allow");
 * const outcome = gate(input("bash"));
 * assert.equal(outcome.kind === "block" && outcome.reason, "the agent 'reviewer' may not call bash; it may call: read");
 * ```
 */
export function agentGate(agent: string, tools: AgentTools): (input: GateInput) => GateOutcome {
  return ({ call }) => {
    if (call.name === TASK_TOOL) {
      return { kind: "block", reason: "a sub-agent cannot start another sub-agent" };
    }
    if (tools.allows(call.name)) return { kind: "allow" };
    const may = tools.names.length === 0 ? "no tool" : tools.names.join(", ");
    return {
      kind: "block",
      reason: `the agent '${agent}' may not call ${call.name}; it may call: ${may}`,
    };
  };
}

/**
 * `request` as an agent sends it: only the agent's tools; its system prompt in place of amber's
 * own (the `core_system` block), followed by the workspace root, or first when there is no such
 * block (an agent without one keeps amber's); the tool list block (`tool_docs`) cut to its tools; a skills list only when it may call
 * that list's `skill` tool. The other blocks (the project's instructions) stay.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentRequest, agentTools } from "./agent_runs.ts";
 * const tools = agentTools({ tools: ["read"] }, ["read", "bash"]);
 * const request = agentRequest({
 *   model: "m",
 *   messages: [
 *     { role: "system", content: "You are amber.", source: "core_system" },
 *     { role: "system", content: "Tools you can call:\n- read: Read.\n- bash: Run.", source: "tool_docs" },
 *     { role: "system", content: "Skills: ...", source: "files.skills.list" },
 *     { role: "user", content: "go" },
 *   ],
 *   tools: [
 *     { name: "read", description: "Read.", parameters: {} },
 *     { name: "bash", description: "Run.", parameters: {} },
 *   ],
 * }, { systemPrompt: "You review code.", tools }, "/work");
 * assert.deepEqual(request.tools.map((t) => t.name), ["read"]);
 * assert.deepEqual(request.messages.map((m) => m.content), [
 *   "You review code.\n\nWorkspace root: /work",
 *   "Tools you can call:\n- read: Read.",
 *   "go",
 * ]);
 * ```
 */
export function agentRequest(
  request: ChatRequest,
  agent: { readonly systemPrompt: string; readonly tools: AgentTools },
  workspace: string,
): ChatRequest {
  const own = agent.systemPrompt.trim();
  const system = `${own}\n\nWorkspace root: ${workspace}`;
  // An agent file without a body keeps amber's own prompt.
  let placed = own === "";
  const messages: Message[] = [];
  for (const message of request.messages) {
    if (message.role !== "system") {
      messages.push(message);
      continue;
    }
    if (message.source === "core_system" && own !== "") {
      messages.push({ role: "system", content: system, source: "agent_system" });
      placed = true;
    } else if (message.source === "tool_docs") {
      const docs = toolDocsOf(message.content, agent.tools);
      if (docs !== "") messages.push({ ...message, content: docs });
    } else if (offersSkills(message.source, agent.tools)) {
      messages.push(message);
    }
  }
  if (!placed) messages.unshift({ role: "system", content: system, source: "agent_system" });
  return {
    ...request,
    messages,
    tools: request.tools.filter((tool) => agent.tools.allows(tool.name)),
  };
}

// Whether a block stays: a skills plugin's list only for an agent that may load those skills.
function offersSkills(source: string | undefined, tools: AgentTools): boolean {
  const plugin = source === undefined
    ? undefined
    : /^(files\.skills[^.]*)\.list$/.exec(source)?.[1];
  return plugin === undefined || tools.allows(skillNames(plugin).tool);
}

// The tool list block without the lines of tools the agent may not call; empty without any.
function toolDocsOf(text: string, tools: AgentTools): string {
  const [head, ...lines] = text.split("\n");
  const kept = lines.filter((line) => {
    const name = /^- ([^:]+):/.exec(line)?.[1];
    return name === undefined || tools.allows(name);
  });
  return kept.length === 0 ? "" : [head, ...kept].join("\n");
}

/**
 * The model port of an agent's run: `port`, with each request made over by
 * {@linkcode agentRequest}.
 */
export function agentPort(
  port: ModelPort,
  agent: { readonly systemPrompt: string; readonly tools: AgentTools },
  workspace: string,
): ModelPort {
  return {
    stream: (request, sink, signal) =>
      port.stream(agentRequest(request, agent, workspace), sink, signal),
  };
}

/** What the session's runs take beyond their prompt, file, signal and budget. */
export type RunExtras =
  & Pick<RunOptions, "history" | "historyState" | "firstStep" | "onEvent" | "hostGate">
  & Partial<Pick<RunOptions, "model" | "modelName">>;

/** How a sub-agent runs: as amber's general one, or as a defined agent. */
export interface SubagentRun {
  /**
   * What its run takes: the host gate that blocks `task` (and, for an agent, every tool outside
   * its own); for an agent, its model name and the session's model port with each request made
   * over for the agent.
   */
  readonly options: {
    readonly modelName?: string;
    readonly model?: ModelPort;
    readonly hostGate: (input: GateInput) => GateOutcome;
  };
  /**
   * The sub-agent's answer from its run's result (throws when the run did not complete), with a
   * note after it when entries of the agent's `tools` matched no tool.
   */
  answer(result: RunResult): string;
}

/**
 * How a `task` sub-agent runs in a session on model `model` through `port`, over `host`'s
 * workspace and tools: as `agent`, or as amber's general sub-agent without one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { subagentRun } from "./agent_runs.ts";
 * const port = { stream: () => Promise.reject(new Error("not called")) };
 * const host = {
 *   workspace: "/w",
 *   registries: { tool: { list: () => [{ tool: { name: "read" } }, { tool: { name: "bash" } }] } },
 * };
 * const scout = { name: "scout", description: "d", systemPrompt: "Look.", tools: ["read", "WebFetch"], model: "small" };
 * const run = subagentRun(scout, "big", port, host);
 * assert.equal(run.options.modelName, "small");
 * assert.equal(subagentRun(undefined, "big", port, host).options.modelName, undefined);
 * const result = {
 *   cause: { kind: "completed" as const },
 *   steps: 1,
 *   messages: [{ role: "assistant" as const, content: "found" }],
 *   usage: { promptTokens: 0, completionTokens: 0 },
 *   compactions: 0,
 *   state: new Map(),
 * };
 * assert.equal(
 *   run.answer(result),
 *   "found\n\n(the agent 'scout' names tools this session does not have: WebFetch; it ran with: read)",
 * );
 * ```
 */
export function subagentRun(
  agent: AgentDefinition | undefined,
  model: string,
  port: ModelPort,
  host: {
    readonly workspace: string;
    readonly registries: {
      readonly tool: { list(): readonly { readonly tool: { readonly name: string } }[] };
    };
  },
): SubagentRun {
  if (agent === undefined) return { options: { hostGate: subagentGate }, answer: subagentAnswer };
  const names = host.registries.tool.list().map((entry) => entry.tool.name);
  const tools = agentTools(agent, names);
  const options = {
    modelName: agentModel(agent, model),
    model: agentPort(port, { systemPrompt: agent.systemPrompt, tools }, host.workspace),
    hostGate: agentGate(agent.name, tools),
  };
  if (tools.unknown.length === 0) return { options, answer: subagentAnswer };
  const ran = tools.names.length === 0 ? "no tools" : tools.names.join(", ");
  const note = `the agent '${agent.name}' names tools this session does not have: ` +
    `${tools.unknown.join(", ")}; it ran with: ${ran}`;
  return { options, answer: (result) => `${subagentAnswer(result)}\n\n(${note})` };
}
