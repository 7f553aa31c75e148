/**
 * The Mistral provider: the `mistral` preset, OpenAI-compatible, so presets only.
 *
 * @module
 */

import { exact, type Plugin } from "@amber/core";
import { providerPlugin } from "../_provider.ts";

/**
 * Creates the mistral plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMistralPlugin } from "@amber/plugins/mistral";
 * const [provider] = createMistralPlugin().capabilities();
 * assert.ok(provider.kind === "provider");
 * assert.equal(provider.presets[0].keyEnv, "MISTRAL_API_KEY");
 * ```
 */
export function createMistralPlugin(): Plugin {
  return providerPlugin({
    id: "mistral",
    name: "Mistral",
    description: "Mistral AI's OpenAI-compatible API.",
    bound: { presets: exact("mistral") },
    capabilities: [{
      kind: "provider",
      name: "mistral",
      flavor: "openai",
      presets: [{
        name: "mistral",
        flavor: "openai",
        baseUrl: "https://api.mistral.ai/v1",
        defaultModel: "mistral-large-latest",
        requiresKey: true,
        keyEnv: "MISTRAL_API_KEY",
        catalog: "mistral",
      }],
    }],
  });
}
