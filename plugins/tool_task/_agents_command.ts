// What `/agents` prints: one block per defined agent, in the order the task tool offers them.

import type { AgentDefinition } from "@amber/core";

/**
 * The text of `/agents` for `agents`, or for a host without sub-agents (`undefined`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentsListing } from "./_agents_command.ts";
 * assert.equal(
 *   agentsListing([{ name: "reviewer", description: "Reviews a diff.", systemPrompt: "x", tools: ["read"] }]),
 *   "1 agent (run one with the task tool's `agent`):\n\nreviewer: Reviews a diff.\n  tools: read; model: the session's",
 * );
 * ```
 */
export function agentsListing(agents: readonly AgentDefinition[] | undefined): string {
  if (agents === undefined) return "this host runs no sub-agents, so no agent can run here";
  if (agents.length === 0) {
    return "no agents are defined: add agents/<name>.md (frontmatter name, description, tools, " +
      "model; the body is its system prompt) to the config directory, the workspace's .amber/ " +
      "or .claude/";
  }
  const count = agents.length === 1 ? "1 agent" : `${agents.length} agents`;
  const blocks = agents.map((agent) => {
    const tools = agent.tools === undefined ? "every tool" : agent.tools.join(", ") || "none";
    const model = agent.model ?? "the session's";
    const lines = [
      `${agent.name}: ${agent.description.replace(/\s+/g, " ").trim()}`,
      `  tools: ${tools}; model: ${model}`,
    ];
    if (agent.path !== undefined) lines.push(`  file: ${agent.path}`);
    return lines.join("\n");
  });
  return [`${count} (run one with the task tool's \`agent\`):`, ...blocks].join("\n\n");
}
