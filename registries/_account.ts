/**
 * What wallets and allowances share: one capability per provider, polled by the runtime (never
 * by the plugin), at most one poll in flight per provider, and a cache whose value is shown only
 * for the exact provider, base URL and key it was fetched with.
 *
 * The key itself is never kept: the cache holds a salted SHA-256 fingerprint of it, computed
 * synchronously so that a readout stays a pure, I/O-free read on the render path. The hash is
 * loaded by the first poll or record, not at start, so a command that never reads an account
 * never pays for it; a value recorded before it has loaded is matched by the settings
 * themselves for those few milliseconds.
 *
 * @module
 */

import {
  type AccountRequest,
  type AmberConfig,
  failed,
  installed,
  type InstallResult,
  type RegistryEntry,
  timeoutFor,
} from "@amber/core";
import { OwnedMap, type OwnedRecord, ownerLabel } from "./_owned.ts";

/** What a wallet or allowance capability has in common. */
export interface AccountCapability<V> {
  /** The dispatch key. */
  readonly kind: "wallet" | "allowance";
  /** Unique within the plugin. */
  readonly name: string;
  /** The preset whose account this reads. */
  readonly provider: string;
  /** Reads the account. */
  fetch(request: AccountRequest): Promise<V | undefined>;
}

/** The provider settings a poll or a readout is for: an `AccountRequest` without its signal. */
export type AccountSettings = Omit<AccountRequest, "signal">;

/** How one kind of account differs from the other. */
export interface AccountKind<C, V> {
  /** `wallet` or `allowance`. */
  readonly kind: "wallet" | "allowance";
  /** Extra checks of a capability at install; a problem reads as "<kind> 'name' of plugin ...". */
  check?(capability: C): string | undefined;
  /** Turns what a fetch resolved to into a value worth showing, or undefined when it is not. */
  accept(raw: unknown): V | undefined;
}

/** A cached value together with the capability it came from. */
export interface AccountHit<C, V> {
  /** The capability whose fetch produced the value. */
  readonly capability: C;
  /** The value. */
  readonly value: V;
}

/**
 * How long a poll may take before it reads as "nothing to report" when the book knows no
 * configuration (a capability installed without the services that carry it).
 */
export const DEFAULT_POLL_TIMEOUT_MS = 30_000;

/** What a book needs of the services a capability is installed with: the live configuration. */
export interface AccountServices {
  /** The configuration in force; its `timeouts` give the `wallet` deadline. */
  config(): AmberConfig;
}

interface Slot<C> {
  readonly capability: C;
  readonly services?: AccountServices;
}

interface Cached<V> {
  readonly key: string;
  readonly value: V | undefined;
  // Recorded before the hash had loaded: the settings as they were, until it has, a few
  // milliseconds; then the entry is keyed by the fingerprint like any other.
  readonly plain?: { readonly baseUrl: string; readonly apiKey: string };
}

interface Poll {
  readonly promise: Promise<void>;
  readonly stop: () => void;
}

const SETTLED: Promise<void> = Promise.resolve();
const utf8 = new TextEncoder();

/**
 * The poll-and-cache book behind the wallet and allowance registries.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AccountBook } from "./_account.ts";
 * const book = new AccountBook<{
 *   kind: "wallet";
 *   name: string;
 *   provider: string;
 *   fetch: () => Promise<number | undefined>;
 * }, number>({ kind: "wallet", accept: (raw) => typeof raw === "number" ? raw : undefined });
 * book.install("deepseek", {
 *   kind: "wallet",
 *   name: "balance",
 *   provider: "deepseek",
 *   fetch: () => Promise.resolve(3),
 * });
 * const settings = { provider: "deepseek", baseUrl: "https://api.deepseek.com", apiKey: "k" };
 * await book.refresh(settings);
 * assert.equal(book.lookup(settings)?.value, 3);
 * assert.equal(book.peek({ ...settings, apiKey: "another key" }), undefined);
 * ```
 */
export class AccountBook<C extends AccountCapability<unknown>, V> {
  readonly #spec: AccountKind<C, V>;
  readonly #timeoutMs: number | undefined;
  readonly #map = new OwnedMap<Slot<C>>((record) => this.#forget(record.id));
  readonly #cache = new Map<string, Cached<V>>();
  readonly #inFlight = new Map<string, Poll>();
  // Random per book, so a fingerprint means nothing outside this process.
  readonly #salt: Uint8Array = crypto.getRandomValues(new Uint8Array(16));
  #disposed = false;

  /**
   * Creates a book for one kind of account. A poll gives up after the `wallet` deadline of its
   * capability's owner, `timeoutFor(config, "wallet", owner)` with the configuration of the
   * services it was installed with; `timeoutMs`, when given, stands in for an unconfigured
   * `timeouts.wallet`. Without services a poll gives up after `timeoutMs`, else
   * {@linkcode DEFAULT_POLL_TIMEOUT_MS}.
   */
  constructor(spec: AccountKind<C, V>, timeoutMs?: number) {
    this.#spec = spec;
    this.#timeoutMs = timeoutMs !== undefined && timeoutMs > 0 ? timeoutMs : undefined;
  }

  /** Moves on every install and removal. */
  get version(): number {
    return this.#map.version;
  }

  /**
   * Installs `capability` for `owner`: one per provider. `services` give its polls their
   * deadline.
   */
  install(owner: string, capability: C, services?: AccountServices): InstallResult {
    const kind = this.#spec.kind;
    const fault = this.#problem(capability);
    if (fault !== undefined) {
      const name = typeof capability?.name === "string" && capability.name.trim() !== ""
        ? ` '${capability.name}'`
        : "";
      return failed(`${kind}${name} of ${ownerLabel(owner)} ${fault}`);
    }
    const provider = capability.provider;
    const holder = this.#map.get(provider);
    if (holder !== undefined) {
      return failed(
        `${kind} '${capability.name}' of ${ownerLabel(owner)} reads provider '${provider}', ` +
          `which already has ${kind} '${holder.value.capability.name}' of ${
            ownerLabel(holder.owner)
          }`,
        { id: provider, owner: holder.owner },
      );
    }
    const slot: Slot<C> = services === undefined ? { capability } : { capability, services };
    return installed(this.#map.install(provider, owner, slot, kind, capability.name)!);
  }

  /** Every live entry, one per provider, in registration order. */
  entries(): readonly RegistryEntry[] {
    return this.#map.entries();
  }

  /** Removes what `owner` has, with its cache and any poll in flight. */
  purge(owner: string): readonly string[] {
    return this.#map.purge(owner);
  }

  /**
   * Polls the capability of `settings.provider`, unless a poll for it is already in flight, in
   * which case that poll's promise is returned. Never rejects.
   */
  refresh(settings: AccountSettings): Promise<void> {
    if (this.#disposed || typeof settings !== "object" || settings === null) return SETTLED;
    const provider = settings.provider;
    const record = this.#map.get(provider);
    if (record === undefined) return SETTLED;
    return this.#inFlight.get(provider)?.promise ?? this.#poll(record, settings);
  }

  /** The cached value for exactly these settings, with its capability. Pure. */
  lookup(settings: AccountSettings): AccountHit<C, V> | undefined {
    if (typeof settings !== "object" || settings === null) return undefined;
    const record = this.#map.get(settings.provider);
    if (record === undefined) return undefined;
    const cached = this.#cache.get(record.id);
    if (cached === undefined || cached.value === undefined) return undefined;
    if (!this.#matches(cached, settings)) return undefined;
    return { capability: record.value.capability, value: cached.value };
  }

  /**
   * Caches `raw` for exactly these settings as if a poll had fetched it, whether or not
   * `settings.provider` has a capability: what a model response's headers said about the
   * account. A value that `accept` refuses changes nothing, and neither does anything after
   * `dispose()`. A later poll for the provider replaces it, as a later poll replaces an earlier.
   */
  record(settings: AccountSettings, raw: unknown): void {
    if (this.#disposed || typeof settings !== "object" || settings === null) return;
    const provider = settings.provider;
    if (typeof provider !== "string" || provider === "") return;
    const value = this.#accept(raw);
    if (value === undefined) return;
    if (hash === undefined) {
      const plain = { baseUrl: String(settings.baseUrl), apiKey: apiKeyOf(settings) };
      const entry = { key: "", value, plain };
      this.#cache.set(provider, entry);
      loadHash().then(() => {
        if (this.#cache.get(provider) !== entry) return;
        const { baseUrl, apiKey } = plain;
        this.#cache.set(provider, { key: this.#key({ provider, baseUrl, apiKey }), value });
      }, () => {});
      return;
    }
    this.#cache.set(provider, { key: this.#key(settings), value });
  }

  /**
   * The cached value for exactly these settings, fetched or recorded, also for a provider with
   * no capability. Pure.
   */
  peek(settings: AccountSettings): V | undefined {
    if (typeof settings !== "object" || settings === null) return undefined;
    const cached = this.#cache.get(settings.provider);
    if (cached === undefined || cached.value === undefined) return undefined;
    return this.#matches(cached, settings) ? cached.value : undefined;
  }

  #matches(cached: Cached<V>, settings: AccountSettings): boolean {
    const { plain } = cached;
    if (plain === undefined) return cached.key === this.#key(settings);
    return plain.baseUrl === String(settings.baseUrl) && plain.apiKey === apiKeyOf(settings);
  }

  /** Aborts every poll in flight and drops what they would bring; later refreshes do nothing. */
  dispose(): void {
    this.#disposed = true;
    for (const poll of [...this.#inFlight.values()]) poll.stop();
    this.#inFlight.clear();
  }

  #problem(capability: C): string | undefined {
    if (typeof capability !== "object" || capability === null) return "is not an object";
    if (capability.kind !== this.#spec.kind) {
      return `has kind '${String(capability.kind)}', not '${this.#spec.kind}'`;
    }
    if (typeof capability.name !== "string" || capability.name.trim() === "") return "has no name";
    if (typeof capability.provider !== "string" || capability.provider === "") {
      return "names no provider";
    }
    if (typeof capability.fetch !== "function") return "has no fetch function";
    return this.#spec.check?.(capability);
  }

  #forget(provider: string): void {
    this.#cache.delete(provider);
    this.#inFlight.get(provider)?.stop();
  }

  #key(settings: AccountSettings): string {
    const apiKey = apiKeyOf(settings);
    return `${String(settings.baseUrl)}\n${apiKey === "" ? "" : this.#fingerprint(apiKey)}`;
  }

  #fingerprint(apiKey: string): string {
    const key = utf8.encode(apiKey);
    const message = new Uint8Array(this.#salt.length + key.length);
    message.set(this.#salt);
    message.set(key, this.#salt.length);
    return sha256Hex(message);
  }

  #poll(record: OwnedRecord<Slot<C>>, settings: AccountSettings): Promise<void> {
    if (hash !== undefined) return this.#pollNow(record, settings);
    // A refresh while the hash loads joins this one, as it joins a poll in flight; a stop
    // (dispose, removal) before it loaded means no poll at all.
    let stopped = false;
    const loaded = loadHash().then(() =>
      stopped || this.#disposed ? undefined : this.#pollNow(record, settings)
    );
    const provider = record.id;
    const waiting = { promise: loaded, stop: () => void (stopped = true) };
    this.#inFlight.set(provider, waiting);
    return loaded.finally(() => {
      if (this.#inFlight.get(provider) === waiting) this.#inFlight.delete(provider);
    });
  }

  #pollNow(record: OwnedRecord<Slot<C>>, settings: AccountSettings): Promise<void> {
    const provider = record.id;
    const key = this.#key(settings);
    const controller = new AbortController();
    let done = false;
    let resolve!: () => void;
    const promise = new Promise<void>((settle) => resolve = settle);

    // Kept referenced: a host awaiting `refresh` must see it settle even if the fetch hangs and
    // nothing else keeps the event loop alive. `dispose()` clears it.
    const timer = setTimeout(() => {
      finish(true, undefined);
      controller.abort(new DOMException(`${this.#spec.kind} poll timed out`, "TimeoutError"));
    }, this.#deadline(record));

    // First outcome wins: the fetch settling, the timeout, or a stop (dispose or removal).
    const finish = (keep: boolean, raw: unknown): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (this.#inFlight.get(provider)?.promise === promise) this.#inFlight.delete(provider);
      if (keep && !this.#disposed && this.#map.get(provider) === record) {
        this.#cache.set(provider, { key, value: this.#accept(raw) });
      }
      resolve();
    };

    this.#inFlight.set(provider, {
      promise,
      stop: () => {
        finish(false, undefined);
        controller.abort(new DOMException(`${this.#spec.kind} poll stopped`, "AbortError"));
      },
    });

    const request: AccountRequest = Object.freeze({
      provider,
      baseUrl: settings.baseUrl,
      ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
      signal: controller.signal,
    });
    const fetch = record.value.capability.fetch;
    // Started from a microtask so that a fetch that throws synchronously reads as a rejection
    // and a fetch that does heavy work up front does not run inside the caller's frame.
    SETTLED.then(() => fetch.call(record.value.capability, request)).then(
      (raw) => finish(true, raw),
      () => finish(true, undefined),
    );
    return promise;
  }

  // The owner's `wallet` deadline from the live configuration; the book's own timeout stands in
  // for an unconfigured `timeouts.wallet`.
  #deadline(record: OwnedRecord<Slot<C>>): number {
    const services = record.value.services;
    if (services === undefined) return this.#timeoutMs ?? DEFAULT_POLL_TIMEOUT_MS;
    let config: AmberConfig;
    try {
      config = services.config();
    } catch {
      return this.#timeoutMs ?? DEFAULT_POLL_TIMEOUT_MS;
    }
    const fallback = this.#timeoutMs === undefined
      ? config
      : { ...config, timeouts: { wallet: this.#timeoutMs, ...config.timeouts } };
    return timeoutFor(fallback, "wallet", record.owner);
  }

  #accept(raw: unknown): V | undefined {
    try {
      return this.#spec.accept(raw);
    } catch {
      // A result whose getters throw has nothing honest to report either.
      return undefined;
    }
  }
}

/**
 * SHA-256 of `bytes` as lowercase hex, computed synchronously (`@noble/hashes`): a readout is a
 * pure read on the render path, so it cannot wait for Web Crypto's promise, and `node:crypto`
 * costs tens of milliseconds to load.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHash, sha256Hex } from "./_account.ts";
 * await loadHash();
 * assert.equal(
 *   sha256Hex(new TextEncoder().encode("abc")),
 *   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
 * );
 * ```
 */
export function sha256Hex(bytes: Uint8Array): string {
  if (hash === undefined) throw new Error("sha256Hex before loadHash() resolved");
  return hash(bytes);
}

function apiKeyOf(settings: AccountSettings): string {
  return typeof settings.apiKey === "string" ? settings.apiKey : "";
}

let hash: ((bytes: Uint8Array) => string) | undefined;
let hashLoading: Promise<void> | undefined;

/**
 * Loads the hash {@linkcode sha256Hex} uses; resolves at once after the first time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHash, sha256Hex } from "./_account.ts";
 * await loadHash();
 * assert.equal(sha256Hex(new Uint8Array()).length, 64);
 * ```
 */
export function loadHash(): Promise<void> {
  hashLoading ??= Promise.all([
    import("@noble/hashes/sha2.js"),
    import("@noble/hashes/utils.js"),
  ]).then(([{ sha256 }, { bytesToHex }]) => {
    hash = (bytes) => bytesToHex(sha256(bytes));
  });
  return hashLoading;
}
