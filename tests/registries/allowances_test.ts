import assert from "node:assert/strict";
import type { AllowanceCapability, AllowanceSnapshot } from "@amber/core";
import { createAllowanceRegistry } from "@amber/registries/allowances";
import {
  conflictOf,
  contributionOf,
  ControlledFetch,
  errorOf,
  services,
  settle,
} from "./_fixtures.ts";

function fixed(provider: string, value: unknown): AllowanceCapability {
  return {
    kind: "allowance",
    name: "usage",
    provider,
    fetch: () => Promise.resolve(value as AllowanceSnapshot | undefined),
  };
}

/** An allowance whose every fetch waits until the test settles it. */
class ControlledAllowance extends ControlledFetch<AllowanceSnapshot> {
  capability(provider: string): AllowanceCapability {
    return { kind: "allowance", name: "usage", provider, fetch: this.fetch };
  }
}

const go = { provider: "opencode_go", baseUrl: "https://opencode.ai/zen/go/v1", apiKey: "go-key" };

async function readoutOf(value: unknown): Promise<string> {
  const allowances = createAllowanceRegistry();
  contributionOf(allowances.install("opencode_go", fixed("opencode_go", value), services("x")));
  await allowances.refresh(go);
  const text = allowances.readout(go);
  allowances.dispose();
  return text;
}

Deno.test("the readout is the most used window, rounded", async () => {
  assert.equal(
    await readoutOf({
      plan: "go",
      windows: [
        { label: "monthly", percentUsed: 10 },
        { label: "5h", percentUsed: 41.6, resetsAt: "2026-11-30T09:00:00Z" },
        { label: "7d", percentUsed: 30 },
      ],
    }),
    "5h 42%",
  );
  assert.equal(await readoutOf({ windows: [{ label: "7d", percentUsed: 99.5 }] }), "7d 100%");
  assert.equal(await readoutOf({ windows: [{ label: "5h", percentUsed: 0 }] }), "5h 0%");
  assert.equal(await readoutOf({ windows: [{ label: "5h", percentUsed: 112 }] }), "5h 112%");
});

Deno.test("equally used windows go to the shortest label", async () => {
  assert.equal(
    await readoutOf({
      windows: [
        { label: "weekly", percentUsed: 50 },
        { label: "5h", percentUsed: 50 },
        { label: "monthly", percentUsed: 50 },
      ],
    }),
    "5h 50%",
  );
  assert.equal(
    await readoutOf({
      windows: [{ label: "7d", percentUsed: 50 }, { label: "5h", percentUsed: 50 }],
    }),
    "7d 50%",
    "a complete tie keeps the first listed",
  );
});

Deno.test("windows with no known percentage are not candidates", async () => {
  assert.equal(
    await readoutOf({
      windows: [
        { label: "monthly", remaining: 100, entitlement: 500 },
        { label: "5h", percentUsed: 12 },
      ],
    }),
    "5h 12%",
  );
  assert.equal(await readoutOf({ windows: [{ label: "monthly", remaining: 100 }] }), "-");
  assert.equal(await readoutOf({ windows: [] }), "-");
  assert.equal(
    await readoutOf({
      windows: [
        { label: "a", percentUsed: Number.NaN },
        { label: "b", percentUsed: -5 },
        { label: "c", percentUsed: "80" },
        { label: "d", percentUsed: Infinity },
        { label: "", percentUsed: 90 },
        { percentUsed: 95 },
        null,
        { label: "7d", percentUsed: 3 },
      ],
    }),
    "7d 3%",
    "invalid percentages and unlabelled windows are ignored",
  );
});

Deno.test("nothing honest to report reads as '-'", async () => {
  assert.equal(await readoutOf(undefined), "-");
  assert.equal(await readoutOf(null), "-");
  assert.equal(await readoutOf("5h 40%"), "-");
  assert.equal(await readoutOf({ windows: "5h" }), "-");
  assert.equal(await readoutOf({}), "-");
  const allowances = createAllowanceRegistry();
  allowances.install("p", {
    kind: "allowance",
    name: "usage",
    provider: "opencode_go",
    fetch: () => Promise.reject(new Error("HTTP 401")),
  }, services("p"));
  await allowances.refresh(go);
  assert.equal(allowances.readout(go), "-");
  assert.equal(allowances.snapshot(go), undefined);
  allowances.dispose();
  const throwing = createAllowanceRegistry();
  throwing.install("p", {
    kind: "allowance",
    name: "usage",
    provider: "opencode_go",
    fetch: () => {
      throw new Error("synchronous");
    },
  }, services("p"));
  await throwing.refresh(go);
  assert.equal(throwing.readout(go), "-");
  throwing.dispose();
});

Deno.test("snapshot() returns the checked snapshot for exactly these settings", async () => {
  const allowances = createAllowanceRegistry();
  allowances.install(
    "opencode_go",
    fixed("opencode_go", {
      plan: "Go",
      windows: [
        { label: "5h", percentUsed: 20, resetsAt: "2026-11-30T09:00:00Z", junk: true },
        { label: "monthly", percentUsed: -1, remaining: 4, entitlement: 10 },
      ],
      creditsBalance: 3.5,
      unit: "requests",
      currency: "USD",
      extra: "dropped",
    }),
    services("opencode_go"),
  );
  await allowances.refresh(go);
  assert.deepEqual(allowances.snapshot(go), {
    plan: "Go",
    windows: [
      { label: "5h", percentUsed: 20, resetsAt: "2026-11-30T09:00:00Z" },
      { label: "monthly", remaining: 4, entitlement: 10 },
    ],
    creditsBalance: 3.5,
    unit: "requests",
    currency: "USD",
  });
  assert.ok(Object.isFrozen(allowances.snapshot(go)));
  assert.equal(allowances.snapshot({ ...go, apiKey: "other" }), undefined);
  assert.equal(allowances.snapshot({ ...go, baseUrl: "https://other" }), undefined);
  assert.equal(allowances.snapshot({ ...go, provider: "commandcode" }), undefined);
  allowances.dispose();
});

Deno.test("a result fetched for a previous provider or key is never shown", async () => {
  const allowances = createAllowanceRegistry();
  const usage = new ControlledAllowance();
  allowances.install("opencode_go", usage.capability("opencode_go"), services("opencode_go"));
  allowances.install("commandcode", fixed("commandcode", undefined), services("commandcode"));
  const polled = allowances.refresh(go);
  await settle();
  // The user switched provider while the poll was in flight.
  const commandcode = { provider: "commandcode", baseUrl: "https://commandcode.ai", apiKey: "k" };
  usage.resolve({ windows: [{ label: "5h", percentUsed: 70 }] });
  await polled;
  assert.equal(allowances.readout(commandcode), "-");
  assert.equal(allowances.readout(go), "5h 70%");
  assert.equal(allowances.readout({ ...go, apiKey: "rotated" }), "-");
  assert.equal(allowances.readout({ ...go, apiKey: undefined }), "-");
  allowances.dispose();
});

Deno.test("one poll in flight per provider; dispose aborts it and drops its result", async () => {
  const allowances = createAllowanceRegistry();
  const usage = new ControlledAllowance();
  allowances.install("opencode_go", usage.capability("opencode_go"), services("opencode_go"));
  const first = allowances.refresh(go);
  assert.equal(allowances.refresh(go), first);
  await settle();
  assert.equal(usage.requests.length, 1);
  assert.equal(usage.requests[0].apiKey, "go-key");
  allowances.dispose();
  assert.equal(usage.requests[0].signal.aborted, true);
  await first;
  usage.resolve({ windows: [{ label: "5h", percentUsed: 1 }] });
  await settle();
  assert.equal(allowances.readout(go), "-");
  await allowances.refresh(go);
  assert.equal(usage.requests.length, 1, "no poll after dispose");
});

Deno.test("a second allowance for the same provider fails naming both plugins", () => {
  const allowances = createAllowanceRegistry();
  contributionOf(allowances.install("opencode_go", fixed("opencode_go", {}), services("a")));
  const result = allowances.install("other", fixed("opencode_go", {}), services("other"));
  assert.deepEqual(conflictOf(result), { id: "opencode_go", owner: "opencode_go" });
  const error = errorOf(result);
  assert.equal(
    error,
    "allowance 'usage' of plugin 'other' reads provider 'opencode_go', which already has " +
      "allowance 'usage' of plugin 'opencode_go'",
  );
  assert.match(
    errorOf(allowances.install("p", { ...fixed("x", {}), fetch: 1 } as never, services("p"))),
    /allowance 'usage' of plugin 'p' has no fetch function/,
  );
  allowances.dispose();
});

Deno.test("removing an allowance drops its cache; entries, purge and version follow", async () => {
  const allowances = createAllowanceRegistry();
  const v0 = allowances.version;
  const handle = contributionOf(
    allowances.install(
      "opencode_go",
      fixed("opencode_go", { windows: [{ label: "5h", percentUsed: 5 }] }),
      services("opencode_go"),
    ),
  );
  assert.equal(handle.kind, "allowance");
  assert.deepEqual(handle.ids, ["opencode_go"]);
  assert.ok(allowances.version > v0);
  await allowances.refresh(go);
  assert.equal(allowances.readout(go), "5h 5%");
  assert.deepEqual(allowances.entries(), [{ id: "opencode_go", owner: "opencode_go" }]);
  handle.remove();
  handle.remove();
  assert.equal(allowances.readout(go), "-");
  assert.deepEqual(allowances.entries(), []);
  allowances.install("cc", fixed("commandcode", {}), services("cc"));
  assert.deepEqual(allowances.purge("cc"), ["commandcode"]);
  assert.deepEqual(allowances.purge("cc"), []);
  allowances.dispose();
});

const claude = {
  provider: "anthropic",
  baseUrl: "https://api.anthropic.com",
  apiKey: "sk-ant-1",
};

Deno.test("record() shows a passive snapshot for a provider with no allowance capability", () => {
  const allowances = createAllowanceRegistry();
  allowances.record(claude, {
    windows: [
      { label: "5h", percentUsed: 12.4, resetsAt: "2026-11-30T09:00:00Z" },
      { label: "7d", percentUsed: 64.6 },
    ],
  });
  assert.equal(allowances.readout(claude), "7d 65%");
  assert.deepEqual(allowances.snapshot(claude), {
    windows: [
      { label: "5h", percentUsed: 12.4, resetsAt: "2026-11-30T09:00:00Z" },
      { label: "7d", percentUsed: 64.6 },
    ],
  });
  assert.ok(Object.isFrozen(allowances.snapshot(claude)));
  // Keyed exactly like a fetched result: provider, base URL and key fingerprint.
  assert.equal(allowances.readout({ ...claude, apiKey: "sk-ant-2" }), "-");
  assert.equal(allowances.readout({ ...claude, apiKey: undefined }), "-");
  assert.equal(allowances.readout({ ...claude, baseUrl: "https://proxy.example" }), "-");
  assert.equal(allowances.readout({ ...claude, provider: "openai" }), "-");
  assert.deepEqual(allowances.entries(), [], "recording installs nothing");
  allowances.dispose();
});

Deno.test("record() checks the snapshot; nothing usable changes nothing", () => {
  const allowances = createAllowanceRegistry();
  allowances.record(claude, { windows: [{ label: "5h", percentUsed: 40 }] });
  allowances.record(claude, undefined);
  allowances.record(claude, { windows: "5h" } as never);
  allowances.record(claude, null as never);
  assert.equal(allowances.readout(claude), "5h 40%", "a response without the headers keeps it");
  allowances.record(claude, {
    windows: [{ label: "5h", percentUsed: Number.NaN }, { label: "", percentUsed: 9 }],
  });
  assert.deepEqual(allowances.snapshot(claude), { windows: [{ label: "5h" }] });
  assert.equal(allowances.readout(claude), "-", "a window of unknown use is not a candidate");
  allowances.record({ ...claude, provider: "" }, { windows: [{ label: "5h", percentUsed: 1 }] });
  allowances.record(null as never, { windows: [{ label: "5h", percentUsed: 1 }] });
  allowances.dispose();
  allowances.record(claude, { windows: [{ label: "5h", percentUsed: 77 }] });
  assert.equal(allowances.readout(claude), "-", "nothing is recorded after dispose");
});

Deno.test("record() and polls share one cache per provider: the latest word wins", async () => {
  const allowances = createAllowanceRegistry();
  const usage = new ControlledAllowance();
  allowances.install("opencode_go", usage.capability("opencode_go"), services("opencode_go"));
  allowances.record(go, { windows: [{ label: "5h", percentUsed: 10 }] });
  assert.equal(allowances.readout(go), "5h 10%", "shown before any poll");
  const polled = allowances.refresh(go);
  await settle();
  usage.resolve({ windows: [{ label: "5h", percentUsed: 20 }] });
  await polled;
  assert.equal(allowances.readout(go), "5h 20%");
  allowances.record(go, { windows: [{ label: "5h", percentUsed: 30 }] });
  assert.equal(allowances.readout(go), "5h 30%");
  // A record for other settings replaces the entry, as a poll for other settings would.
  allowances.record({ ...go, apiKey: "rotated" }, { windows: [{ label: "7d", percentUsed: 5 }] });
  assert.equal(allowances.readout(go), "-");
  assert.equal(allowances.readout({ ...go, apiKey: "rotated" }), "7d 5%");
  // Removing the capability drops what is cached for its provider, recorded or not.
  allowances.purge("opencode_go");
  assert.equal(allowances.readout({ ...go, apiKey: "rotated" }), "-");
  allowances.dispose();
});
