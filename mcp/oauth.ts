/**
 * OAuth for a remote MCP server that requires it: an {@linkcode OAuthClientProvider} for the SDK's
 * client flow (discovery, dynamic registration, PKCE, refresh), whose state is kept in
 * `<config>/mcp/oauth/<name>.json` (mode 0600, never printed), and whose redirect URL is a loopback
 * server on 127.0.0.1 that takes the authorization code from the user's browser.
 *
 * The flow, as `connect.ts` drives it: connecting with `provider` as the transport's
 * `authProvider` either works (stored tokens, refreshed by the SDK when the server refuses the
 * access token) or throws the SDK's `UnauthorizedError` after the provider showed the user the
 * authorization URL (`interaction.authorize`). Then {@linkcode McpOAuth.complete} waits for the
 * browser to come back and exchanges the code, and a new transport connects with the new tokens.
 *
 * @module
 */

import { AmberError } from "@amber/core";
// @ts-types="@modelcontextprotocol/sdk/client/auth"
import {
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  selectClientAuthMethod,
} from "@modelcontextprotocol/sdk/client/auth.js";
// @ts-types="@modelcontextprotocol/sdk/shared/auth"
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { OAuthCallback } from "./_oauth_callback.ts";
import { OAuthStateFile, oauthStatePath, type StoredAuthorization } from "./_oauth_store.ts";
import { MCP_SERVER_NAME } from "./server_config.ts";
import type { McpOAuthSettings } from "./types.ts";

/**
 * An OAuth step failed: a bad setting, a taken callback port, an authorization the user or the
 * server refused or never finished. The message names the server and never holds a secret.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { McpOAuthError } from "./oauth.ts";
 * const error = new McpOAuthError("docs: the authorization was refused: access_denied");
 * assert.equal(error.name, "McpOAuthError");
 * assert.ok(error instanceof Error);
 * ```
 */
export class McpOAuthError extends AmberError {
  /** Creates the error; `cause` is the underlying failure, if any. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "McpOAuthError";
  }
}

/** How the front end takes part in an authorization. */
export interface OAuthInteraction {
  /**
   * Shows the user the URL to open in a browser (the CLI prints it, the TUI notifies). It should
   * not wait for the user: {@linkcode McpOAuth.complete} does.
   */
  authorize(url: URL): void | Promise<void>;
  /**
   * Tells the user something they should know, such as that stored tokens were refused or
   * unreadable and were deleted. The message names the server; it never holds a secret.
   */
  notice?(message: string): void;
}

/** One server's OAuth client, for one connection attempt. */
export interface McpOAuth {
  /** The SDK's provider: pass it as the transport's `authProvider`. */
  readonly provider: OAuthClientProvider;
  /**
   * After the transport threw the SDK's `UnauthorizedError`: waits for the loopback callback's
   * code (or `signal`), then calls `transport.finishAuth(code)`, which stores the tokens. Throws
   * {@linkcode McpOAuthError} when no authorization was started, the user or the server refused
   * it, `signal` aborted first, or the code could not be exchanged.
   */
  complete(
    transport: { finishAuth(code: string): Promise<void> },
    signal: AbortSignal,
  ): Promise<void>;
  /**
   * Stops the callback server. The provider still serves the stored tokens and refreshes them;
   * a new authorization it would need from then on fails (with {@linkcode McpOAuthError}) rather
   * than show a URL nothing waits for.
   */
  close(): Promise<void>;
}

/** What {@linkcode createMcpOAuth} needs. */
export interface McpOAuthOptions {
  /** amber's configuration folder; the state goes to `mcp/oauth/<server>.json` under it. */
  readonly configDir: string;
  /** The server's name (`[A-Za-z0-9_-]{1,48}`). */
  readonly server: string;
  /** The entry's `oauth` settings (`{}` for `oauth: true`). */
  readonly settings: McpOAuthSettings;
  /** Where `settings.clientSecretEnv` is looked up. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The front end's part: showing the URL, hearing notices. */
  readonly interaction: OAuthInteraction;
  /**
   * The server's URL. When given, the stored state is bound to it: state stored for another URL
   * is deleted rather than its tokens sent to this one.
   */
  readonly url?: string;
}

/**
 * The file that keeps the OAuth state (client registration, tokens) of the server `server`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mcpOAuthPath } from "./oauth.ts";
 * assert.equal(mcpOAuthPath("/home/u/.config/amber", "docs"), "/home/u/.config/amber/mcp/oauth/docs.json");
 * ```
 */
export function mcpOAuthPath(configDir: string, server: string): string {
  checkName(server);
  return oauthStatePath(configDir, server);
}

/**
 * Deletes what is stored about the authorization of the server `server`, so that the next
 * connection authorizes again. Nothing happens when nothing is stored.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { forgetMcpTokens, mcpOAuthPath } from "./oauth.ts";
 * const config = await Deno.makeTempDir();
 * await Deno.mkdir(`${config}/mcp/oauth`, { recursive: true });
 * await Deno.writeTextFile(mcpOAuthPath(config, "docs"), "{}");
 * await forgetMcpTokens(config, "docs");
 * await forgetMcpTokens(config, "docs");
 * assert.deepEqual([...Deno.readDirSync(`${config}/mcp/oauth`)], []);
 * await Deno.remove(config, { recursive: true });
 * ```
 */
export async function forgetMcpTokens(configDir: string, server: string): Promise<void> {
  await new OAuthStateFile(mcpOAuthPath(configDir, server), () => {}).remove();
}

/**
 * Prepares the OAuth client of one server for one connection attempt: reads its stored state
 * (deleting, with a notice, a file that cannot be used or that was stored for another URL) and
 * starts the loopback callback server on `settings.callbackPort`, else on the port the client was
 * registered with when it is free, else on a free one. Without `settings.clientId` the client
 * registers itself dynamically; with it, `settings.clientSecretEnv` names the variable of its
 * secret. Call {@linkcode McpOAuth.close} once connected (or given up).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMcpOAuth } from "./oauth.ts";
 * const configDir = await Deno.makeTempDir();
 * const oauth = await createMcpOAuth({
 *   configDir,
 *   server: "docs",
 *   settings: { scope: "read" },
 *   env: {},
 *   interaction: { authorize: () => {} },
 * });
 * assert.match(String(oauth.provider.redirectUrl), /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
 * assert.equal(oauth.provider.clientMetadata.scope, "read");
 * assert.equal(await oauth.provider.tokens(), undefined);
 * await oauth.close();
 * await Deno.remove(configDir, { recursive: true });
 * ```
 */
export async function createMcpOAuth(options: McpOAuthOptions): Promise<McpOAuth> {
  const { server, settings, interaction } = options;
  checkName(server);
  const notice = (message: string) => interaction.notice?.(`${server}: ${message}`);
  const preRegistered = preRegisteredClient(server, settings, options.env);
  const file = new OAuthStateFile(oauthStatePath(options.configDir, server), notice);
  let stored = await file.read();
  if (options.url !== undefined && stored.url !== undefined && stored.url !== options.url) {
    await file.remove();
    notice(
      `the stored OAuth state was for ${shownUrl(stored.url)}, not ${shownUrl(options.url)}; ` +
        "it was deleted and the server will be authorized again",
    );
    stored = {};
  }
  const callback = listen(server, settings.callbackPort, registeredPort(stored.client));
  const update = (change: Partial<Record<keyof StoredAuthorization, unknown>>) =>
    file.update((current) => {
      const next: Record<string, unknown> = { ...current, url: options.url ?? current.url };
      for (const [key, value] of Object.entries(change)) {
        if (value === undefined) delete next[key];
        else next[key] = value;
      }
      return next as StoredAuthorization;
    });
  let state: string | undefined;
  // The refresh tokens this client sent. Another process may refresh at the same time with the
  // same (rotating) refresh token: then one of the two refreshes fails and the SDK asks to
  // invalidate the tokens, which may by then be the ones the other refresh stored. Stored tokens
  // whose refresh token this client never sent are not the ones that failed, and are kept.
  const sentRefreshTokens = new Set<string>();
  const turns = refreshTurns(file.path);
  let closed = false;

  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return callback.url;
    },
    get clientMetadata(): OAuthClientMetadata {
      return {
        client_name: "amber",
        redirect_uris: [callback.url],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        ...(settings.scope === undefined ? {} : { scope: settings.scope }),
      };
    },
    state() {
      state = randomState();
      return state;
    },
    async clientInformation() {
      return preRegistered ?? (await file.read()).client;
    },
    // Only a client that registers itself may be registered again; a configured one must not be
    // replaced behind the user's back.
    ...(preRegistered ? {} : {
      async saveClientInformation(client: OAuthClientInformationMixed) {
        await update({ client });
      },
    }),
    async tokens() {
      return (await file.read()).tokens;
    },
    async saveTokens(tokens) {
      await update({ tokens });
      turns.end();
    },
    async redirectToAuthorization(url) {
      if (!safeAuthorizationUrl(url)) {
        throw new McpOAuthError(
          `${server}: the authorization server's URL (${url.protocol}//${url.host}) is neither ` +
            "https nor on this machine; it is not shown",
        );
      }
      // A new authorization means the stored tokens were refused (and could not be refreshed).
      if ((await file.read()).tokens !== undefined) {
        await update({ tokens: undefined });
        notice("the server refused the stored OAuth tokens; they were deleted");
      }
      turns.end();
      // Closed (connected, the callback server gone): a URL shown now could not come back. The
      // request fails instead, and the next connection attempt authorizes.
      if (closed) {
        throw new McpOAuthError(`${server}: the server asks for a new authorization`);
      }
      callback.expect(state ?? "");
      await interaction.authorize(url);
    },
    async saveCodeVerifier(codeVerifier) {
      await update({ codeVerifier });
    },
    async codeVerifier() {
      const verifier = (await file.read()).codeVerifier;
      if (verifier === undefined) {
        throw new McpOAuthError(`${server}: the authorization's PKCE verifier is no longer stored`);
      }
      return verifier;
    },
    async invalidateCredentials(scope) {
      turns.end();
      const current = await file.read();
      const refresh = current.tokens?.refresh_token;
      if (scope === "tokens" && refresh !== undefined && !sentRefreshTokens.has(refresh)) return;
      if ((scope === "all" || scope === "tokens") && current.tokens !== undefined) {
        notice("the server refused the stored OAuth tokens; they were deleted");
      }
      if (scope === "all") await file.remove();
      else if (scope === "client") await update({ client: undefined });
      else if (scope === "tokens") await update({ tokens: undefined });
      else if (scope === "verifier") await update({ codeVerifier: undefined });
      else await update({ discovery: undefined });
    },
    // Here to put one refresh of this process at a time and to see which refresh token it sends;
    // the client authentication itself is the SDK's default one (its method chosen the same way).
    async addClientAuthentication(
      headers: Headers,
      params: URLSearchParams,
      _url: string | URL,
      metadata?: AuthorizationServerMetadata,
    ) {
      if (params.get("grant_type") === "refresh_token") {
        // A transport's POST and its GET stream refused at once, or two connections, each
        // refresh: the second one waits for the first, then sends the refresh token the first
        // one stored (the one it holds was spent, if the server rotates them).
        await turns.take();
        const stored = (await file.read()).tokens?.refresh_token;
        if (stored !== undefined) params.set("refresh_token", stored);
        sentRefreshTokens.add(params.get("refresh_token")!);
      }
      const client = preRegistered ?? (await file.read()).client;
      if (client === undefined) return;
      const supported = metadata?.token_endpoint_auth_methods_supported ?? [];
      const method = selectClientAuthMethod(client, supported);
      if (method === "client_secret_basic" && client.client_secret !== undefined) {
        headers.set(
          "Authorization",
          `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`,
        );
        return;
      }
      params.set("client_id", client.client_id);
      if (method === "client_secret_post" && client.client_secret !== undefined) {
        params.set("client_secret", client.client_secret);
      }
    },
    async saveDiscoveryState(discovery: OAuthDiscoveryState) {
      await update({ discovery });
    },
    async discoveryState() {
      return (await file.read()).discovery;
    },
  };

  return {
    provider,
    async complete(transport, signal) {
      if (!callback.armed) {
        throw new McpOAuthError(
          `${server}: the server refused access, but no authorization was started`,
        );
      }
      let answer;
      try {
        answer = await callback.answer(signal);
      } catch (reason) {
        throw new McpOAuthError(
          `${server}: the authorization was not completed (${describe(reason)})`,
          { cause: reason },
        );
      } finally {
        callback.reset();
      }
      if ("error" in answer) {
        const detail = answer.description ? ` (${answer.description})` : "";
        throw new McpOAuthError(
          `${server}: the authorization was refused: ${answer.error}${detail}`,
        );
      }
      try {
        await transport.finishAuth(answer.code);
      } catch (error) {
        throw new McpOAuthError(
          `${server}: the authorization code could not be exchanged for tokens: ${describe(error)}`,
          { cause: error },
        );
      }
      await update({ codeVerifier: undefined });
    },
    async close() {
      closed = true;
      turns.end();
      await callback.close();
    },
  };
}

// The refreshes under way in this process, by state file.
const refreshing = new Map<string, { readonly done: Promise<void>; readonly end: () => void }>();
// A refresh whose end went unseen (it failed with no call back to the provider) blocks the next
// one this long at most.
const REFRESH_TURN_MS = 10_000;

/**
 * One provider's turns at refreshing the tokens of `path`: `take` waits until no other refresh of
 * them is under way in this process, `end` (called once the outcome is stored, or when the
 * provider is closed) lets the next one go. Ending a turn it does not hold does nothing.
 */
function refreshTurns(path: string): { take(): Promise<void>; end(): void } {
  let held: (() => void) | undefined;
  return {
    async take() {
      for (let turn = refreshing.get(path); turn; turn = refreshing.get(path)) await turn.done;
      let resolve!: () => void;
      const done = new Promise<void>((r) => resolve = r);
      const end = () => {
        clearTimeout(timer);
        if (refreshing.get(path)?.done === done) refreshing.delete(path);
        if (held === end) held = undefined;
        resolve();
      };
      const timer = setTimeout(end, REFRESH_TURN_MS);
      refreshing.set(path, { done, end });
      held = end;
    },
    end() {
      held?.();
    },
  };
}

function checkName(server: string): void {
  // The name becomes a file name: nothing that could leave the folder.
  if (!MCP_SERVER_NAME.test(server)) {
    throw new McpOAuthError(`'${server}' is not a server name ([A-Za-z0-9_-], 1 to 48 characters)`);
  }
}

function preRegisteredClient(
  server: string,
  settings: McpOAuthSettings,
  env: Readonly<Record<string, string | undefined>>,
): OAuthClientInformationMixed | undefined {
  if (settings.clientId === undefined) return undefined;
  if (settings.clientSecretEnv === undefined) return { client_id: settings.clientId };
  const secret = env[settings.clientSecretEnv];
  if (secret === undefined || secret === "") {
    throw new McpOAuthError(
      `${server}: oauth.clientSecretEnv names ${settings.clientSecretEnv}, which is not set`,
    );
  }
  return { client_id: settings.clientId, client_secret: secret };
}

/** The loopback port a dynamically registered client was registered with, if any. */
function registeredPort(client: OAuthClientInformationMixed | undefined): number | undefined {
  if (client === undefined || !("redirect_uris" in client)) return undefined;
  const first = client.redirect_uris[0];
  if (first === undefined || !URL.canParse(first)) return undefined;
  const url = new URL(first);
  return url.hostname === "127.0.0.1" && url.port !== "" ? Number(url.port) : undefined;
}

function listen(
  server: string,
  configured: number | undefined,
  registered?: number,
): OAuthCallback {
  try {
    return OAuthCallback.listen(configured ?? registered ?? 0, server);
  } catch (error) {
    if (!(error instanceof Deno.errors.AddrInUse)) throw error;
    if (configured !== undefined) {
      throw new McpOAuthError(
        `${server}: the OAuth callback port ${configured} (oauth.callbackPort) is in use`,
        { cause: error },
      );
    }
    // Servers accept any loopback port for a registered loopback redirect (RFC 8252).
    return OAuthCallback.listen(0, server);
  }
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

// The URL is shown to the user to open: a `javascript:` or `file:` one from a hostile server is not.
function safeAuthorizationUrl(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname));
}

// A URL's query may hold a key expanded from the environment: it is not shown.
function shownUrl(url: string): string {
  if (!URL.canParse(url)) return "another URL";
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

function randomState(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

function describe(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
