/**
 * The file that keeps one server's OAuth state between runs: `<config>/mcp/oauth/<name>.json`,
 * mode 0600 in a 0700 folder, replaced atomically. It holds secrets (the client's registration,
 * the tokens, the PKCE verifier): nothing here puts its content in a message.
 *
 * @module
 */

import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/shared/auth"
import {
  OAuthClientInformationFullSchema,
  type OAuthClientInformationMixed,
  OAuthClientInformationSchema,
  type OAuthTokens,
  OAuthTokensSchema,
} from "@modelcontextprotocol/sdk/shared/auth.js";
// @ts-types="@modelcontextprotocol/sdk/client/auth"
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";

/** What is kept about one server's authorization; every part is optional. */
export interface StoredAuthorization {
  /** The server's URL when it was stored: the rest is ignored for another URL. */
  readonly url?: string;
  /** The client's registration (dynamic registration's answer). */
  readonly client?: OAuthClientInformationMixed;
  /** The tokens, as the SDK handed them over (with the issuer it stamped on them). */
  readonly tokens?: OAuthTokens;
  /** The PKCE verifier of an authorization under way. */
  readonly codeVerifier?: string;
  /** Where the authorization server is, so that the next run need not look for it. */
  readonly discovery?: OAuthDiscoveryState;
}

/** The path of the file that keeps the OAuth state of the server `server`. */
export function oauthStatePath(configDir: string, server: string): string {
  return join(configDir, "mcp", "oauth", `${server}.json`);
}

const FILE_MODE = 0o600;
const FOLDER_MODE = 0o700;
const POSIX = Deno.build.os !== "windows";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The stored state in `value`, or why it is not one (without quoting any of it). */
function decode(value: unknown): StoredAuthorization | string {
  if (!isRecord(value)) return "it is not a JSON object";
  const stored: {
    -readonly [K in keyof StoredAuthorization]: StoredAuthorization[K];
  } = {};
  if (value.url !== undefined) {
    if (typeof value.url !== "string") return "its url is not a string";
    stored.url = value.url;
  }
  if (value.client !== undefined) {
    const full = OAuthClientInformationFullSchema.safeParse(value.client);
    const plain = full.success ? full : OAuthClientInformationSchema.safeParse(value.client);
    if (!plain.success) return "its client registration is malformed";
    stored.client = plain.data;
  }
  if (value.tokens !== undefined) {
    const tokens = OAuthTokensSchema.safeParse(value.tokens);
    if (!tokens.success) return "its tokens are malformed";
    stored.tokens = tokens.data;
  }
  if (value.codeVerifier !== undefined) {
    if (typeof value.codeVerifier !== "string") return "its code verifier is not a string";
    stored.codeVerifier = value.codeVerifier;
  }
  if (value.discovery !== undefined) {
    if (!isRecord(value.discovery) || typeof value.discovery.authorizationServerUrl !== "string") {
      return "its discovery state is malformed";
    }
    // Written by the SDK from what the servers published; it checks what it reads back.
    stored.discovery = value.discovery as unknown as OAuthDiscoveryState;
  }
  return stored;
}

function isEmpty(stored: StoredAuthorization): boolean {
  return stored.client === undefined && stored.tokens === undefined &&
    stored.codeVerifier === undefined && stored.discovery === undefined;
}

/**
 * One server's state file. Every read goes to the disk, so that another amber process that
 * refreshed the tokens (and so spent the old refresh token) is seen at once.
 */
export class OAuthStateFile {
  readonly #path: string;
  readonly #onProblem: (message: string) => void;
  // The SDK asks for the tokens before every request: the text is checked again only when it
  // changed.
  #cache: { readonly text: string; readonly value: StoredAuthorization } | undefined;

  /** `onProblem` hears that an unreadable file was deleted (the message names the file only). */
  constructor(path: string, onProblem: (message: string) => void) {
    this.#path = path;
    this.#onProblem = onProblem;
  }

  /** The file's path. */
  get path(): string {
    return this.#path;
  }

  /**
   * The stored state; empty when there is no file. A file that is not a state (bad JSON, a wrong
   * shape) is deleted and reported, and reads as empty: the server is authorized again.
   */
  async read(): Promise<StoredAuthorization> {
    let text: string;
    try {
      text = await Deno.readTextFile(this.#path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return {};
      throw error;
    }
    if (this.#cache?.text === text) return this.#cache.value;
    let decoded: StoredAuthorization | string;
    try {
      decoded = decode(JSON.parse(text));
    } catch {
      decoded = "it is not JSON";
    }
    if (typeof decoded !== "string") {
      this.#cache = { text, value: decoded };
      return decoded;
    }
    await this.remove();
    this.#onProblem(
      `the stored OAuth state ${this.#path} could not be used (${decoded}); ` +
        "it was deleted and the server will be authorized again",
    );
    return {};
  }

  /** Applies `change` to the stored state and stores the result (an empty one removes the file). */
  async update(
    change: (stored: StoredAuthorization) => StoredAuthorization,
  ): Promise<StoredAuthorization> {
    const next = change(await this.read());
    if (isEmpty(next)) await this.remove();
    else await this.#write(`${JSON.stringify(next, null, 2)}\n`);
    return next;
  }

  /** Deletes the file; nothing happens when there is none. */
  async remove(): Promise<void> {
    try {
      await Deno.remove(this.#path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }

  // A temporary file created 0600 beside the target, then renamed over it: a reader sees the old
  // file or the new one, and the secret is never readable by others, not even for a moment.
  async #write(text: string): Promise<void> {
    const folder = join(this.#path, "..");
    await Deno.mkdir(folder, { recursive: true, mode: FOLDER_MODE });
    if (POSIX) await Deno.chmod(folder, FOLDER_MODE);
    const temp = `${this.#path}.${crypto.randomUUID()}.tmp`;
    try {
      await Deno.writeTextFile(temp, text, { createNew: true, mode: FILE_MODE });
      if (POSIX) await Deno.chmod(temp, FILE_MODE);
      await Deno.rename(temp, this.#path);
    } catch (error) {
      await Deno.remove(temp).catch(() => {});
      throw error;
    }
  }
}
