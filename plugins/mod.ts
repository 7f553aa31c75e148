/**
 * `@amber/plugins`: the plugins amber ships, each also importable on its own
 * (`@amber/plugins/hello`, `@amber/plugins/metrics`, and one per provider: `/openai`,
 * `/anthropic`, `/gemini`, `/openrouter`, `/deepseek`, `/groq`, `/mistral`, `/moonshot`,
 * `/kilocode`, `/local`; and one per tool plugin: `/tool_read`, `/tool_write`, `/tool_edit`,
 * `/tool_search`, `/tool_bash`, `/tool_process`, `/tool_plan`, `/tool_task`; and `/prompts`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { makeBundledPlugins } from "@amber/plugins";
 * assert.ok(makeBundledPlugins().length > 0);
 * ```
 *
 * @module
 */

export { makeBundledPlugins } from "./bundled.ts";
export { createAnthropicPlugin } from "./anthropic/mod.ts";
export {
  createDeepseekPlugin,
  type DeepseekBalance,
  fetchDeepseekBalance,
} from "./deepseek/mod.ts";
export { createGeminiPlugin } from "./gemini/mod.ts";
export { createGroqPlugin } from "./groq/mod.ts";
export { createHelloPlugin, type HelloConfig } from "./hello/mod.ts";
export { createKilocodePlugin, fetchKilocodeBalance, kilocodeBalanceUrl } from "./kilocode/mod.ts";
export { createLocalPlugin } from "./local/mod.ts";
export { createMetricsPlugin, type MetricsCounts, type MetricsPlugin } from "./metrics/mod.ts";
export { createMistralPlugin } from "./mistral/mod.ts";
export { createMoonshotPlugin, fetchMoonshotBalance, moonshotCurrency } from "./moonshot/mod.ts";
export { createOpenaiPlugin } from "./openai/mod.ts";
export { createOpenrouterPlugin, fetchOpenrouterBalance } from "./openrouter/mod.ts";
export {
  createPromptsPlugin,
  firstSentence,
  type PromptsOptions,
  type PromptsPlugin,
} from "./prompts/mod.ts";
export {
  type ChildEnvironment,
  childEnvironment,
  type EnvPolicy,
  type GroupExit,
  type ProcessGroup,
  type ProcessGroupOptions,
  redactSecrets,
  startProcessGroup,
} from "./process_group.ts";
export { createToolBashPlugin } from "./tool_bash/mod.ts";
export { createToolEditPlugin } from "./tool_edit/mod.ts";
export { createToolPlanPlugin, renderTodos } from "./tool_plan/mod.ts";
export { createToolProcessPlugin } from "./tool_process/mod.ts";
export { createToolReadPlugin } from "./tool_read/mod.ts";
export {
  createToolSearchPlugin,
  IgnoreMatcher,
  parseGitignore,
  type ToolSearchOptions,
} from "./tool_search/mod.ts";
export { createToolTaskPlugin } from "./tool_task/mod.ts";
export { createToolWritePlugin } from "./tool_write/mod.ts";
