/**
 * What wallets and allowances share: one capability per provider, polled by the runtime (never
 * by the plugin), at most one poll in flight per provider, and a cache whose value is shown only
 * for the exact provider, base URL and key it was fetched with.
 *
 * The key itself is never kept: the cache holds a salted SHA-256 fingerprint of it, computed
 * synchronously so that a readout stays a pure, I/O-free read on the render path.
 *
 * @module
 */

import {
  type AccountRequest,
  failed,
  installed,
  type InstallResult,
  type RegistryEntry,
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

/** How long a poll may take before it reads as "nothing to report", by default. */
export const DEFAULT_POLL_TIMEOUT_MS = 30_000;

interface Slot<C> {
  readonly capability: C;
}

interface Cached<V> {
  readonly key: string;
  readonly value: V | undefined;
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
 * console.log(book.lookup(settings)?.value); // 3
 * ```
 */
export class AccountBook<C extends AccountCapability<unknown>, V> {
  readonly #spec: AccountKind<C, V>;
  readonly #timeoutMs: number;
  readonly #map = new OwnedMap<Slot<C>>((record) => this.#forget(record.id));
  readonly #cache = new Map<string, Cached<V>>();
  readonly #inFlight = new Map<string, Poll>();
  // Random per book, so a fingerprint means nothing outside this process.
  readonly #salt: Uint8Array = crypto.getRandomValues(new Uint8Array(16));
  #disposed = false;

  /** Creates a book for one kind of account; polls give up after `timeoutMs`. */
  constructor(spec: AccountKind<C, V>, timeoutMs: number = DEFAULT_POLL_TIMEOUT_MS) {
    this.#spec = spec;
    this.#timeoutMs = timeoutMs > 0 ? timeoutMs : DEFAULT_POLL_TIMEOUT_MS;
  }

  /** Moves on every install and removal. */
  get version(): number {
    return this.#map.version;
  }

  /** Installs `capability` for `owner`: one per provider. */
  install(owner: string, capability: C): InstallResult {
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
    return installed(this.#map.install(provider, owner, { capability }, kind, capability.name)!);
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
    if (cached.key !== this.#key(settings)) return undefined;
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
    return cached.key === this.#key(settings) ? cached.value : undefined;
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
    const apiKey = typeof settings.apiKey === "string" ? settings.apiKey : "";
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
    }, this.#timeoutMs);

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

  #accept(raw: unknown): V | undefined {
    try {
      return this.#spec.accept(raw);
    } catch {
      // A result whose getters throw has nothing honest to report either.
      return undefined;
    }
  }
}

const ROUND: Uint32Array = new Uint32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);

/**
 * SHA-256 of `bytes` as lowercase hex. Written out here because Web Crypto's digest is async
 * (a readout must be synchronous) and `node:crypto` costs tens of milliseconds to load.
 *
 * @example
 * ```ts
 * import { sha256Hex } from "./_account.ts";
 * console.log(sha256Hex(new TextEncoder().encode("abc")).slice(0, 16)); // "ba7816bf8f01cfea"
 * ```
 */
export function sha256Hex(bytes: Uint8Array): string {
  const padded = new Uint8Array(((bytes.length + 72) >> 6) << 6);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  const bits = bytes.length * 8;
  view.setUint32(padded.length - 8, Math.floor(bits / 0x100000000));
  view.setUint32(padded.length - 4, bits >>> 0);
  const hash = new Uint32Array([
    0x6a09e667,
    0xbb67ae85,
    0x3c6ef372,
    0xa54ff53a,
    0x510e527f,
    0x9b05688c,
    0x1f83d9ab,
    0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let t = 0; t < 16; t++) w[t] = view.getUint32(offset + t * 4);
    for (let t = 16; t < 64; t++) {
      const a = w[t - 15];
      const b = w[t - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    let a = hash[0], b = hash[1], c = hash[2], d = hash[3];
    let e = hash[4], f = hash[5], g = hash[6], h = hash[7];
    for (let t = 0; t < 64; t++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + s1 + ((e & f) ^ (~e & g)) + ROUND[t] + w[t]) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    hash[0] += a;
    hash[1] += b;
    hash[2] += c;
    hash[3] += d;
    hash[4] += e;
    hash[5] += f;
    hash[6] += g;
    hash[7] += h;
  }
  let hex = "";
  for (const word of hash) hex += word.toString(16).padStart(8, "0");
  return hex;
}
