/**
 * The names of what a skills or agents plugin contributes, and its capability bound, from the
 * plugin's id alone. Two plugins load skills (`files.skills` from amber's own folders,
 * `files.skills-claude` from Claude Code's), and both can be on: each contributes its own
 * `skill` tool (`skill`, `skill_claude`), prompt block, gate, state key and hooks, so neither's
 * names clash with the other's. This module is small and imports nothing heavy: the plugins are
 * made, bound included, at start-up, before the folders are read.
 *
 * @module
 */

import { type CapabilityBound, exact } from "@amber/core";

/** The names of a skills plugin's contributions. */
export interface SkillNames {
  /** The tool that loads a skill: `skill`, or `skill_<source>` (`skill_claude`). */
  readonly tool: string;
  /** The prompt block listing the skills' names and descriptions. */
  readonly block: string;
  /** The tool gate narrowing the tools while a skill with `allowed-tools` is active. */
  readonly gate: string;
  /** The state key holding the active skill. */
  readonly state: string;
  /** The hook that makes a loaded skill the active one (`AfterTool`). */
  readonly activate: string;
  /** The hooks that end it: at a reply without tool calls, and at the user's next message. */
  readonly end: string;
  /** See {@linkcode SkillNames.end}. */
  readonly expire: string;
}

/**
 * The names of the contributions of skills plugin `pluginId`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { skillNames } from "./file_bounds.ts";
 * assert.equal(skillNames("files.skills").tool, "skill");
 * assert.equal(skillNames("files.skills-claude").tool, "skill_claude");
 * assert.equal(skillNames("files.skills-claude").state, "files.skills-claude.active");
 * ```
 */
export function skillNames(pluginId: string): SkillNames {
  const source = pluginId.replace(/^files\.skills-?/, "").replace(/[^A-Za-z0-9_]/g, "_");
  return {
    tool: source === "" ? "skill" : `skill_${source}`,
    block: `${pluginId}.list`,
    gate: `${pluginId}.allowed_tools`,
    state: `${pluginId}.active`,
    activate: `${pluginId}.activate`,
    end: `${pluginId}.end`,
    expire: `${pluginId}.expire`,
  };
}

/**
 * The bound of skills plugin `pluginId`: exactly the names of {@linkcode skillNames}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { skillBound } from "./file_bounds.ts";
 * assert.deepEqual(skillBound("files.skills").tools, { kind: "exact", ids: ["skill"] });
 * ```
 */
export function skillBound(pluginId: string): CapabilityBound {
  const names = skillNames(pluginId);
  return {
    tools: exact(names.tool),
    prompts: exact(names.block),
    toolGates: exact(names.gate),
    stateKeys: exact(names.state),
    phaseHooks: ["StepStart", "AfterTool", "StepEnd"],
  };
}

/**
 * The bound of agents plugin `pluginId`: nothing. An agents plugin contributes its agents to the
 * host's agent catalog (`AgentCatalog`), which the `task` tool and `/agents` read, not to a
 * registry.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentBound } from "./file_bounds.ts";
 * assert.deepEqual(agentBound("files.agents"), {});
 * ```
 */
export function agentBound(_pluginId: string): CapabilityBound {
  return {};
}
