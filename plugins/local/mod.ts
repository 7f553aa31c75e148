/**
 * Local model servers: the `ollama`, `lmstudio` and `llamacpp` presets, each an
 * OpenAI-compatible server on loopback at its usual port. They need no key. Their default
 * models are only a starting point: `amber models --provider ollama` lists what the server has.
 *
 * @module
 */

import { exact, type Plugin, type Preset } from "@amber/core";
import { providerPlugin } from "../_provider.ts";

/**
 * Creates the local plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createLocalPlugin } from "@amber/plugins/local";
 * const [provider] = createLocalPlugin().capabilities();
 * assert.ok(provider.kind === "provider");
 * assert.deepEqual(provider.presets.map((p) => p.name), ["ollama", "lmstudio", "llamacpp"]);
 * ```
 */
export function createLocalPlugin(): Plugin {
  const local = (
    name: string,
    baseUrl: string,
    defaultModel: string,
    catalog?: string,
  ): Preset => ({
    name,
    flavor: "openai",
    baseUrl,
    defaultModel,
    requiresKey: false,
    ...(catalog === undefined ? {} : { catalog }),
  });
  return providerPlugin({
    id: "local",
    name: "Local servers",
    description: "Ollama, LM Studio and llama.cpp on this machine (OpenAI-compatible, no key).",
    bound: { presets: exact("ollama", "lmstudio", "llamacpp") },
    capabilities: [{
      kind: "provider",
      name: "local",
      flavor: "openai",
      presets: [
        local("ollama", "http://127.0.0.1:11434/v1", "qwen3-coder"),
        // LM Studio and llama.cpp answer with whichever model is loaded, whatever the name.
        // models.dev describes a few of LM Studio's own model ids.
        local("lmstudio", "http://127.0.0.1:1234/v1", "local-model", "lmstudio"),
        local("llamacpp", "http://127.0.0.1:8080/v1", "local-model"),
      ],
    }],
  });
}
