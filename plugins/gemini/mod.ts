/**
 * The Gemini provider: the `gemini` preset and the Gemini API's own protocol (the `gemini`
 * flavor).
 *
 * @module
 */

import { exact, type Plugin } from "@amber/core";
import { providerPlugin } from "../_provider.ts";

/**
 * Creates the gemini plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createGeminiPlugin } from "@amber/plugins/gemini";
 * const [provider] = createGeminiPlugin().capabilities();
 * assert.ok(provider.kind === "provider" && provider.dialect !== undefined);
 * assert.equal(provider.flavor, "gemini");
 * assert.equal((await provider.dialect()).flavor, "gemini");
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
      // Loaded when a session speaks this flavor: amber starts without it.
      dialect: async () => (await import("@amber/providers/gemini")).geminiDialect(),
      presets: [{
        name: "gemini",
        flavor: "gemini",
        baseUrl: "https://generativelanguage.googleapis.com",
        defaultModel: "gemini-3.5-flash",
        requiresKey: true,
        keyEnv: "GEMINI_API_KEY",
        catalog: "google",
        images: true,
      }],
    }],
  });
}
