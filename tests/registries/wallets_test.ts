import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { WalletCapability } from "@amber/core";
import { createWalletRegistry } from "@amber/registries/wallets";
import { sha256Hex } from "../../registries/_account.ts";
import {
  conflictOf,
  contributionOf,
  ControlledFetch,
  errorOf,
  services,
  settle,
} from "./_fixtures.ts";

/** A wallet whose every fetch waits until the test settles it. */
class ControlledWallet extends ControlledFetch<number> {
  capability(provider: string, currency?: string): WalletCapability {
    return {
      kind: "wallet",
      name: "balance",
      provider,
      ...(currency === undefined ? {} : { currency }),
      fetch: this.fetch,
    };
  }
}

/** A wallet answering at once with `value`. */
function fixed(provider: string, value: unknown, currency?: string): WalletCapability {
  return {
    kind: "wallet",
    name: "balance",
    provider,
    ...(currency === undefined ? {} : { currency }),
    fetch: () => Promise.resolve(value as number | undefined),
  };
}

const deepseek = { provider: "deepseek", baseUrl: "https://api.deepseek.com", apiKey: "sk-one" };

Deno.test("a refreshed balance reads as dollars for exactly the settings it was fetched with", async () => {
  const wallets = createWalletRegistry();
  const wallet = new ControlledWallet();
  contributionOf(wallets.install("deepseek", wallet.capability("deepseek"), services("deepseek")));
  assert.equal(wallets.readout(deepseek), "-", "nothing fetched yet");
  const refreshed = wallets.refresh(deepseek);
  assert.equal(wallets.readout(deepseek), "-", "nothing shown while the poll is in flight");
  await settle();
  assert.equal(wallet.requests.length, 1);
  const request = wallet.requests[0];
  assert.equal(request.provider, "deepseek");
  assert.equal(request.baseUrl, "https://api.deepseek.com");
  assert.equal(request.apiKey, "sk-one");
  assert.equal(request.signal.aborted, false);
  wallet.resolve(12.34);
  await refreshed;
  assert.equal(wallets.readout(deepseek), "$12.34");
  assert.equal(wallets.amount(deepseek), 12.34);
  assert.equal(wallets.readout({ ...deepseek, apiKey: "sk-two" }), "-", "another key");
  assert.equal(wallets.readout({ ...deepseek, apiKey: undefined }), "-", "no key");
  assert.equal(wallets.readout({ ...deepseek, baseUrl: "https://proxy.example" }), "-");
  assert.equal(wallets.amount({ ...deepseek, apiKey: "sk-two" }), undefined);
  wallets.dispose();
});

Deno.test("runtime_wallet_result_from_a_previous_provider_is_not_shown", async () => {
  const wallets = createWalletRegistry();
  const first = new ControlledWallet();
  const second = new ControlledWallet();
  wallets.install("deepseek", first.capability("deepseek"), services("deepseek"));
  wallets.install("kilocode", second.capability("kilocode"), services("kilocode"));
  const kilocode = { provider: "kilocode", baseUrl: "https://kilocode.ai/api", apiKey: "kc" };

  // The poll for deepseek is in flight when the user switches to kilocode.
  const polled = wallets.refresh(deepseek);
  await settle();
  first.resolve(99);
  await polled;
  assert.equal(wallets.readout(kilocode), "-", "deepseek's balance is not kilocode's");
  assert.equal(wallets.amount(kilocode), undefined);

  // And a provider with no wallet at all shows nothing either.
  assert.equal(wallets.readout({ ...deepseek, provider: "openai" }), "-");

  // The same provider with a new key: the old key's balance is not shown.
  const rotated = { ...deepseek, apiKey: "sk-rotated" };
  const again = wallets.refresh(rotated);
  await settle();
  assert.equal(wallets.readout(rotated), "-");
  first.resolve(5);
  await again;
  assert.equal(wallets.readout(rotated), "$5.00");
  assert.equal(wallets.readout(deepseek), "-", "one cached balance per provider: the latest");
  wallets.dispose();
});

Deno.test("a refresh while a poll is in flight returns that poll, never a second fetch", async () => {
  const wallets = createWalletRegistry();
  const wallet = new ControlledWallet();
  wallets.install("deepseek", wallet.capability("deepseek"), services("deepseek"));
  const one = wallets.refresh(deepseek);
  const two = wallets.refresh(deepseek);
  const three = wallets.refresh({ ...deepseek, apiKey: "sk-other" });
  assert.equal(two, one);
  assert.equal(three, one);
  await settle();
  assert.equal(wallet.requests.length, 1);
  wallet.resolve(1);
  await one;
  const four = wallets.refresh(deepseek);
  assert.notEqual(four, one, "once settled, the next refresh polls again");
  await settle();
  assert.equal(wallet.requests.length, 2);
  wallet.resolve(2);
  await four;
  assert.equal(wallets.readout(deepseek), "$2.00");
  wallets.dispose();
});

Deno.test("refresh of a provider without a wallet does nothing", async () => {
  const wallets = createWalletRegistry();
  await wallets.refresh({ provider: "nobody", baseUrl: "https://x" });
  assert.equal(wallets.readout({ provider: "nobody", baseUrl: "https://x" }), "-");
  wallets.dispose();
});

Deno.test("nothing honest to report reads as '-', never as a made-up zero", async () => {
  const cases: Array<[string, WalletCapability]> = [
    ["undefined", fixed("p", undefined)],
    ["NaN", fixed("p", Number.NaN)],
    ["negative", fixed("p", -1)],
    ["infinite", fixed("p", Infinity)],
    ["string", fixed("p", "12.34")],
    ["object", fixed("p", { amount: 1 })],
    ["rejected", {
      kind: "wallet",
      name: "balance",
      provider: "p",
      fetch: () => Promise.reject(new Error("HTTP 500")),
    }],
    ["thrown", {
      kind: "wallet",
      name: "balance",
      provider: "p",
      fetch: () => {
        throw new Error("synchronous");
      },
    }],
    ["not a promise", {
      kind: "wallet",
      name: "balance",
      provider: "p",
      fetch: () => 7 as unknown as Promise<number>,
    }],
  ];
  const settings = { provider: "p", baseUrl: "https://p.example", apiKey: "k" };
  for (const [label, capability] of cases) {
    const wallets = createWalletRegistry();
    contributionOf(wallets.install("p", capability, services("p")));
    await wallets.refresh(settings);
    const expected = label === "not a promise" ? "$7.00" : "-";
    assert.equal(wallets.readout(settings), expected, label);
    wallets.dispose();
  }
  const zero = createWalletRegistry();
  zero.install("p", fixed("p", 0), services("p"));
  await zero.refresh(settings);
  assert.equal(zero.readout(settings), "$0.00", "a real zero balance is shown");
  assert.equal(zero.amount(settings), 0);
  zero.dispose();
});

Deno.test("a failed poll replaces an earlier balance with '-'", async () => {
  const wallets = createWalletRegistry();
  const wallet = new ControlledWallet();
  wallets.install("deepseek", wallet.capability("deepseek"), services("deepseek"));
  let polled = wallets.refresh(deepseek);
  await settle();
  wallet.resolve(3);
  await polled;
  assert.equal(wallets.readout(deepseek), "$3.00");
  polled = wallets.refresh(deepseek);
  await settle();
  wallet.reject(new Error("offline"));
  await polled;
  assert.equal(wallets.readout(deepseek), "-", "the last poll knows nothing: show nothing");
  wallets.dispose();
});

Deno.test("currencies render as $, ¥ or a trailing ISO code", async () => {
  const settings = { provider: "p", baseUrl: "https://p.example" };
  const cases: Array<[string | undefined, number, string]> = [
    [undefined, 12.345, "$12.35"],
    ["USD", 1234.5, "$1234.50"],
    ["EUR", 12.34, "12.34 EUR"],
    ["eur", 0.5, "0.50 EUR"],
    ["CNY", 12.34, "¥12.34"],
  ];
  for (const [currency, amount, expected] of cases) {
    const wallets = createWalletRegistry();
    contributionOf(wallets.install("p", fixed("p", amount, currency), services("p")));
    await wallets.refresh(settings);
    assert.equal(wallets.readout(settings), expected);
    wallets.dispose();
  }
});

Deno.test("a second wallet for the same provider fails naming both plugins", () => {
  const wallets = createWalletRegistry();
  contributionOf(wallets.install("deepseek", fixed("deepseek", 1), services("deepseek")));
  const result = wallets.install(
    "impostor",
    { ...fixed("deepseek", 2), name: "mine" },
    services("impostor"),
  );
  assert.deepEqual(conflictOf(result), { id: "deepseek", owner: "deepseek" });
  const error = errorOf(result);
  assert.equal(
    error,
    "wallet 'mine' of plugin 'impostor' reads provider 'deepseek', which already has wallet " +
      "'balance' of plugin 'deepseek'",
  );
  assert.deepEqual(wallets.entries(), [{ id: "deepseek", owner: "deepseek" }]);
  wallets.dispose();
});

Deno.test("invalid wallets fail naming the plugin and the problem", () => {
  const wallets = createWalletRegistry();
  const cases: Array<[unknown, RegExp]> = [
    [null, /^wallet of plugin 'p' is not an object$/],
    [{ ...fixed("x", 1), kind: "allowance" }, /wallet 'balance' of plugin 'p' has kind/],
    [{ ...fixed("x", 1), name: "" }, /wallet of plugin 'p' has no name/],
    [{ ...fixed("x", 1), provider: "" }, /wallet 'balance' of plugin 'p' names no provider/],
    [{ ...fixed("x", 1), fetch: undefined }, /wallet 'balance' of plugin 'p' has no fetch/],
    [fixed("x", 1, "dollars"), /has currency "dollars", which is not an ISO 4217 code/],
  ];
  for (const [capability, pattern] of cases) {
    assert.match(
      errorOf(wallets.install("p", capability as WalletCapability, services("p"))),
      pattern,
    );
  }
  assert.deepEqual(wallets.entries(), []);
  assert.equal(wallets.version, 0);
  wallets.dispose();
});

Deno.test("runtime_wallet_fetch_survives_runtime_destruction", async () => {
  const wallets = createWalletRegistry();
  const wallet = new ControlledWallet();
  wallets.install("deepseek", wallet.capability("deepseek"), services("deepseek"));
  const polled = wallets.refresh(deepseek);
  await settle();
  const signal = wallet.requests[0].signal;
  wallets.dispose();
  assert.equal(signal.aborted, true, "dispose aborts the fetch in flight");
  await polled; // settles at once: the host is not held up by the plugin's fetch
  wallet.resolve(42); // the fetch finishes after the registry is gone
  await settle();
  assert.equal(wallets.readout(deepseek), "-", "a result after dispose changes nothing");
  await wallets.refresh(deepseek);
  await settle();
  assert.equal(wallet.requests.length, 1, "no poll after dispose");
  wallets.dispose(); // twice is harmless
});

Deno.test("removing a wallet drops its cache and stops its poll", async () => {
  const wallets = createWalletRegistry();
  const wallet = new ControlledWallet();
  const handle = contributionOf(
    wallets.install("deepseek", wallet.capability("deepseek"), services("deepseek")),
  );
  assert.equal(handle.kind, "wallet");
  assert.equal(handle.name, "balance");
  assert.deepEqual(handle.ids, ["deepseek"]);
  let polled = wallets.refresh(deepseek);
  await settle();
  wallet.resolve(10);
  await polled;
  assert.equal(wallets.readout(deepseek), "$10.00");

  polled = wallets.refresh(deepseek);
  await settle();
  const inFlight = wallet.requests[1].signal;
  const version = wallets.version;
  handle.remove();
  assert.ok(wallets.version > version);
  assert.equal(inFlight.aborted, true);
  await polled;
  wallet.resolve(20);
  await settle();
  assert.equal(wallets.readout(deepseek), "-");
  handle.remove(); // idempotent

  // Back on: the old balance is gone until a new poll.
  const again = new ControlledWallet();
  contributionOf(wallets.install("deepseek", again.capability("deepseek"), services("deepseek")));
  assert.equal(wallets.readout(deepseek), "-");
  handle.remove(); // a stale handle does not remove the new wallet
  assert.deepEqual(wallets.entries(), [{ id: "deepseek", owner: "deepseek" }]);
  polled = wallets.refresh(deepseek);
  await settle();
  again.resolve(30);
  await polled;
  assert.equal(wallets.readout(deepseek), "$30.00");
  assert.deepEqual(wallets.purge("deepseek"), ["deepseek"]);
  assert.equal(wallets.readout(deepseek), "-");
  wallets.dispose();
});

Deno.test("a poll that outlives its timeout reads as '-' and frees the provider", async () => {
  const wallets = createWalletRegistry({ pollTimeoutMs: 10 });
  const wallet = new ControlledWallet();
  wallets.install("deepseek", wallet.capability("deepseek"), services("deepseek"));
  await wallets.refresh(deepseek); // the fetch never settles; the timeout ends the poll
  const signal = wallet.requests[0].signal;
  assert.equal(signal.aborted, true);
  assert.equal((signal.reason as DOMException).name, "TimeoutError");
  assert.equal(wallets.readout(deepseek), "-");
  wallet.resolve(50); // too late to count
  await settle();
  assert.equal(wallets.readout(deepseek), "-");
  const next = wallets.refresh(deepseek);
  await settle();
  assert.equal(wallet.requests.length, 2, "the stuck fetch does not block the next poll");
  wallet.resolve(51);
  await next;
  assert.equal(wallets.readout(deepseek), "$51.00");
  wallets.dispose();
});

Deno.test("the key fingerprint is SHA-256", () => {
  for (const text of ["", "abc", "sk-or-v1-0123456789abcdef", "x".repeat(55), "y".repeat(200)]) {
    const bytes = new TextEncoder().encode(text);
    assert.equal(sha256Hex(bytes), createHash("sha256").update(bytes).digest("hex"), text);
  }
});

Deno.test("the registry never hands the key to anything but the fetch", async () => {
  const wallets = createWalletRegistry();
  wallets.install("deepseek", fixed("deepseek", 1), services("deepseek"));
  await wallets.refresh(deepseek);
  const visible = JSON.stringify(wallets) + Deno.inspect(wallets, { depth: 10 }) +
    JSON.stringify(wallets.entries()) + wallets.readout(deepseek);
  assert.ok(!visible.includes("sk-one"));
  wallets.dispose();
});
