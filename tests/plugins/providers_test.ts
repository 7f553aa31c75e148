// The bundled provider plugins: each activates inside its bound through a real runtime, its
// presets and flavors resolve, switching one off makes its flavor fail loudly, and every wallet
// reads its account endpoint from a real loopback server.

import { deepStrictEqual, equal, ok, strictEqual, throws } from "node:assert/strict";
import {
  type AccountRequest,
  type Plugin,
  PluginRuntime,
  type Registries,
  type WalletCapability,
} from "@amber/core";
import {
  createAnthropicPlugin,
  createDeepseekPlugin,
  createGeminiPlugin,
  createGroqPlugin,
  createKilocodePlugin,
  createLocalPlugin,
  createMistralPlugin,
  createMoonshotPlugin,
  createOpenaiPlugin,
  createOpenrouterPlugin,
  fetchDeepseekBalance,
  fetchKilocodeBalance,
  fetchMoonshotBalance,
  fetchOpenrouterBalance,
  kilocodeBalanceUrl,
  makeBundledPlugins,
  moonshotCurrency,
} from "@amber/plugins";
import { anthropicDialect } from "@amber/providers/anthropic";
import { openaiDialect } from "@amber/providers/openai";
import { FakeProvider } from "@amber/providers/testing";
import { createRegistries, FlavorUnavailableError } from "@amber/registries";

const PROVIDER_PLUGINS: readonly (() => Plugin)[] = [
  createOpenaiPlugin,
  createAnthropicPlugin,
  createGeminiPlugin,
  createOpenrouterPlugin,
  createDeepseekPlugin,
  createGroqPlugin,
  createMistralPlugin,
  createMoonshotPlugin,
  createKilocodePlugin,
  createLocalPlugin,
];

const PRESETS: { readonly [plugin: string]: readonly string[] } = {
  openai: ["openai", "openai-responses"],
  anthropic: ["anthropic"],
  gemini: ["gemini"],
  openrouter: ["openrouter"],
  deepseek: ["deepseek"],
  groq: ["groq"],
  mistral: ["mistral"],
  moonshot: ["moonshot"],
  kilocode: ["kilocode"],
  local: ["ollama", "lmstudio", "llamacpp"],
};

async function startAll(
  plugins: readonly Plugin[] = PROVIDER_PLUGINS.map((create) => create()),
): Promise<{ runtime: PluginRuntime; registries: Registries }> {
  const registries = createRegistries({ coreFlavors: { openai: openaiDialect } });
  const runtime = new PluginRuntime({ registries });
  for (const plugin of plugins) runtime.register(plugin);
  // What the host does: a flavor in an exact bound belongs to its plugin even while it is off.
  for (const plugin of plugins) {
    const flavors = plugin.bound?.flavors;
    if (flavors?.kind === "exact") {
      for (const flavor of flavors.ids) registries.provider.claimFlavor(flavor, plugin.id);
    }
  }
  await runtime.start();
  return { runtime, registries };
}

function request(baseUrl: string, apiKey?: string, signal?: AbortSignal): AccountRequest {
  return {
    provider: "p",
    baseUrl,
    ...(apiKey === undefined ? {} : { apiKey }),
    signal: signal ?? new AbortController().signal,
  };
}

/** A loopback server that answers every request with `status` and `body`. */
function answering(status: number, body: string): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(body, { status, headers: { "content-type": "application/json" } }),
  );
}

Deno.test("the bundled list has hello, metrics and every provider plugin once", () => {
  const ids = makeBundledPlugins().map((plugin) => plugin.id);
  strictEqual(new Set(ids).size, ids.length, `no plugin twice: ${ids}`);
  deepStrictEqual(ids.slice(0, 2), ["hello", "metrics"]);
  deepStrictEqual(ids.filter((id) => id in PRESETS), Object.keys(PRESETS));
  for (const create of PROVIDER_PLUGINS) strictEqual(create().category, "provider");
});

Deno.test("every provider plugin activates within its bound and contributes exactly it", async () => {
  const { runtime, registries } = await startAll();
  for (const create of PROVIDER_PLUGINS) {
    const plugin = create();
    const info = runtime.info(plugin.id);
    strictEqual(info.state.status, "active", `${plugin.id}: ${JSON.stringify(info.state)}`);
    // The bound lists exactly what was contributed: nothing outside it (the runtime checks),
    // and nothing declared but missing.
    const contributed = (kind: string, axis: (id: string) => boolean) =>
      info.contributions.filter((c) => c.kind === kind).flatMap((c) => c.ids).filter(axis)
        .map((id) => id.replace(/^flavor:/, "")).sort();
    const declared = (axis: "presets" | "flavors" | "wallets") => {
      const bound = plugin.bound?.[axis];
      ok(bound === undefined || bound.kind === "exact", `${plugin.id} ${axis} is exact`);
      return [...(bound?.kind === "exact" ? bound.ids : [])].sort();
    };
    deepStrictEqual(
      contributed("provider", (id) => !id.startsWith("flavor:")),
      declared("presets"),
    );
    deepStrictEqual(contributed("provider", (id) => id.startsWith("flavor:")), declared("flavors"));
    deepStrictEqual(contributed("wallet", () => true), declared("wallets"));
    deepStrictEqual(declared("presets"), [...PRESETS[plugin.id]].sort());
    for (const name of PRESETS[plugin.id]) {
      const preset = registries.provider.preset(name);
      ok(preset !== undefined, name);
      strictEqual(preset.owner, plugin.id);
      ok(/^https?:\/\//.test(preset.baseUrl), `${name}: ${preset.baseUrl}`);
      ok(preset.defaultModel.length > 0, `${name} has a default model`);
      // Only the local servers go without a key, and a key always has a variable to come from.
      strictEqual(preset.requiresKey, plugin.id !== "local", name);
      strictEqual(preset.keyEnv !== undefined, preset.requiresKey, name);
    }
  }
  deepStrictEqual(
    registries.provider.flavors().map((f) => `${f.flavor}:${f.owner}`),
    ["openai:core", "openai_responses:openai", "anthropic:anthropic", "gemini:gemini"],
  );
  deepStrictEqual(
    registries.wallet.entries().map((e) => `${e.id}:${e.owner}`),
    ["openrouter:openrouter", "deepseek:deepseek", "moonshot:moonshot", "kilocode:kilocode"],
  );
  await runtime.stop();
});

Deno.test("the presets carry the documented endpoints and key variables", async () => {
  const { runtime, registries } = await startAll();
  const rows = registries.provider.presets().map((p) =>
    `${p.name} ${p.flavor} ${p.baseUrl} ${p.keyEnv ?? "-"}`
  );
  deepStrictEqual(rows, [
    "openai openai https://api.openai.com/v1 OPENAI_API_KEY",
    "openai-responses openai_responses https://api.openai.com/v1 OPENAI_API_KEY",
    "anthropic anthropic https://api.anthropic.com ANTHROPIC_API_KEY",
    "gemini gemini https://generativelanguage.googleapis.com GEMINI_API_KEY",
    "openrouter openai https://openrouter.ai/api/v1 OPENROUTER_API_KEY",
    "deepseek openai https://api.deepseek.com DEEPSEEK_API_KEY",
    "groq openai https://api.groq.com/openai/v1 GROQ_API_KEY",
    "mistral openai https://api.mistral.ai/v1 MISTRAL_API_KEY",
    "moonshot openai https://api.moonshot.ai/v1 MOONSHOT_API_KEY",
    "kilocode openai https://api.kilo.ai/api/openrouter KILOCODE_API_KEY",
    "ollama openai http://127.0.0.1:11434/v1 -",
    "lmstudio openai http://127.0.0.1:1234/v1 -",
    "llamacpp openai http://127.0.0.1:8080/v1 -",
  ]);
  await runtime.stop();
});

Deno.test("each flavor resolves to its plugin's dialect; OpenAI-compatible presets bring none", async () => {
  const { runtime, registries } = await startAll();
  const providers = registries.provider;
  for (const flavor of ["anthropic", "gemini", "openai_responses"]) {
    const resolved = providers.resolveFlavor(flavor);
    strictEqual(resolved.fellBack, false);
    strictEqual((await resolved.dialect()).flavor, flavor);
  }
  strictEqual(providers.resolveFlavor("openai").owner, "core");
  strictEqual((await providers.resolveFlavor("openai").dialect()).flavor, "openai");
  for (const create of [createOpenrouterPlugin, createGroqPlugin, createLocalPlugin]) {
    for (const capability of create().capabilities()) {
      if (capability.kind === "provider") strictEqual(capability.dialect, undefined);
    }
  }
  await runtime.stop();
});

Deno.test("a switched-off plugin's flavor fails loudly; an unknown flavor falls back to openai", async () => {
  const { runtime, registries } = await startAll();
  const providers = registries.provider;
  await runtime.setState("anthropic", false);
  await runtime.setState("gemini", false);
  await runtime.setState("openai", false);
  for (
    const [flavor, owner] of [
      ["anthropic", "anthropic"],
      ["gemini", "gemini"],
      ["openai_responses", "openai"],
    ]
  ) {
    throws(() => providers.resolveFlavor(flavor), (error: unknown) => {
      ok(error instanceof FlavorUnavailableError, String(error));
      strictEqual(error.owner, owner);
      strictEqual(
        error.message,
        `flavor '${flavor}' belongs to plugin '${owner}', which is off; ` +
          `turn it on with: amber plugins enable ${owner}`,
      );
      return true;
    });
  }
  strictEqual(providers.preset("anthropic"), undefined);
  // The shared protocol is the core's: switching the openai plugin off leaves it.
  strictEqual(providers.resolveFlavor("openai").owner, "core");
  const unknown = providers.resolveFlavor("mystery");
  deepStrictEqual([unknown.flavor, unknown.fellBack, unknown.owner], ["openai", true, "core"]);
  // The OpenAI-compatible presets keep working.
  strictEqual(providers.preset("openrouter")?.flavor, "openai");
  await runtime.setState("gemini", true);
  strictEqual(providers.resolveFlavor("gemini").owner, "gemini");
  await runtime.stop();
});

Deno.test("a flavor claimed before its plugin ever ran fails loudly too", async () => {
  // The host claims before it starts: a plugin that is off from the first run still owns it.
  const registries = createRegistries({ coreFlavors: { openai: openaiDialect } });
  const runtime = new PluginRuntime({ registries });
  const gemini = createGeminiPlugin();
  runtime.register({ ...gemini, enabledByDefault: false });
  registries.provider.claimFlavor("gemini", "gemini");
  await runtime.start();
  throws(() => registries.provider.resolveFlavor("gemini"), FlavorUnavailableError);
  await runtime.stop();
});

Deno.test("openrouter: the key's remaining limit; an unlimited key has no balance", async () => {
  await using server = await FakeProvider.start({ encoders: [] });
  const base = `${server.url}/api/v1`;
  server.balances = { openrouter: { limitRemaining: 12.34, usage: 3 } };
  strictEqual(await fetchOpenrouterBalance(request(base, "sk-or")), 12.34);
  strictEqual(await fetchOpenrouterBalance(request(`${base}/`, "sk-or")), 12.34);
  strictEqual(server.requests.at(-1)?.path, "/api/v1/key");
  strictEqual(server.requests.at(-1)?.headers.authorization, "Bearer sk-or");
  server.balances = { openrouter: { limitRemaining: 0, usage: 10 } };
  strictEqual(await fetchOpenrouterBalance(request(base, "sk-or")), 0, "a real zero is zero");
  server.balances = { openrouter: { limitRemaining: null, usage: 3 } };
  strictEqual(await fetchOpenrouterBalance(request(base, "sk-or")), undefined);
});

Deno.test("deepseek: the amount string is parsed and its currency kept", async () => {
  await using server = await FakeProvider.start({ encoders: [] });
  server.balances = { deepseek: { currency: "CNY", total: "110.00" } };
  deepStrictEqual(await fetchDeepseekBalance(request(server.url, "sk-ds")), {
    amount: 110,
    currency: "CNY",
  });
  strictEqual(server.requests.at(-1)?.path, "/user/balance");
  server.balances = { deepseek: { currency: "USD", total: "0.50" } };
  deepStrictEqual(await fetchDeepseekBalance(request(server.url, "sk-ds")), {
    amount: 0.5,
    currency: "USD",
  });
  server.balances = { deepseek: { currency: "USD", total: "" } };
  strictEqual(await fetchDeepseekBalance(request(server.url, "sk-ds")), undefined);
  server.balances = { deepseek: { currency: "USD", total: "lots" } };
  strictEqual(await fetchDeepseekBalance(request(server.url, "sk-ds")), undefined);
  server.balances = { deepseek: { currency: "", total: "1.00" } };
  strictEqual(await fetchDeepseekBalance(request(server.url, "sk-ds")), undefined);
});

Deno.test("moonshot: the available balance, in the platform's currency", async () => {
  await using server = await FakeProvider.start({ encoders: [] });
  server.balances = { moonshot: { available: 12.34 } };
  strictEqual(await fetchMoonshotBalance(request(`${server.url}/v1`, "sk-ms")), 12.34);
  strictEqual(server.requests.at(-1)?.path, "/v1/users/me/balance");
  strictEqual(moonshotCurrency("https://api.moonshot.cn/v1"), "CNY");
  strictEqual(moonshotCurrency("https://api.moonshot.ai/v1"), "USD");
  strictEqual(moonshotCurrency("not a url"), "USD");
});

Deno.test("kilocode: the balance lives at the gateway origin's /api/profile/balance", async () => {
  await using server = await FakeProvider.start({ encoders: [] });
  server.balances = { kilocode: { balance: 12.34 } };
  strictEqual(await fetchKilocodeBalance(request(`${server.url}/api/openrouter`, "kc")), 12.34);
  strictEqual(server.requests.at(-1)?.path, "/api/profile/balance");
  strictEqual(
    kilocodeBalanceUrl("https://api.kilo.ai/api/openrouter"),
    "https://api.kilo.ai/api/profile/balance",
  );
  strictEqual(kilocodeBalanceUrl("ftp://api.kilo.ai/x"), undefined);
  strictEqual(await fetchKilocodeBalance(request("not a url", "kc")), undefined);
});

const FETCHES: readonly [string, (r: AccountRequest) => Promise<unknown>, string][] = [
  ["openrouter", fetchOpenrouterBalance, "/api/v1"],
  ["deepseek", fetchDeepseekBalance, ""],
  ["moonshot", fetchMoonshotBalance, "/v1"],
  ["kilocode", fetchKilocodeBalance, "/api/openrouter"],
];

Deno.test("no key: no request is sent and nothing is claimed", async () => {
  await using server = await FakeProvider.start({ encoders: [] });
  server.balances = {
    openrouter: { limitRemaining: 1, usage: 0 },
    deepseek: { currency: "USD", total: "1.00" },
    moonshot: { available: 1 },
    kilocode: { balance: 1 },
  };
  for (const [name, fetch, path] of FETCHES) {
    strictEqual(await fetch(request(`${server.url}${path}`)), undefined, name);
    strictEqual(await fetch(request(`${server.url}${path}`, "  ")), undefined, name);
  }
  strictEqual(server.requests.length, 0);
});

Deno.test("404, 500, garbage, a wrong shape, an abort: undefined, never a made-up zero", async () => {
  await using fake = await FakeProvider.start({ encoders: [] });
  const servers = [
    answering(500, '{"error":{"message":"boom"}}'),
    answering(200, "<html>not json</html>"),
    answering(200, '{"data":{"limit_remaining":"12"},"balance_infos":[],"balance":"1"}'),
    answering(200, "null"),
  ];
  try {
    for (const [name, fetch, path] of FETCHES) {
      // The fake answers 404 for a balance it was not given.
      strictEqual(await fetch(request(`${fake.url}${path}`, "k")), undefined, `${name} 404`);
      for (const server of servers) {
        const url = `http://127.0.0.1:${server.addr.port}${path}`;
        strictEqual(await fetch(request(url, "k")), undefined, `${name} at ${url}`);
      }
      const aborted = new AbortController();
      aborted.abort();
      fake.balances = {
        openrouter: { limitRemaining: 1, usage: 0 },
        deepseek: { currency: "USD", total: "1.00" },
        moonshot: { available: 1 },
        kilocode: { balance: 1 },
      };
      strictEqual(
        await fetch(request(`${fake.url}${path}`, "k", aborted.signal)),
        undefined,
        `${name} aborted`,
      );
      fake.balances = {};
    }
  } finally {
    await Promise.all(servers.map((server) => server.shutdown()));
  }
});

Deno.test("through the wallet registry: `$12.34`, `¥110.00`, and `-` without a key", async () => {
  await using server = await FakeProvider.start({ encoders: [] });
  server.balances = {
    openrouter: { limitRemaining: 12.34, usage: 0 },
    deepseek: { currency: "CNY", total: "110.00" },
    moonshot: { available: 7 },
    kilocode: { balance: 12.34 },
  };
  const { runtime, registries } = await startAll();
  const wallet = registries.wallet;
  const cases: [string, string, string][] = [
    ["openrouter", `${server.url}/api/v1`, "$12.34"],
    ["deepseek", server.url, "¥110.00"],
    ["moonshot", `${server.url}/v1`, "$7.00"],
    ["kilocode", `${server.url}/api/openrouter`, "$12.34"],
  ];
  for (const [provider, baseUrl, expected] of cases) {
    const settings = { provider, baseUrl, apiKey: "sk-test" };
    await wallet.refresh(settings);
    strictEqual(wallet.readout(settings), expected, provider);
    const keyless = { provider, baseUrl };
    await wallet.refresh(keyless);
    strictEqual(wallet.readout(keyless), "-", `${provider} without a key`);
  }
  server.balances = { deepseek: { currency: "USD", total: "3.20" } };
  const usd = { provider: "deepseek", baseUrl: server.url, apiKey: "sk-usd" };
  await wallet.refresh(usd);
  strictEqual(wallet.readout(usd), "$3.20", "the currency follows the balance read");
  server.balances = {};
  await wallet.refresh(usd);
  strictEqual(wallet.readout(usd), "-", "a failed read shows nothing, not the old amount");
  await runtime.stop();
});

Deno.test("the deepseek wallet's currency is the one of its last successful read", async () => {
  await using server = await FakeProvider.start({ encoders: [] });
  const wallet = createDeepseekPlugin().capabilities().find((c) => c.kind === "wallet") as
    | WalletCapability
    | undefined;
  ok(wallet !== undefined);
  server.balances = { deepseek: { currency: "usd", total: "5" } };
  strictEqual(await wallet.fetch(request(server.url, "k")), 5);
  strictEqual(wallet.currency, "USD");
  server.balances = {};
  strictEqual(await wallet.fetch(request(server.url, "k")), undefined);
  strictEqual(wallet.currency, "USD", "a failed read changes nothing");
});

Deno.test("Anthropic's unified headers reach the allowance bar without an allowance capability", async () => {
  const { runtime, registries } = await startAll();
  const settings = { provider: "anthropic", baseUrl: "https://api.anthropic.com", apiKey: "sk-a" };
  equal(registries.allowance.entries().length, 0);
  const headers = new Headers({
    "anthropic-ratelimit-unified-5h-utilization": "0.42",
    "anthropic-ratelimit-unified-5h-reset": "1767225600",
    "anthropic-ratelimit-unified-7d-utilization": "0.1",
  });
  registries.allowance.record(settings, anthropicDialect().allowanceFromHeaders?.(headers));
  strictEqual(registries.allowance.readout(settings), "5h 42%");
  strictEqual(registries.allowance.readout({ ...settings, apiKey: "other" }), "-");
  await runtime.stop();
});
