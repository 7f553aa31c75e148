import assert from "node:assert/strict";
import { AmberError, type Dialect, type Preset, type ProviderCapability } from "@amber/core";
import { createProviderRegistry, FlavorUnavailableError } from "@amber/registries/providers";
import { namedDialect } from "../_helpers.ts";
import { conflictOf, contributionOf, errorOf, services } from "./_fixtures.ts";

const openaiDialect = (): Dialect => namedDialect("openai");
const geminiDialect = (): Dialect => namedDialect("gemini");

function core() {
  return createProviderRegistry({ coreFlavors: { openai: openaiDialect } });
}

function preset(name: string, flavor = "openai", extra: Partial<Preset> = {}): Preset {
  return {
    name,
    flavor,
    baseUrl: `https://${name}.example.com/v1`,
    defaultModel: `${name}-model`,
    requiresKey: true,
    keyEnv: `${name.toUpperCase()}_API_KEY`,
    ...extra,
  };
}

function gateway(name: string, presets: Preset[] = [preset(name)]): ProviderCapability {
  return { kind: "provider", name, flavor: "openai", presets };
}

function gemini(): ProviderCapability {
  return {
    kind: "provider",
    name: "gemini",
    flavor: "gemini",
    dialect: geminiDialect,
    presets: [preset("gemini", "gemini")],
  };
}

Deno.test("provider_feed_follows_plugin_state", () => {
  const providers = core();
  assert.deepEqual(providers.presets(), []);
  const openrouter = contributionOf(
    providers.install("openrouter", gateway("openrouter"), services("openrouter")),
  );
  contributionOf(providers.install("gemini", gemini(), services("gemini")));
  assert.deepEqual(providers.presets().map((p) => [p.name, p.owner]), [
    ["openrouter", "openrouter"],
    ["gemini", "gemini"],
  ]);
  assert.equal(providers.preset("openrouter")?.baseUrl, "https://openrouter.example.com/v1");
  assert.equal(providers.preset("openrouter")?.keyEnv, "OPENROUTER_API_KEY");
  assert.deepEqual(providers.flavors(), [
    { flavor: "openai", owner: "core" },
    { flavor: "gemini", owner: "gemini" },
  ]);

  openrouter.remove();
  assert.equal(providers.preset("openrouter"), undefined);
  assert.deepEqual(providers.purge("gemini"), ["flavor:gemini", "gemini"]);
  assert.deepEqual(providers.presets(), []);
  assert.deepEqual(providers.flavors(), [{ flavor: "openai", owner: "core" }]);

  // Back on: the feed has it again, and the flavor resolves again.
  contributionOf(providers.install("gemini", gemini(), services("gemini")));
  assert.deepEqual(providers.presets().map((p) => p.name), ["gemini"]);
  assert.equal(providers.resolveFlavor("gemini").dialect, geminiDialect);
});

Deno.test("disabled_flavor_fails_loudly", () => {
  const providers = core();
  const handle = contributionOf(providers.install("gemini", gemini(), services("gemini")));
  const live = providers.resolveFlavor("gemini");
  assert.deepEqual(live, {
    requested: "gemini",
    flavor: "gemini",
    fellBack: false,
    owner: "gemini",
    dialect: geminiDialect,
  });
  handle.remove();
  assert.throws(() => providers.resolveFlavor("gemini"), (error: unknown) => {
    assert.ok(error instanceof FlavorUnavailableError);
    assert.ok(error instanceof AmberError);
    assert.equal(error.name, "FlavorUnavailableError");
    assert.equal(error.flavor, "gemini");
    assert.equal(error.owner, "gemini");
    assert.equal(
      error.message,
      "flavor 'gemini' belongs to plugin 'gemini', which is off; " +
        "turn it on with: amber plugins enable gemini",
    );
    return true;
  });
});

Deno.test("a claimed flavor fails loudly even before its plugin was ever on", () => {
  const providers = core();
  const before = providers.version;
  providers.claimFlavor("anthropic", "anthropic");
  assert.ok(providers.version > before, "a claim changes how a flavor resolves");
  assert.throws(
    () => providers.resolveFlavor("anthropic"),
    /flavor 'anthropic' belongs to plugin 'anthropic', which is off/,
  );
  contributionOf(providers.install("anthropic", {
    kind: "provider",
    name: "anthropic",
    flavor: "anthropic",
    dialect: () => namedDialect("anthropic"),
    presets: [],
  }, services("anthropic")));
  assert.equal(providers.resolveFlavor("anthropic").owner, "anthropic");
  assert.throws(() => providers.claimFlavor("", "x"), TypeError);
  assert.throws(() => providers.claimFlavor("x", ""), TypeError);
});

Deno.test("flavor_fallback_is_unknown_only", () => {
  const providers = core();
  contributionOf(providers.install("gemini", gemini(), services("gemini")));
  const unknown = providers.resolveFlavor("mystery");
  assert.equal(unknown.requested, "mystery");
  assert.equal(unknown.flavor, "openai");
  assert.equal(unknown.fellBack, true);
  assert.equal(unknown.owner, "core");
  assert.equal(unknown.dialect, openaiDialect);
  assert.equal(providers.resolveFlavor("openai").fellBack, false);
  assert.equal(providers.resolveFlavor("gemini").fellBack, false, "a live flavor never falls back");
  providers.purge("gemini");
  assert.throws(() => providers.resolveFlavor("gemini"), FlavorUnavailableError);
  assert.equal(providers.resolveFlavor("mystery").fellBack, true);
});

Deno.test("an unknown flavor with no openai to fall back to fails saying so", () => {
  const providers = createProviderRegistry({});
  assert.throws(
    () => providers.resolveFlavor("mystery"),
    /flavor 'mystery' is unknown and there is no 'openai' flavor to fall back to/,
  );
  assert.deepEqual(providers.flavors(), []);
});

Deno.test("switching off a presets-only provider never takes the shared protocol down", () => {
  const providers = core();
  const handle = contributionOf(
    providers.install("openrouter", gateway("openrouter"), services("openrouter")),
  );
  assert.deepEqual(handle.ids, ["openrouter"], "no flavor id: it brought no dialect");
  handle.remove();
  providers.purge("openrouter");
  const resolved = providers.resolveFlavor("openai");
  assert.equal(resolved.fellBack, false);
  assert.equal(resolved.owner, "core");
  assert.deepEqual(providers.flavors(), [{ flavor: "openai", owner: "core" }]);
});

Deno.test("core flavors are fixed: purge('core') removes nothing", () => {
  const providers = core();
  assert.deepEqual(providers.entries(), [{ id: "flavor:openai", owner: "core" }]);
  assert.deepEqual(providers.purge("core"), []);
  assert.equal(providers.resolveFlavor("openai").owner, "core");
  assert.throws(
    () => createProviderRegistry({ coreFlavors: { openai: "nope" as unknown as () => Dialect } }),
    /core flavor 'openai' has no dialect factory/,
  );
});

Deno.test("a preset name taken by another plugin fails naming both plugins", () => {
  const providers = core();
  contributionOf(providers.install("openrouter", gateway("openrouter"), services("openrouter")));
  const version = providers.version;
  const result = providers.install(
    "copycat",
    gateway("copycat", [preset("fresh"), preset("openrouter")]),
    services("copycat"),
  );
  assert.deepEqual(conflictOf(result), { id: "openrouter", owner: "openrouter" });
  const error = errorOf(result);
  assert.equal(
    error,
    "preset 'openrouter' of plugin 'copycat' is already provided by plugin 'openrouter'",
  );
  assert.equal(providers.version, version);
  assert.equal(providers.preset("fresh"), undefined, "a failed install adds nothing at all");
  assert.equal(providers.preset("openrouter")?.owner, "openrouter");
});

Deno.test("a flavor provided by core or another plugin fails naming both owners", () => {
  const providers = core();
  const withCore = providers.install("fake", {
    kind: "provider",
    name: "fake",
    flavor: "openai",
    dialect: openaiDialect,
    presets: [preset("fake")],
  }, services("fake"));
  assert.deepEqual(conflictOf(withCore), { id: "flavor:openai", owner: "core" });
  const openai = errorOf(withCore);
  assert.equal(
    openai,
    "provider 'fake' of plugin 'fake' brings flavor 'openai', which core already provides",
  );
  contributionOf(providers.install("gemini", gemini(), services("gemini")));
  const withPlugin = providers.install("gemini2", {
    ...gemini(),
    presets: [preset("gemini2", "gemini")],
  }, services("gemini2"));
  assert.deepEqual(conflictOf(withPlugin), { id: "flavor:gemini", owner: "gemini" });
  const other = errorOf(withPlugin);
  assert.equal(
    other,
    "provider 'gemini' of plugin 'gemini2' brings flavor 'gemini', which plugin 'gemini' " +
      "already provides",
  );
  assert.equal(providers.preset("gemini2"), undefined);
  assert.equal(providers.preset("fake"), undefined);
  assert.equal(providers.resolveFlavor("gemini").owner, "gemini");
});

Deno.test("a preset must speak its provider's flavor or a live one", () => {
  const providers = core();
  contributionOf(providers.install("gemini", gemini(), services("gemini")));
  // A gemini plugin may also offer an openai-compatible endpoint: openai is live.
  contributionOf(providers.install("mixed", {
    ...gemini(),
    name: "mixed",
    flavor: "gemini",
    dialect: undefined,
    presets: [preset("mixed-openai", "openai"), preset("mixed-gemini", "gemini")],
  }, services("mixed")));
  const error = errorOf(
    providers.install("odd", gateway("odd", [preset("odd", "klingon")]), services("odd")),
  );
  assert.equal(
    error,
    "preset 'odd' of provider 'odd' of plugin 'odd' speaks flavor 'klingon', which is neither " +
      "the provider's flavor 'openai' nor a flavor that exists",
  );
});

Deno.test("invalid provider capabilities fail naming the plugin, provider and preset", () => {
  const providers = core();
  const cases: Array<[unknown, RegExp]> = [
    [null, /^provider of plugin 'p' is not an object$/],
    [{ ...gateway("x"), kind: "tool" }, /provider 'x' of plugin 'p' has kind 'tool'/],
    [{ ...gateway("x"), flavor: "" }, /provider 'x' of plugin 'p' has flavor '', which is not/],
    [{ ...gateway("x"), dialect: "openai" }, /dialect that is not a factory function/],
    [{ ...gateway("x"), presets: undefined }, /provider 'x' of plugin 'p' has no presets list/],
    [gateway("x", [preset("a b")]), /has a preset named 'a b'; a preset name is letters/],
    [gateway("x", [preset("flavor:x")]), /has a preset named 'flavor:x'/],
    [
      gateway("x", [preset("y", "openai", { baseUrl: "not a url" })]),
      /preset 'y' of provider 'x' of plugin 'p' has baseUrl 'not a url', which is not an http\(s\) URL/,
    ],
    [
      gateway("x", [{ ...preset("y"), requiresKey: "yes" } as unknown as Preset]),
      /preset 'y' .* has a requiresKey that is not a boolean/,
    ],
    [
      gateway("x", [{ ...preset("y"), defaultModel: undefined } as unknown as Preset]),
      /preset 'y' .* has no defaultModel/,
    ],
    [gateway("x", [preset("y"), preset("y")]), /provider 'x' of plugin 'p' lists preset 'y' twice/],
  ];
  for (const [capability, pattern] of cases) {
    assert.match(
      errorOf(providers.install("p", capability as ProviderCapability, services("p"))),
      pattern,
    );
  }
  assert.deepEqual(providers.presets(), []);
  assert.deepEqual(providers.entries(), [{ id: "flavor:openai", owner: "core" }]);
});

Deno.test("a custom preset may leave its base URL for the user to fill in", () => {
  const providers = core();
  contributionOf(
    providers.install(
      "custom",
      gateway("custom", [preset("custom", "openai", { baseUrl: "", requiresKey: false })]),
      services("custom"),
    ),
  );
  assert.equal(providers.preset("custom")?.baseUrl, "");
});

Deno.test("entries, ids, version and idempotent remove", () => {
  const providers = core();
  const v0 = providers.version;
  const handle = contributionOf(providers.install("gemini", {
    ...gemini(),
    presets: [preset("gemini", "gemini"), preset("gemini-flash", "gemini")],
  }, services("gemini")));
  assert.equal(handle.kind, "provider");
  assert.equal(handle.name, "gemini");
  assert.deepEqual(handle.ids, ["flavor:gemini", "gemini", "gemini-flash"]);
  assert.ok(providers.version > v0);
  assert.deepEqual(providers.entries(), [
    { id: "flavor:openai", owner: "core" },
    { id: "flavor:gemini", owner: "gemini" },
    { id: "gemini", owner: "gemini" },
    { id: "gemini-flash", owner: "gemini" },
  ]);
  handle.remove();
  const v1 = providers.version;
  handle.remove();
  assert.equal(providers.version, v1);
  assert.deepEqual(providers.entries(), [{ id: "flavor:openai", owner: "core" }]);

  // A stale handle does not remove what a later install of the same names added.
  contributionOf(providers.install("gemini", gemini(), services("gemini")));
  handle.remove();
  assert.equal(providers.resolveFlavor("gemini").owner, "gemini");
  assert.equal(providers.preset("gemini")?.owner, "gemini");
});

Deno.test("preset entries are frozen copies stamped with their owner", () => {
  const providers = core();
  const source = preset("groq");
  contributionOf(providers.install("groq", gateway("groq", [source]), services("groq")));
  const entry = providers.preset("groq")!;
  assert.equal(entry.owner, "groq");
  assert.ok(Object.isFrozen(entry));
  assert.ok(Object.isFrozen(providers.presets()));
  assert.notEqual(entry, source);
  assert.equal(providers.preset("flavor:openai"), undefined, "a flavor id is not a preset");
});

Deno.test("1,000 provider plugins install and purge to nothing", () => {
  const providers = core();
  for (let p = 0; p < 1000; p++) {
    const owner = `p${p}`;
    providers.install(
      owner,
      gateway(owner, [preset(`${owner}-a`), preset(`${owner}-b`)]),
      services(owner),
    );
  }
  assert.equal(providers.presets().length, 2000);
  for (let p = 0; p < 1000; p++) providers.purge(`p${p}`);
  assert.equal(providers.presets().length, 0);
});
