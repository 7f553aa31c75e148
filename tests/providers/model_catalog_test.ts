// The model catalog: the models.dev snapshot, the provider's listing and config.yaml, merged
// field by field, config last.

import assert from "node:assert/strict";
import type { ModelInfo, Preset } from "@amber/core";
import { makeBundledPlugins } from "@amber/plugins";
import {
  mergeModelInfo,
  modelCatalog,
  overrideInfo,
  resolveModelInfo,
  snapshotModels,
} from "@amber/providers/model-catalog";

const anthropic = { name: "anthropic", catalog: "anthropic", images: true };

Deno.test("the snapshot maps models.dev's limits, costs and abilities to ModelInfo", async () => {
  const models = await snapshotModels("anthropic");
  const sonnet = models.find((model) => model.id === "claude-3-7-sonnet-20250219");
  assert.deepEqual(sonnet, {
    id: "claude-3-7-sonnet-20250219",
    name: "Claude Sonnet 3.7",
    contextWindow: 200_000,
    maxOutput: 64_000,
    prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    abilities: { tools: true, reasoning: true, images: true },
    sources: ["snapshot"],
  });
  assert.deepEqual(models.map((model) => model.id), models.map((model) => model.id).sort());
  // Loaded once: the same answer, not a second import.
  assert.equal(await snapshotModels("anthropic"), await snapshotModels("anthropic"));
});

Deno.test("an id the snapshot does not have is an empty catalog, whatever it looks like", async () => {
  assert.deepEqual(await snapshotModels("no-such-provider"), []);
  assert.deepEqual(await snapshotModels("../../deno"), []);
  assert.deepEqual(await snapshotModels(""), []);
});

Deno.test("every bundled preset's catalog id names a provider the snapshot has", async () => {
  const presets: Preset[] = makeBundledPlugins().flatMap((plugin) =>
    plugin.capabilities().flatMap((capability) =>
      capability.kind === "provider" ? capability.presets : []
    )
  );
  const withCatalog = presets.filter((preset) => preset.catalog !== undefined);
  assert.deepEqual(
    withCatalog.map((preset) => `${preset.name}:${preset.catalog}`),
    [
      "openai:openai",
      "openai-responses:openai",
      "anthropic:anthropic",
      "gemini:google",
      "openrouter:openrouter",
      "deepseek:deepseek",
      "groq:groq",
      "mistral:mistral",
      "moonshot:moonshotai",
      "kilocode:openrouter",
      "lmstudio:lmstudio",
    ],
  );
  for (const preset of withCatalog) {
    const models = await snapshotModels(preset.catalog!);
    assert.ok(models.length > 0, `${preset.name}: the snapshot has no ${preset.catalog}`);
    assert.ok(models.every((model) => model.sources[0] === "snapshot"));
  }
});

Deno.test("mergeModelInfo: later layers win field by field; sources accumulate once each", () => {
  const merged = mergeModelInfo(
    {
      id: "m",
      name: "M",
      contextWindow: 100,
      maxOutput: 10,
      prices: { input: 1, output: 2, cacheRead: 0.1 },
      abilities: { tools: true, images: false },
      sources: ["snapshot"],
    },
    { id: "m", contextWindow: 200, abilities: { images: true }, sources: ["provider"] },
    undefined,
    { id: "m", prices: { output: 3 }, sources: ["config"] },
    { id: "m", sources: ["config"] },
  );
  assert.deepEqual(merged, {
    id: "m",
    name: "M",
    contextWindow: 200,
    maxOutput: 10,
    prices: { input: 1, output: 3, cacheRead: 0.1 },
    abilities: { tools: true, images: true },
    sources: ["snapshot", "provider", "config"],
  });
  assert.throws(() => mergeModelInfo(undefined), TypeError);
});

Deno.test("overrideInfo: config.yaml's names become the catalog's, only those given", () => {
  assert.deepEqual(
    overrideInfo("m", { contextWindow: 1000, maxOutput: 100, cacheRead: 0.5, cacheWrite: 2 }),
    {
      id: "m",
      contextWindow: 1000,
      maxOutput: 100,
      prices: { cacheRead: 0.5, cacheWrite: 2 },
      sources: ["config"],
    },
  );
  assert.deepEqual(overrideInfo("m", {}), { id: "m", sources: ["config"] });
});

Deno.test("modelCatalog: every model of every layer, config winning over the provider over the snapshot", async () => {
  const listed: ModelInfo[] = [
    { id: "claude-3-haiku-20240307", contextWindow: 190_000, sources: ["provider"] },
    { id: "claude-new", contextWindow: 500_000, sources: ["provider"] },
  ];
  const models = await modelCatalog(anthropic, {
    listed,
    overrides: { "claude-3-haiku-20240307": { input: 0.2 }, "my-proxy-model": { output: 1 } },
  });
  const byId = new Map(models.map((model) => [model.id, model]));
  const haiku = byId.get("claude-3-haiku-20240307");
  assert.equal(haiku?.contextWindow, 190_000);
  assert.deepEqual(haiku?.prices, { input: 0.2, output: 1.25, cacheRead: 0.03, cacheWrite: 0.3 });
  assert.deepEqual(haiku?.sources, ["snapshot", "provider", "config"]);
  assert.deepEqual(byId.get("claude-new")?.sources, ["provider"]);
  // The preset's word on images fills in where no layer says.
  assert.equal(byId.get("claude-new")?.abilities?.images, true);
  assert.deepEqual(byId.get("my-proxy-model")?.prices, { output: 1 });
  assert.ok(byId.has("claude-opus-4-1-20250805"), "the snapshot's models are all there");
  assert.deepEqual(await modelCatalog({ name: "ollama" }), []);
});

Deno.test("resolveModelInfo: snapshot then config, and no listing when the window is known", async () => {
  let listings = 0;
  const list = () => {
    listings++;
    return Promise.resolve([]);
  };
  const info = await resolveModelInfo(anthropic, "claude-3-haiku-20240307", {
    overrides: { "claude-3-haiku-20240307": { contextWindow: 100_000, output: 1 } },
    list,
  });
  assert.equal(info.contextWindow, 100_000);
  assert.deepEqual(info.prices, { input: 0.25, output: 1, cacheRead: 0.03, cacheWrite: 0.3 });
  assert.deepEqual(info.sources, ["snapshot", "config"]);
  assert.equal(listings, 0, "the snapshot knew the window: the provider is not asked");
});

Deno.test("resolveModelInfo asks a local server for the window, and config still wins", async () => {
  const ollama = { name: "ollama" };
  const listed: ModelInfo[] = [
    { id: "qwen3-coder", contextWindow: 262_144, maxOutput: 8192, sources: ["provider"] },
    { id: "llama3", contextWindow: 8192, sources: ["provider"] },
  ];
  const info = await resolveModelInfo(ollama, "qwen3-coder", {
    overrides: { "qwen3-coder": { contextWindow: 32_768 } },
    list: () => Promise.resolve(listed),
  });
  // The config gives the window: it stands. Where the config is silent on it, the server is asked.
  assert.equal(info.contextWindow, 32_768);
  const asked = await resolveModelInfo(ollama, "qwen3-coder", {
    overrides: { "qwen3-coder": { input: 0, output: 0 } },
    list: () => Promise.resolve(listed),
  });
  assert.deepEqual(asked, {
    id: "qwen3-coder",
    contextWindow: 262_144,
    maxOutput: 8192,
    prices: { input: 0, output: 0 },
    sources: ["provider", "config"],
  });
});

Deno.test("resolveModelInfo never throws: a failed listing or an unknown model is an empty info", async () => {
  const failed = await resolveModelInfo({ name: "ollama" }, "qwen3-coder", {
    list: () => Promise.reject(new Error("connection refused")),
  });
  assert.deepEqual(failed, { id: "qwen3-coder", sources: [] });
  const unknown = await resolveModelInfo({ name: "x", catalog: "no-such-provider" }, "m");
  assert.deepEqual(unknown, { id: "m", sources: [] });
  // Two listed models, neither the one asked for: nothing to lend.
  const other = await resolveModelInfo({ name: "ollama" }, "m", {
    list: () =>
      Promise.resolve([
        { id: "a", contextWindow: 1, sources: ["provider"] },
        { id: "b", contextWindow: 2, sources: ["provider"] },
      ]),
  });
  assert.deepEqual(other, { id: "m", sources: [] });
  // A model named as one of Object's members is not described by the config's plain object.
  const member = await resolveModelInfo({ name: "ollama" }, "constructor", { overrides: {} });
  assert.deepEqual(member, { id: "constructor", sources: [] });
  // A Gemini-style id finds the snapshot's model.
  const gemini = await resolveModelInfo(
    { name: "gemini", catalog: "google" },
    "models/gemini-2.5-pro",
  );
  assert.equal(gemini.contextWindow, 1_048_576);
});
