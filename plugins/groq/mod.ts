/**
 * The Groq provider: the `groq` preset, OpenAI-compatible, so presets only.
 *
 * @module
 */

import { exact, type Plugin } from "@amber/core";
import { providerPlugin } from "../_provider.ts";

/**
 * Creates the groq plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createGroqPlugin } from "@amber/plugins/groq";
 * const [provider] = createGroqPlugin().capabilities();
 * assert.ok(provider.kind === "provider");
 * assert.equal(provider.presets[0].baseUrl, "https://api.groq.com/openai/v1");
 * ```
 */
export function createGroqPlugin(): Plugin {
  return providerPlugin({
    id: "groq",
    name: "Groq",
    description: "Groq's OpenAI-compatible API.",
    bound: { presets: exact("groq") },
    capabilities: [{
      kind: "provider",
      name: "groq",
      flavor: "openai",
      presets: [{
        name: "groq",
        flavor: "openai",
        baseUrl: "https://api.groq.com/openai/v1",
        defaultModel: "openai/gpt-oss-120b",
        requiresKey: true,
        keyEnv: "GROQ_API_KEY",
        catalog: "groq",
      }],
    }],
  });
}
