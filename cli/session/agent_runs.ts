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
import type { ModelPort } from "@amber/core/kernel";
import { toolMatcher, toolsMatcher } from "../files/tool_patterns.ts";

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
    return { kind: "block", reason: `the agent '${agent}' may not call ${call.name}; it may call: ${may}` };
  };
}

/**
 * `request` as an agent sends it: only the agent's tools; its system prompt in place of amber's
 * own (the `core_system` block), followed by the workspace root, or first when there is no such
 * block; the tool list block (`tool_docs`) cut to its tools. The other blocks (the project's
 * instructions, skills) stay.
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
  const system = `${agent.systemPrompt.trim()}\n\nWorkspace root: ${workspace}`;
  let placed = false;
  const messages: Message[] = [];
  for (const message of request.messages) {
    if (message.role !== "system") {
      messages.push(message);
      continue;
    }
    if (message.source === "core_system") {
      messages.push({ role: "system", content: system, source: "agent_system" });
      placed = true;
    } else if (message.source === "tool_docs") {
      const docs = toolDocsOf(message.content, agent.tools);
      if (docs !== "") messages.push({ ...message, content: docs });
    } else {
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

/** What a sub-agent's run as a defined agent takes in place of the session's own. */
export interface AgentRun {
  /** The model name of its requests. */
  readonly modelName: string;
  /** The session's model port, its requests made over for the agent. */
  readonly model: ModelPort;
  /** The host gate: `task` and the tools outside the agent's are blocked. */
  readonly hostGate: (input: GateInput) => GateOutcome;
  /** Said after the answer when entries of the agent's `tools` matched no tool. */
  readonly note?: string;
}

/** The session's side of an agent's run: its model, model port, workspace and tools now. */
export interface AgentRunSession {
  /** The session's model. */
  readonly model: string;
  /** The session's model port. */
  readonly port: ModelPort;
  /** The workspace root. */
  readonly workspace: string;
  /** The names of the tools the session has. */
  readonly tools: readonly string[];
}

/**
 * How `agent` runs in `session`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentRun } from "./agent_runs.ts";
 * const port = { stream: () => Promise.reject(new Error("not called")) };
 * const run = agentRun(
 *   { name: "scout", description: "d", systemPrompt: "Look.", tools: ["read", "WebFetch"], model: "small" },
 *   { model: "big", port, workspace: "/w", tools: ["read", "bash"] },
 * );
 * assert.equal(run.modelName, "small");
 * assert.equal(run.note, "the agent 'scout' names tools this session does not have: WebFetch; it ran with: read");
 * ```
 */
export function agentRun(agent: AgentDefinition, session: AgentRunSession): AgentRun {
  const tools = agentTools(agent, session.tools);
  const run = {
    modelName: agentModel(agent, session.model),
    model: agentPort(session.port, { systemPrompt: agent.systemPrompt, tools }, session.workspace),
    hostGate: agentGate(agent.name, tools),
  };
  if (tools.unknown.length === 0) return run;
  const ran = tools.names.length === 0 ? "no tools" : tools.names.join(", ");
  return {
    ...run,
    note: `the agent '${agent.name}' names tools this session does not have: ` +
      `${tools.unknown.join(", ")}; it ran with: ${ran}`,
  };
}
