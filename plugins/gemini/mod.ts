/**
 * The Gemini provider: the `gemini` preset and the Gemini API's own protocol (the `gemini`
 * flavor).
 *
 * @module
 */

import { exact, type Plugin } from "@amber/core";
import { geminiDialect } from "@amber/providers/gemini";
import { providerPlugin } from "../_provider.ts";

/**
 * Creates the gemini plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createGeminiPlugin } from "@amber/plugins/gemini";
 * const [provider] = createGeminiPlugin().capabilities();
 * assert.ok(provider.kind === "provider");
 * assert.equal(provider.flavor, "gemini");
 * ```
 */
export function createGeminiPlugin(): Plugin {
  return providerPlugin({
    id: "gemini",
    name: "Gemini",
    description: "Google's Gemini API, with its own wire protocol.",
    bound: { presets: exact("gemini"), flavors: exact("gemini") },
    capabilities: [{
      kind: "provider",
      name: "gemini",
      flavor: "gemini",
      dialect: geminiDialect,
      presets: [{
        name: "gemini",
        flavor: "gemini",
        baseUrl: "https://generativelanguage.googleapis.com",
        defaultModel: "gemini-3.5-flash",
        requiresKey: true,
        keyEnv: "GEMINI_API_KEY",
      }],
    }],
  });
}
