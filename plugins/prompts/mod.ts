/**
 * The core prompt blocks: who the agent is, which tools it has, and the project's own
 * instructions from AGENTS.md (and CLAUDE.md, unless `compat: {claude: false}`). Each block's
 * text changes only when what it reports changes, so the server's prefix cache survives from
 * step to step.
 *
 * @module
 */

import { join } from "node:path";
import type { Plugin, PluginContext, PromptBlockCapability, ToolEntry } from "@amber/core";
import { exact, PluginCategory } from "@amber/core";

/** The file whose text becomes the `project_facts` block. */
export const PROJECT_FACTS_FILE = "AGENTS.md";
/**
 * Claude Code's file of project instructions, read beside AGENTS.md unless `config.yaml` says
 * `compat: {claude: false}`; the same text in both (one a link to the other) is given once.
 */
export const CLAUDE_FACTS_FILE = "CLAUDE.md";
/** AGENTS.md (or CLAUDE.md) beyond this many characters is cut, with a note. */
export const MAX_FACTS_CHARS = 40_000;

/** Options of {@linkcode createPromptsPlugin}. */
export interface PromptsOptions {
  /** The clock the date in `core_system` comes from; read once, at initialize. */
  readonly now?: () => Date;
}

/** The prompts plugin: a plugin plus a way to wait for a refresh `tick()` started. */
export interface PromptsPlugin extends Plugin {
  /** Settles once the AGENTS.md check the last `tick()` started (if any) is over. */
  settled(): Promise<void>;
}

/**
 * Creates the `prompts` plugin and its three blocks:
 *
 * - `core_system` (priority 100): who the agent is and how it works, with the workspace root and
 *   the date, both fixed at initialize so the text never changes within a session;
 * - `tool_docs` (200): one line per registered tool, its name and the first sentence of its
 *   description, rebuilt only when the tool list changes (the registry hands out a new array
 *   exactly then);
 * - `project_facts` (300): the workspace's AGENTS.md and CLAUDE.md, read at initialize; `tick()`
 *   checks their modification times in the background and re-reads them only when one changed.
 *   Empty (so left out) when there is neither.
 *
 * Every `render` returns cached text: no I/O, no clock.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPromptsPlugin } from "@amber/plugins/prompts";
 * const plugin = createPromptsPlugin();
 * assert.equal(plugin.id, "prompts");
 * assert.deepEqual(plugin.capabilities().map((c) => c.name), [
 *   "core_system",
 *   "tool_docs",
 *   "project_facts",
 * ]);
 * ```
 */
export function createPromptsPlugin(options: PromptsOptions = {}): PromptsPlugin {
  const now = options.now ?? (() => new Date());
  let context: PluginContext | undefined;
  let system = "";
  let facts = "";
  let factsStamp = "absent";
  let factsRoot = "";
  let checking: Promise<void> | undefined;
  let toolsSeen: readonly ToolEntry[] | undefined;
  let toolsText = "";

  // Reads the files if their stamp moved; never throws: an unreadable file reads as absent.
  async function refreshFacts(): Promise<void> {
    const root = factsRoot;
    // The switch is read live, so turning it off drops CLAUDE.md at the next check.
    const names = claudeOff(context)
      ? [PROJECT_FACTS_FILE]
      : [PROJECT_FACTS_FILE, CLAUDE_FACTS_FILE];
    const stamps = await Promise.all(names.map(async (name) => {
      try {
        const info = await Deno.stat(join(root, name));
        return info.isFile ? `${info.mtime?.getTime() ?? "?"}:${info.size}` : "absent";
      } catch {
        return "absent";
      }
    }));
    let stamp = names.map((name, i) => `${name}=${stamps[i]}`).join(";");
    if (stamp === factsStamp) return;
    const texts: { readonly name: string; readonly text: string }[] = [];
    for (const [i, name] of names.entries()) {
      if (stamps[i] === "absent") continue;
      try {
        const text = (await Deno.readTextFile(join(root, name))).trim();
        if (text !== "" && !texts.some((t) => t.text === text)) texts.push({ name, text });
      } catch {
        stamp = "unreadable";
      }
    }
    // A shutdown while the files were read leaves the plugin as shutdown left it.
    if (root !== factsRoot) return;
    factsStamp = stamp;
    facts = texts.map(({ name, text }) => factsBlock(name, text)).join("\n\n");
  }

  const blocks: PromptBlockCapability[] = [
    { kind: "prompt", name: "core_system", priority: 100, render: () => system },
    {
      kind: "prompt",
      name: "tool_docs",
      priority: 200,
      render(): string {
        const list = context?.tools.list();
        if (list === undefined) return "";
        if (list !== toolsSeen) {
          toolsSeen = list;
          toolsText = toolDocs(list);
        }
        return toolsText;
      },
    },
    { kind: "prompt", name: "project_facts", priority: 300, render: () => facts },
  ];

  return {
    id: "prompts",
    version: "0.1.0",
    name: "Prompts",
    description: "The core prompt blocks: the system prompt, the tool list and AGENTS.md.",
    category: PluginCategory.Other,
    bound: { prompts: exact("core_system", "tool_docs", "project_facts") },
    async initialize(ctx): Promise<boolean> {
      context = ctx;
      system = systemPrompt(ctx.workspace.root, now());
      factsRoot = ctx.workspace.root;
      factsStamp = "absent";
      facts = "";
      toolsSeen = undefined;
      await refreshFacts();
      return true;
    },
    shutdown() {
      context = undefined;
      factsRoot = "";
      facts = "";
      factsStamp = "absent";
      toolsSeen = undefined;
      toolsText = "";
    },
    tick(): void {
      // Never blocks: the check runs in the background, and only one at a time.
      if (checking !== undefined || factsRoot === "") return;
      checking = refreshFacts().finally(() => {
        checking = undefined;
      });
    },
    settled(): Promise<void> {
      return checking ?? Promise.resolve();
    },
    capabilities: () => blocks,
  };
}

function systemPrompt(root: string, date: Date): string {
  const day = `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}-${
    String(date.getDate()).padStart(2, "0")
  }`;
  return [
    "You are amber, a coding agent. You help the user with software engineering work in their " +
    "workspace, and you act through the tools listed below: read and search the code before " +
    "you change it, make the change, then check it (build, tests) when you can.",
    "",
    "- Be concise and direct. Report what you did and found; skip preamble and filler.",
    "- Paths are relative to the workspace root. Read a file before you edit it, keep changes " +
    "minimal, and follow the conventions the code already has.",
    "- Do what was asked, no more. When a request is ambiguous or an action is destructive or " +
    "hard to undo, ask first.",
    "- Never invent file contents, command output or results: look, or say you did not.",
    "",
    `Workspace root: ${root}`,
    `Today's date: ${day}`,
  ].join("\n");
}

function toolDocs(entries: readonly ToolEntry[]): string {
  if (entries.length === 0) return "";
  const lines = entries.map((entry) =>
    `- ${entry.tool.name}: ${firstSentence(entry.tool.description)}`
  );
  return ["Tools you can call:", ...lines].join("\n");
}

/**
 * The first sentence of a description: up to the first `.`, `!` or `?` that ends a sentence
 * (followed by a capital, a quote or the end), or the first line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { firstSentence } from "@amber/plugins/prompts";
 * const sentence = firstSentence("Read a file, e.g. a.ts. Lines are numbered.");
 * assert.equal(sentence, "Read a file, e.g. a.ts.");
 * ```
 */
export function firstSentence(text: string): string {
  const line = text.trim().split("\n")[0].trim();
  const match = /^(.+?[.!?])(?=\s+[A-Z`"'(]|$)/.exec(line);
  return match?.[1] ?? line;
}

function claudeOff(context: PluginContext | undefined): boolean {
  try {
    return context?.config().compat?.claude === false;
  } catch {
    // A context without a configuration (a bare test host) reads the default.
    return false;
  }
}

function factsBlock(name: string, body: string): string {
  const clipped = body.length > MAX_FACTS_CHARS
    ? `${
      body.slice(0, MAX_FACTS_CHARS)
    }\n[${name} cut at ${MAX_FACTS_CHARS} of ${body.length} chars]`
    : body;
  return `Project instructions (from ${name} in the workspace root; follow them):\n\n${clipped}`;
}
