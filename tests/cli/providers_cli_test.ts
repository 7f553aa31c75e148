// End to end: `amber providers`, `amber models` and `amber wallet` as a user runs them, in a real
// subprocess with the permissions of `deno task amber`, against a fake provider on loopback
// started by the test.

import { deepStrictEqual, match, ok, strictEqual, throws } from "node:assert/strict";
import { exact, type Plugin } from "@amber/core";
import { openHost } from "@amber/cli";
import { makeBundledPlugins } from "@amber/plugins";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { FlavorUnavailableError } from "@amber/registries";
import {
  accountSettings,
  MissingKeyError,
  requireKey,
  resolveProvider,
  UnknownProviderError,
} from "../../cli/provider_settings.ts";
import { tempDir } from "../_helpers.ts";
import { type Result, runAmber } from "./_subprocess.ts";

// Every key variable a bundled preset reads, blanked so that the developer's own keys neither
// leak into a test nor change its outcome (an empty variable counts as not set).
const KEY_VARIABLES = [
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "GEMINI_API_KEY",
  "OPENROUTER_API_KEY",
  "DEEPSEEK_API_KEY",
  "GROQ_API_KEY",
  "MISTRAL_API_KEY",
  "MOONSHOT_API_KEY",
  "KILOCODE_API_KEY",
];

function amber(configDir: string, env: Record<string, string>, ...args: string[]): Promise<Result> {
  const blank = Object.fromEntries(KEY_VARIABLES.map((name) => [name, ""]));
  return runAmber(configDir, args, { env: { ...blank, ...env } });
}

function rows(text: string): string[][] {
  return text.split("\n").map((line) => line.split(/\s{2,}/));
}

/** A port on 127.0.0.1 that nothing listens on. */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

Deno.test("amber providers lists every preset with its key variable, set or not, never the key", async () => {
  await using tmp = await tempDir();
  const secret = "sk-or-v1-this-must-never-be-printed";
  const result = await amber(tmp.dir, { OPENROUTER_API_KEY: secret }, "providers");
  strictEqual(result.code, 0, result.err);
  ok(!result.out.includes(secret) && !result.err.includes(secret), "the key is never printed");
  const [presets, flavors, inUse] = result.out.split("\n\n");
  const table = rows(presets);
  deepStrictEqual(table[0], [
    "preset",
    "flavor",
    "plugin",
    "base URL",
    "default model",
    "key env",
    "key",
  ]);
  const byName = new Map(table.slice(1).map((row) => [row[0], row]));
  deepStrictEqual(
    [...byName.keys()],
    [
      "openai",
      "openai-responses",
      "anthropic",
      "gemini",
      "openrouter",
      "deepseek",
      "groq",
      "mistral",
      "moonshot",
      "kilocode",
      "ollama",
      "lmstudio",
      "llamacpp",
    ],
  );
  deepStrictEqual(byName.get("openrouter")?.slice(0, 4), [
    "openrouter",
    "openai",
    "openrouter",
    "https://openrouter.ai/api/v1",
  ]);
  deepStrictEqual(byName.get("openrouter")?.slice(5), ["OPENROUTER_API_KEY", "set"]);
  deepStrictEqual(byName.get("openai")?.slice(5), ["OPENAI_API_KEY", "not set"]);
  deepStrictEqual(byName.get("anthropic")?.slice(1, 3), ["anthropic", "anthropic"]);
  deepStrictEqual(byName.get("ollama")?.slice(3), [
    "http://127.0.0.1:11434/v1",
    "qwen3-coder",
    "-",
    "no key needed",
  ]);
  deepStrictEqual(rows(flavors), [
    ["flavor", "plugin"],
    ["openai", "core"],
    ["openai_responses", "openai"],
    ["anthropic", "anthropic"],
    ["gemini", "gemini"],
  ]);
  match(inUse, /^in use: openai, model \S+, https:\/\/api\.openai\.com\/v1$/);
});

Deno.test("amber providers follows config.yaml's provider, apiKeyEnv and plugin state", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(
    `${tmp.dir}/config.yaml`,
    "provider: deepseek\nmodel: deepseek-reasoner\napiKeyEnv: MY_DEEPSEEK_KEY\n",
  );
  const off = await amber(tmp.dir, {}, "plugins", "disable", "gemini");
  strictEqual(off.code, 0, off.err);
  const result = await amber(tmp.dir, { MY_DEEPSEEK_KEY: "sk-mine" }, "providers");
  strictEqual(result.code, 0, result.err);
  ok(!result.out.includes("sk-mine"));
  const [presets, flavors, inUse] = result.out.split("\n\n");
  const deepseek = rows(presets).find((row) => row[0] === "deepseek");
  deepStrictEqual(deepseek?.slice(5), ["MY_DEEPSEEK_KEY", "set"]);
  ok(!rows(presets).some((row) => row[0] === "gemini"), "an off plugin's preset is gone");
  deepStrictEqual(rows(flavors).at(-1), ["gemini", "gemini (disabled)"]);
  strictEqual(inUse, "in use: deepseek, model deepseek-reasoner, https://api.deepseek.com");

  const gemini = await amber(tmp.dir, {}, "models", "--provider", "gemini");
  strictEqual(gemini.code, 1);
  strictEqual(
    gemini.err,
    "amber: provider 'gemini' belongs to plugin 'gemini', which is off; " +
      "turn it on with: amber plugins enable gemini",
  );
});

Deno.test("amber models lists the models of the server at --base-url", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({
    encoders: [openaiEncoder],
    models: ["fake-coder", "fake-large"],
  });
  const result = await amber(
    tmp.dir,
    {},
    "models",
    "--provider",
    "openai",
    "--base-url",
    `${server.url}/v1`,
  );
  strictEqual(result.code, 0, result.err);
  // The server's models, then the model in use (the preset's default, which it does not list).
  deepStrictEqual(rows(result.out).slice(1).map((row) => row[0]), [
    "fake-coder",
    "fake-large",
    "gpt-5.5 (in use)",
  ]);
  const sent = server.requests.at(-1);
  strictEqual(sent?.method, "GET");
  strictEqual(sent?.path, "/v1/models");
  strictEqual(sent?.headers.authorization, undefined, "no empty credential header is sent");

  const keyed = await amber(
    tmp.dir,
    { OPENAI_API_KEY: "sk-test-models" },
    "models",
    "--base-url",
    `${server.url}/v1/`,
  );
  strictEqual(keyed.code, 0, keyed.err);
  strictEqual(server.requests.at(-1)?.headers.authorization, "Bearer sk-test-models");
  ok(!keyed.out.includes("sk-test-models") && !keyed.err.includes("sk-test-models"));
});

Deno.test("amber models against an unreachable URL exits 1 naming the URL", async () => {
  await using tmp = await tempDir();
  const base = `http://127.0.0.1:${closedPort()}/v1`;
  const result = await amber(
    tmp.dir,
    { OPENAI_API_KEY: "sk-unreachable" },
    "models",
    "--base-url",
    base,
  );
  strictEqual(result.code, 1);
  ok(result.err.startsWith("amber: "), result.err);
  ok(result.err.includes(`${base}/models`), result.err);
  ok(!result.err.includes("sk-unreachable"));
});

Deno.test("amber models and wallet: bad provider settings are clear errors", async () => {
  await using tmp = await tempDir();
  const unknown = await amber(tmp.dir, {}, "models", "--provider", "nope");
  strictEqual(unknown.code, 2);
  match(unknown.err, /^amber: unknown provider 'nope'; presets: openai, openai-responses, /);
  const badUrl = await amber(tmp.dir, {}, "wallet", "--base-url", "localhost:8080");
  strictEqual(badUrl.code, 1);
  strictEqual(badUrl.err, "amber: --base-url 'localhost:8080' is not an http(s) URL");
  const extra = await amber(tmp.dir, {}, "providers", "extra");
  strictEqual(extra.code, 2);
  strictEqual(extra.err, "amber: providers takes no arguments");
});

Deno.test("amber wallet prints the balance of config.yaml's provider, and `-` without a key", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [] });
  server.balances = { deepseek: { currency: "USD", total: "12.34" } };
  await Deno.writeTextFile(
    `${tmp.dir}/config.yaml`,
    `provider: deepseek\nbaseUrl: ${server.url}\n`,
  );
  const funded = await amber(tmp.dir, { DEEPSEEK_API_KEY: "sk-ds-secret" }, "wallet");
  strictEqual(funded.code, 0, funded.err);
  deepStrictEqual(funded.out.split("\n"), [
    `provider: deepseek (${server.url})`,
    "balance: $12.34",
    "windows: -",
  ]);
  strictEqual(server.requests.at(-1)?.path, "/user/balance");
  strictEqual(server.requests.at(-1)?.headers.authorization, "Bearer sk-ds-secret");
  ok(!funded.out.includes("sk-ds-secret") && !funded.err.includes("sk-ds-secret"));

  const before = server.requests.length;
  const keyless = await amber(tmp.dir, {}, "wallet");
  strictEqual(keyless.code, 0, keyless.err);
  match(keyless.out, /^balance: -$/m);
  match(keyless.out, /^windows: -$/m);
  strictEqual(keyless.err, "amber: DEEPSEEK_API_KEY is not set, so there is no account to read");
  strictEqual(server.requests.length, before, "no request without a key");

  server.balances = {};
  const failing = await amber(tmp.dir, { DEEPSEEK_API_KEY: "sk-ds-secret" }, "wallet");
  strictEqual(failing.code, 0, failing.err);
  match(failing.out, /^balance: -$/m, "a failed read shows `-`, never a made-up zero");
});

Deno.test("amber wallet for a provider without a wallet says `-`", async () => {
  await using tmp = await tempDir();
  const result = await amber(tmp.dir, {}, "wallet", "--provider", "ollama");
  strictEqual(result.code, 0, result.err);
  deepStrictEqual(result.out.split("\n"), [
    "provider: ollama (http://127.0.0.1:11434/v1)",
    "balance: -",
    "windows: -",
  ]);
  strictEqual(result.err, "");
});

Deno.test("amber status follows --provider and --model", async () => {
  await using tmp = await tempDir();
  const preset = await amber(tmp.dir, {}, "status", "--provider", "ollama", "--width", "80");
  strictEqual(preset.code, 0, preset.err);
  strictEqual(preset.out, "qwen3-coder");
  const model = await amber(tmp.dir, {}, "status", "--model", "my-model", "--width", "80");
  strictEqual(model.out, "my-model");
});

// In process: how provider settings resolve, over a real host.

Deno.test("resolveProvider: command line, then config.yaml, then the preset; keys from the env", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(
    `${tmp.dir}/config.yaml`,
    "provider: openrouter\nmodel: x/y\nbaseUrl: https://proxy.example/v1/\napiKeyEnv: MY_KEY\n",
  );
  const host = await openHost({ configDir: tmp.dir, plugins: makeBundledPlugins() });
  try {
    const env = (name: string) => ({ MY_KEY: " sk-mine ", OLLAMA_KEY: "" })[name];
    const configured = resolveProvider(host, {}, env);
    strictEqual(configured.preset.name, "openrouter");
    strictEqual(configured.flavor.flavor, "openai");
    deepStrictEqual(configured.settings, {
      baseUrl: "https://proxy.example/v1",
      apiKey: "sk-mine",
      images: true,
    });
    deepStrictEqual([configured.model, configured.keyEnv, configured.keySet], [
      "x/y",
      "MY_KEY",
      true,
    ]);
    strictEqual(requireKey(configured), "sk-mine");
    deepStrictEqual(accountSettings(configured), {
      provider: "openrouter",
      baseUrl: "https://proxy.example/v1",
      apiKey: "sk-mine",
    });

    const overridden = resolveProvider(host, { model: "z", baseUrl: "http://127.0.0.1:9/v1" }, env);
    deepStrictEqual([overridden.model, overridden.settings.baseUrl], [
      "z",
      "http://127.0.0.1:9/v1",
    ]);

    // config.yaml's model, base URL and key variable are openrouter's: another provider gets
    // its own preset's.
    const other = resolveProvider(host, { provider: "anthropic" }, env);
    deepStrictEqual(other.settings, { baseUrl: "https://api.anthropic.com", images: true });
    deepStrictEqual([other.keyEnv, other.keySet], ["ANTHROPIC_API_KEY", false]);
    strictEqual(other.model, other.preset.defaultModel);
    strictEqual(other.flavor.owner, "anthropic");
    throws(() => requireKey(other), (error: unknown) => {
      ok(error instanceof MissingKeyError);
      strictEqual(error.message, "set ANTHROPIC_API_KEY to use provider 'anthropic'");
      return true;
    });

    const local = resolveProvider(host, { provider: "ollama" }, env);
    deepStrictEqual([local.keyEnv, local.keySet, requireKey(local)], [undefined, false, undefined]);

    throws(() => resolveProvider(host, { provider: "nope" }, env), UnknownProviderError);
    throws(
      () => resolveProvider(host, { baseUrl: "ftp://x" }, env),
      /--base-url 'ftp:\/\/x' is not an http\(s\) URL/,
    );
  } finally {
    await host.close();
  }
});

Deno.test("resolveProvider: a preset speaking a switched-off plugin's flavor fails loudly", async () => {
  await using tmp = await tempDir();
  // A third-party gateway that speaks Anthropic's protocol, which the anthropic plugin brings.
  const gateway: Plugin = {
    id: "gateway",
    version: "1.0.0",
    name: "Gateway",
    requires: { anthropic: "*" },
    bound: { presets: exact("gateway") },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [{
      kind: "provider",
      name: "gateway",
      flavor: "anthropic",
      presets: [{
        name: "gateway",
        flavor: "anthropic",
        baseUrl: "https://gateway.example",
        defaultModel: "claude",
        requiresKey: false,
      }],
    }],
  };
  await Deno.writeTextFile(`${tmp.dir}/config.yaml`, "provider: gateway\n");
  const host = await openHost({ configDir: tmp.dir, plugins: [...makeBundledPlugins(), gateway] });
  try {
    strictEqual(resolveProvider(host, {}, () => undefined).flavor.owner, "anthropic");
    // A preset can outlive the flavor it speaks (the registry checks the flavor at install
    // only); resolving it then fails loudly instead of speaking openai to an Anthropic server.
    host.registries.provider.purge("anthropic");
    throws(() => resolveProvider(host, {}, () => undefined), (error: unknown) => {
      ok(error instanceof FlavorUnavailableError, String(error));
      strictEqual(
        error.message,
        "flavor 'anthropic' belongs to plugin 'anthropic', which is off; " +
          "turn it on with: amber plugins enable anthropic",
      );
      return true;
    });
  } finally {
    await host.close();
  }
});

Deno.test("the host's status snapshot shows the wallet only where one exists, the allowance once known", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(`${tmp.dir}/config.yaml`, "provider: anthropic\n");
  const host = await openHost({ configDir: tmp.dir, plugins: makeBundledPlugins() });
  try {
    const before = host.snapshot();
    deepStrictEqual([before.wallet, before.allowance], ["", ""]);
    const resolved = resolveProvider(host, {});
    host.registries.allowance.record(accountSettings(resolved), {
      windows: [{ label: "5h", percentUsed: 42 }],
    });
    strictEqual(host.snapshot().allowance, "5h 42%");
    deepStrictEqual(host.snapshot({ provider: "deepseek" }).wallet, "-");
    strictEqual(
      host.snapshot({ provider: "nope" }).wallet,
      "",
      "an unusable provider shows nothing",
    );
  } finally {
    await host.close();
  }
});
