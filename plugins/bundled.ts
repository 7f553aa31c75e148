/**
 * The one list of plugins amber ships.
 *
 * @module
 */

import type { Plugin } from "@amber/core";
import { createAnthropicPlugin } from "./anthropic/mod.ts";
import { createDeepseekPlugin } from "./deepseek/mod.ts";
import { createGeminiPlugin } from "./gemini/mod.ts";
import { createGroqPlugin } from "./groq/mod.ts";
import { createHelloPlugin } from "./hello/mod.ts";
import { createKilocodePlugin } from "./kilocode/mod.ts";
import { createLocalPlugin } from "./local/mod.ts";
import { createMetricsPlugin } from "./metrics/mod.ts";
import { createMistralPlugin } from "./mistral/mod.ts";
import { createMoonshotPlugin } from "./moonshot/mod.ts";
import { createOpenaiPlugin } from "./openai/mod.ts";
import { createOpenrouterPlugin } from "./openrouter/mod.ts";
import { createPromptsPlugin } from "./prompts/mod.ts";
import { createToolBashPlugin } from "./tool_bash/mod.ts";
import { createToolEditPlugin } from "./tool_edit/mod.ts";
import { createToolPlanPlugin } from "./tool_plan/mod.ts";
import { createToolProcessPlugin } from "./tool_process/mod.ts";
import { createToolReadPlugin } from "./tool_read/mod.ts";
import { createToolSearchPlugin } from "./tool_search/mod.ts";
import { createToolTaskPlugin } from "./tool_task/mod.ts";
import { createToolWritePlugin } from "./tool_write/mod.ts";

/**
 * Fresh instances of every bundled plugin, in activation order: the worked example (off until
 * switched on, see `@amber/plugins/hello`), metrics, the provider plugins, the tool plugins and
 * the core prompt blocks. Every other one is on by default.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { makeBundledPlugins } from "@amber/plugins";
 * assert.deepEqual(makeBundledPlugins().map((plugin) => plugin.id), [
 *   "hello", "metrics", "openai", "anthropic", "gemini", "openrouter", "deepseek", "groq",
 *   "mistral", "moonshot", "kilocode", "local", "tool_read", "tool_write", "tool_edit",
 *   "tool_search", "tool_bash", "tool_process", "tool_plan", "tool_task", "prompts",
 * ]);
 * const off = makeBundledPlugins().filter((plugin) => plugin.enabledByDefault === false);
 * assert.deepEqual(off.map((plugin) => plugin.id), ["hello"]);
 * ```
 */
export function makeBundledPlugins(): Plugin[] {
  return [
    createHelloPlugin(),
    createMetricsPlugin(),
    createOpenaiPlugin(),
    createAnthropicPlugin(),
    createGeminiPlugin(),
    createOpenrouterPlugin(),
    createDeepseekPlugin(),
    createGroqPlugin(),
    createMistralPlugin(),
    createMoonshotPlugin(),
    createKilocodePlugin(),
    createLocalPlugin(),
    createToolReadPlugin(),
    createToolWritePlugin(),
    createToolEditPlugin(),
    createToolSearchPlugin(),
    createToolBashPlugin(),
    createToolProcessPlugin(),
    createToolPlanPlugin(),
    createToolTaskPlugin(),
    createPromptsPlugin(),
  ];
}
