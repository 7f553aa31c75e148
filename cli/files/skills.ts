/**
 * What a skills plugin (`files.skills`, `files.skills-claude`) contributes for the skills it
 * loaded (`skills/<name>/SKILL.md` and the files beside it):
 *
 * - a prompt block with each skill's name and description, and nothing more: a skill's
 *   instructions cost no tokens until the model asks for them;
 * - the `skill` tool (`skill_claude` for Claude Code's folders, see `file_bounds.ts`): given a
 *   name, it answers the skill's instructions and the list of its files; given a name and one of
 *   those files, the file's text. It reads only inside the skill's folder, so a skill kept
 *   outside the workspace (the config directory, `~/.claude`) is read without an approval
 *   prompt, and nothing else is;
 * - a tool gate, a state key and three hooks for `allowed-tools`: loading a skill that has them
 *   makes it the active skill, and while it is, a call to any other tool is blocked (the `skill`
 *   tool still reads that skill's files; loading another skill is blocked too, since that could
 *   widen the set). The list narrows, never widens: a skill without it narrows nothing. A skill
 *   stays active until the model's next reply without tool calls (the end of the turn), or at
 *   the latest until the user's next message (a turn that was cancelled); the step in which the
 *   latter is noticed still runs narrowed.
 *
 * Each sub-agent's run has a state of its own, so a skill a sub-agent loads narrows only it.
 *
 * @module
 */

import { join, relative, resolve, sep } from "node:path";
import type {
  Capability,
  GateCapability,
  GateOutcome,
  HookCapability,
  HookInput,
  HookReaction,
  Message,
  Tool,
  ToolResult,
} from "@amber/core";
import type { FilesContext, SkillFile } from "./definitions.ts";
import { type SkillNames, skillNames } from "./file_bounds.ts";
import { readTextPrefix, type TextPrefix } from "./text_prefix.ts";
import { toolsMatcher } from "./tool_patterns.ts";

/** Where the prompt block goes: after amber's own (100, 200) and the project's (300). */
export const SKILLS_PRIORITY = 350;

/** The most files a skill's listing names. */
export const MAX_LISTED_FILES = 200;

/** A skill file beyond this many characters is cut, with a note. */
export const MAX_FILE_CHARS = 100_000;

// How deep the listing goes into a skill's folder.
const MAX_DEPTH = 4;

/** The active skill, as the state store holds it. */
export interface ActiveSkill {
  /** The skill's name. */
  readonly name: string;
  /** Its `allowed-tools`; absent when it narrows nothing. */
  readonly allowedTools?: readonly string[];
  /** The length of the conversation when it was loaded: a user message after it ends it. */
  readonly since: number;
}

/**
 * The capabilities of skills plugin `context.pluginId` for `skills`: none without skills;
 * else the prompt block, the tool, and the gate, state key and hooks of `allowed-tools`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { skillCapabilities } from "./skills.ts";
 * const context = { pluginId: "files.skills", workspace: "/w", configDir: "/c" };
 * const skill = {
 *   name: "release",
 *   description: "Cut a release.",
 *   body: "1. Bump the version.",
 *   dir: "/w/.amber/skills/release",
 *   path: "/w/.amber/skills/release/SKILL.md",
 * };
 * const capabilities = skillCapabilities([skill], context);
 * assert.deepEqual(capabilities.map((c) => `${c.kind}:${c.name}`), [
 *   "prompt:files.skills.list",
 *   "tool:skill",
 *   "state:files.skills.active",
 *   "gate:files.skills.allowed_tools",
 *   "hook:files.skills.activate",
 *   "hook:files.skills.end",
 *   "hook:files.skills.expire",
 * ]);
 * const block = capabilities[0];
 * assert.equal(
 *   block.kind === "prompt" && block.render(),
 *   "Skills: instructions for particular tasks, loaded on demand. When a task matches a " +
 *     "skill's description, call `skill` with its name first and follow what it says.\n" +
 *     "- release: Cut a release.",
 * );
 * assert.deepEqual(skillCapabilities([], context), []);
 * ```
 */
export function skillCapabilities(
  skills: readonly SkillFile[],
  context: FilesContext,
): readonly Capability[] {
  if (skills.length === 0) return [];
  const names = skillNames(context.pluginId);
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  const block = skillsBlock(skills, names.tool);
  return [
    { kind: "prompt", name: names.block, priority: SKILLS_PRIORITY, render: () => block },
    { kind: "tool", name: names.tool, tools: [skillTool(names.tool, byName)] },
    { kind: "state", name: names.state, initial: null },
    allowedToolsGate(names),
    activateHook(names, byName),
    endHook(names),
    expireHook(names),
  ];
}

function skillsBlock(skills: readonly SkillFile[], tool: string): string {
  return [
    "Skills: instructions for particular tasks, loaded on demand. When a task matches a " +
    `skill's description, call \`${tool}\` with its name first and follow what it says.`,
    ...skills.map((skill) => `- ${skill.name}: ${skill.description.replace(/\s+/g, " ").trim()}`),
  ].join("\n");
}

interface SkillArgs {
  readonly name: string;
  readonly file?: string;
}

function skillTool(name: string, byName: ReadonlyMap<string, SkillFile>): Tool<SkillArgs> {
  return {
    name,
    description: "Load a skill listed under Skills in the system prompt: its instructions and " +
      "the list of the files beside them. Call it before doing a task a skill describes. With " +
      "`file`, it returns one of those files (a reference, a template, a script to read).",
    parameters: {
      type: "object",
      properties: {
        name: { type: "string", enum: [...byName.keys()], description: "The skill's name." },
        file: {
          type: "string",
          description: "One of the skill's files, as its listing names it; leave out to load " +
            "the skill's instructions.",
        },
      },
      required: ["name"],
      additionalProperties: false,
    },
    verb: "loading",
    readOnly: true,
    summarize: (args) => {
      const { name: skill, file } = (args ?? {}) as Partial<SkillArgs>;
      return file === undefined ? `skill ${String(skill)}` : `skill ${String(skill)}: ${file}`;
    },
    async execute({ name: wanted, file }): Promise<ToolResult> {
      const skill = byName.get(wanted);
      if (skill === undefined) {
        return failure(
          `there is no skill '${wanted}'; the skills: ${[...byName.keys()].join(", ")}`,
        );
      }
      return file === undefined ? await loaded(skill) : await skillFile(skill, file);
    },
  };
}

function failure(error: string): ToolResult {
  return { ok: false, output: "", error };
}

async function loaded(skill: SkillFile): Promise<ToolResult> {
  const files = await listFiles(skill.dir);
  const lines = [
    `Skill '${skill.name}' (folder ${skill.dir}):`,
    "",
    skill.body.trim(),
  ];
  if (skill.allowedTools !== undefined) {
    lines.push(
      "",
      `While this skill is active you may call only: ${skill.allowedTools.join(", ")}.`,
    );
  }
  if (files.names.length > 0) {
    lines.push(
      "",
      `Its files (read one with this tool's \`file\`${
        files.more ? `; the first ${MAX_LISTED_FILES} are listed` : ""
      }):`,
      ...files.names.map((name) => `- ${name}`),
    );
  }
  return { ok: true, output: lines.join("\n") };
}

// The files under a skill's folder but SKILL.md, as paths relative to it, in a stable order.
async function listFiles(dir: string): Promise<{ names: string[]; more: boolean }> {
  const names: string[] = [];
  let more = false;
  const walk = async (folder: string, depth: number): Promise<void> => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(folder));
    } catch {
      return;
    }
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    for (const entry of entries) {
      if (names.length >= MAX_LISTED_FILES) {
        more = true;
        return;
      }
      const path = join(folder, entry.name);
      if (entry.isFile || (entry.isSymlink && await isFile(path))) {
        const name = relative(dir, path);
        if (name !== "SKILL.md") names.push(name);
      } else if (entry.isDirectory && depth < MAX_DEPTH && !entry.name.startsWith(".")) {
        await walk(path, depth + 1);
      }
    }
  };
  await walk(dir, 0);
  return { names, more };
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

// One file of a skill, found only inside its folder once links are followed.
async function skillFile(skill: SkillFile, file: string): Promise<ToolResult> {
  const outside = failure(`'${file}' is not a file of the skill '${skill.name}'`);
  let root: string;
  let path: string;
  try {
    root = await Deno.realPath(skill.dir);
    path = await Deno.realPath(resolve(skill.dir, file));
  } catch {
    return outside;
  }
  if (!path.startsWith(root + sep) || !(await isFile(path))) return outside;
  let read: TextPrefix;
  try {
    read = await readTextPrefix(path, MAX_FILE_CHARS);
  } catch (error) {
    return failure(`cannot read ${file}: ${error instanceof Error ? error.message : error}`);
  }
  if (!read.cut) return { ok: true, output: read.text };
  return {
    ok: true,
    output: `${read.text}\n[${file} cut at ${MAX_FILE_CHARS} chars of ${read.bytes} bytes]`,
  };
}

function activeOf(state: ReadonlyMap<string, unknown>, key: string): ActiveSkill | undefined {
  const value = state.get(key);
  return typeof value === "object" && value !== null ? value as ActiveSkill : undefined;
}

function argsOf(text: string): Partial<SkillArgs> {
  try {
    const args = JSON.parse(text);
    return typeof args === "object" && args !== null ? args : {};
  } catch {
    return {};
  }
}

function allowedToolsGate(names: SkillNames): GateCapability {
  return {
    kind: "gate",
    name: names.gate,
    check({ call, state }): GateOutcome {
      const active = activeOf(state, names.state);
      if (active?.allowedTools === undefined) return { kind: "allow" };
      if (toolsMatcher(active.allowedTools)(call.name)) return { kind: "allow" };
      // Reading the active skill's own files is part of following it.
      if (call.name === names.tool && argsOf(call.arguments).name === active.name) {
        return { kind: "allow" };
      }
      return {
        kind: "block",
        reason: `the skill '${active.name}' is active and allows only: ${
          active.allowedTools.join(", ")
        } (until the end of the turn)`,
      };
    },
  };
}

function activateHook(names: SkillNames, byName: ReadonlyMap<string, SkillFile>): HookCapability {
  return {
    kind: "hook",
    name: names.activate,
    point: "AfterTool",
    run({ tool, transcript }): HookReaction {
      if (tool === undefined || tool.call.name !== names.tool || !tool.result.ok) return {};
      const args = argsOf(tool.call.arguments);
      const skill = args.file === undefined && typeof args.name === "string"
        ? byName.get(args.name)
        : undefined;
      if (skill === undefined) return {};
      const value: ActiveSkill = skill.allowedTools === undefined
        ? { name: skill.name, since: transcript.length }
        : { name: skill.name, allowedTools: skill.allowedTools, since: transcript.length };
      return { state: [{ op: "set", key: names.state, value }] };
    },
  };
}

// At the end of a step whose reply asked for no tool: the turn is over.
function endHook(names: SkillNames): HookCapability {
  return {
    kind: "hook",
    name: names.end,
    point: "StepEnd",
    run({ transcript, state }: HookInput): HookReaction {
      if (activeOf(state, names.state) === undefined) return {};
      const reply = lastOf(transcript, "assistant");
      if (reply?.role !== "assistant" || (reply.toolCalls?.length ?? 0) > 0) return {};
      return { state: [{ op: "delete", key: names.state }] };
    },
  };
}

// At the start of a step after a user message later than the skill: a turn that ended without
// a reply (cancelled, out of steps) left the skill behind.
function expireHook(names: SkillNames): HookCapability {
  return {
    kind: "hook",
    name: names.expire,
    point: "StepStart",
    run({ transcript, state }: HookInput): HookReaction {
      const active = activeOf(state, names.state);
      if (active === undefined) return {};
      const stale = active.since > transcript.length ||
        transcript.slice(active.since).some((message) => message.role === "user");
      return stale ? { state: [{ op: "delete", key: names.state }] } : {};
    },
  };
}

function lastOf(transcript: readonly Message[], role: Message["role"]): Message | undefined {
  for (let i = transcript.length - 1; i >= 0; i--) {
    if (transcript[i].role === role) return transcript[i];
  }
  return undefined;
}
