// The `task` tool over a sub-agent service and the defined agents as they stood when it was
// built: the plugin builds it again when they change (see mod.ts).

import type { AgentDefinition, JsonSchema, SubagentService, Tool, ToolResult } from "@amber/core";
import { defineTool } from "@amber/core";
import { describeError, toolError } from "../_workspace.ts";

const PARAMETERS = {
  type: "object",
  properties: {
    prompt: {
      type: "string",
      minLength: 1,
      description: "The complete instructions for the sub-agent.",
    },
    description: {
      type: "string",
      description: "A short title for the task (3-6 words), shown to the user.",
    },
    agent: {
      type: "string",
      description: "The defined agent to run the task as.",
    },
  },
  required: ["prompt"],
  additionalProperties: false,
} as const;

const GENERAL = "Delegate a self-contained task to a sub-agent with the same tools and a fresh " +
  "context, and get back its final answer. Use it for broad searches and investigations " +
  "whose details you do not need to keep. The sub-agent sees only your prompt: include " +
  "every fact, path and constraint it needs, and say exactly what its answer must contain.";

/**
 * The `task` tool: with `agents`, its `agent` parameter takes one of their names (an enum) and
 * its description lists each with what it is for; without, the parameter is not offered.
 */
export function taskTool(
  subagents: SubagentService,
  agents: readonly AgentDefinition[],
): Tool {
  const byName = new Map(agents.map((agent) => [agent.name, agent]));
  const tool = defineTool({
    name: "task",
    description: agents.length === 0 ? GENERAL : `${GENERAL}\n\n${agentList(agents)}`,
    parameters: PARAMETERS,
    verb: "delegating",
    summarize({ prompt, description, agent }) {
      const who = agent ? `${String(agent)}: ` : "";
      if (description) return `task: ${who}${String(description)}`;
      const text = String(prompt ?? "").split("\n")[0];
      return `task: ${who}${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
    },
    async execute({ prompt, agent: name }, context): Promise<ToolResult> {
      const agent = name === undefined ? undefined : byName.get(name);
      if (name !== undefined && agent === undefined) {
        const known = [...byName.keys()];
        return toolError(
          `there is no agent named '${name}'; ${
            known.length === 0 ? "none is defined" : `the agents are: ${known.join(", ")}`
          }`,
        );
      }
      if (context.signal.aborted) return toolError("cancelled before the sub-agent started");
      try {
        const options = agent === undefined
          ? { signal: context.signal }
          : { signal: context.signal, agent };
        const answer = await subagents.run(prompt, options);
        if (context.signal.aborted) return toolError("cancelled: the sub-agent was stopped");
        return { ok: true, output: answer === "" ? "(the sub-agent gave no answer)" : answer };
      } catch (error) {
        if (context.signal.aborted) return toolError("cancelled: the sub-agent was stopped");
        return toolError(`the sub-agent failed: ${describeError(error)}`);
      }
    },
  });
  if (agents.length === 0) return { ...tool, parameters: withoutAgent() };
  return { ...tool, parameters: withAgents(agents) };
}

function agentList(agents: readonly AgentDefinition[]): string {
  const lines = agents.map((agent) => `- ${agent.name}: ${oneLine(agent.description)}`);
  return [
    "Defined agents (set `agent` to run the task as one; each has its own instructions and " +
    "tools; leave it out for a general sub-agent):",
    ...lines,
  ].join("\n");
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function withoutAgent(): JsonSchema {
  const { agent: _agent, ...properties } = PARAMETERS.properties;
  return { ...PARAMETERS, properties };
}

function withAgents(agents: readonly AgentDefinition[]): JsonSchema {
  return {
    ...PARAMETERS,
    properties: {
      ...PARAMETERS.properties,
      agent: { ...PARAMETERS.properties.agent, enum: agents.map((agent) => agent.name) },
    },
  };
}
