/**
 * The Anthropic provider: the `anthropic` preset and the Messages protocol it speaks (the
 * `anthropic` flavor). Its quota windows come passively, from the unified rate-limit headers of
 * each response, which the kernel feeds to the allowance registry; there is nothing to poll.
 *
 * @module
 */

import { exact, type Plugin } from "@amber/core";
import { providerPlugin } from "../_provider.ts";

/**
 * Creates the anthropic plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createAnthropicPlugin } from "@amber/plugins/anthropic";
 * const [provider] = createAnthropicPlugin().capabilities();
 * assert.ok(provider.kind === "provider" && provider.dialect !== undefined);
 * // The Messages protocol is loaded when asked for, not with the plugin.
 * assert.equal((await provider.dialect()).flavor, "anthropic");
 * ```
 */
export function createAnthropicPlugin(): Plugin {
  return providerPlugin({
    id: "anthropic",
    name: "Anthropic",
    description: "Anthropic's Messages API (Claude), with its own wire protocol.",
    bound: { presets: exact("anthropic"), flavors: exact("anthropic") },
    capabilities: [{
      kind: "provider",
      name: "anthropic",
      flavor: "anthropic",
      // Loaded when a session speaks this flavor: amber starts without it.
      dialect: async () => (await import("@amber/providers/anthropic")).anthropicDialect(),
      presets: [{
        name: "anthropic",
        flavor: "anthropic",
        baseUrl: "https://api.anthropic.com",
        defaultModel: "claude-sonnet-4-6",
        requiresKey: true,
        keyEnv: "ANTHROPIC_API_KEY",
        catalog: "anthropic",
        images: true,
      }],
    }],
  });
}
