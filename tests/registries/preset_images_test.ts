// A preset's `images`: whether its models take images. The registry keeps it on the entry (a
// preset without it has none), refuses one that is not a boolean, and the bundled presets of
// the APIs that take images say so.

import assert from "node:assert/strict";
import type { Preset } from "@amber/core";
import { createProviderRegistry } from "@amber/registries/providers";
import { makeBundledPlugins } from "@amber/plugins";
import { makeRuntime, namedDialect } from "../_helpers.ts";
import { contributionOf, errorOf, services } from "./_fixtures.ts";

function preset(name: string, extra: Partial<Preset> = {}): Preset {
  return {
    name,
    flavor: "openai",
    baseUrl: `https://${name}.example.com/v1`,
    defaultModel: "m",
    requiresKey: false,
    ...extra,
  };
}

Deno.test("a preset's images flag is kept on its entry; a non-boolean is refused", () => {
  const registry = createProviderRegistry({
    coreFlavors: { openai: () => namedDialect("openai") },
  });
  contributionOf(registry.install("p", {
    kind: "provider",
    name: "p",
    flavor: "openai",
    presets: [
      preset("seeing", { images: true }),
      preset("blind", { images: false }),
      preset("old"),
    ],
  }, services("p")));
  assert.equal(registry.preset("seeing")?.images, true);
  assert.equal(registry.preset("blind")?.images, false);
  assert.equal("images" in registry.preset("old")!, false);
  const error = errorOf(registry.install("q", {
    kind: "provider",
    name: "q",
    flavor: "openai",
    presets: [preset("odd", { images: "yes" as never })],
  }, services("q")));
  assert.match(error, /images that is not a boolean/);
});

Deno.test("the bundled presets say which APIs take images", async () => {
  const { runtime, registries } = makeRuntime();
  for (const plugin of makeBundledPlugins()) runtime.register(plugin);
  await runtime.start();
  const seeing = registries.provider.presets().filter((p) => p.images === true).map((p) => p.name);
  assert.deepEqual(seeing.toSorted(), [
    "anthropic",
    "gemini",
    "openai",
    "openai-responses",
    "openrouter",
  ]);
  await runtime.stop();
});
