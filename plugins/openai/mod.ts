/**
 * The OpenAI provider: the `openai` preset, which speaks the shared Chat Completions protocol
 * (the `openai` flavor is the core's, so switching this plugin off never takes it down), and the
 * `openai-responses` preset with the Responses protocol, a flavor this plugin brings.
 *
 * @module
 */

import { exact, type Plugin } from "@amber/core";
import { providerPlugin } from "../_provider.ts";

const BASE_URL = "https://api.openai.com/v1";
const MODEL = "gpt-5.5";

/**
 * Creates the openai plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createOpenaiPlugin } from "@amber/plugins/openai";
 * const plugin = createOpenaiPlugin();
 * const presets = plugin.capabilities().flatMap((c) => c.kind === "provider" ? c.presets : []);
 * assert.deepEqual(presets.map((p) => `${p.name}:${p.flavor}`), [
 *   "openai:openai",
 *   "openai-responses:openai_responses",
 * ]);
 * ```
 */
export function createOpenaiPlugin(): Plugin {
  return providerPlugin({
    id: "openai",
    name: "OpenAI",
    description: "OpenAI: Chat Completions (openai) and the Responses API (openai-responses).",
    bound: { presets: exact("openai", "openai-responses"), flavors: exact("openai_responses") },
    capabilities: [
      {
        kind: "provider",
        name: "openai",
        // The shared protocol: no dialect here, the core owns it.
        flavor: "openai",
        presets: [{
          name: "openai",
          flavor: "openai",
          baseUrl: BASE_URL,
          defaultModel: MODEL,
          requiresKey: true,
          keyEnv: "OPENAI_API_KEY",
          images: true,
          catalog: "openai",
        }],
      },
      {
        kind: "provider",
        name: "openai_responses",
        flavor: "openai_responses",
        // Loaded when a session speaks this flavor: amber starts without it.
        dialect: async () =>
          (await import("@amber/providers/openai-responses")).openaiResponsesDialect(),
        presets: [{
          name: "openai-responses",
          flavor: "openai_responses",
          baseUrl: BASE_URL,
          defaultModel: MODEL,
          requiresKey: true,
          keyEnv: "OPENAI_API_KEY",
          images: true,
          catalog: "openai",
        }],
      },
    ],
  });
}
