/**
 * An MCP server behind OAuth, on 127.0.0.1, for tests: the SDK's own authorization server
 * (metadata, dynamic client registration, an authorize endpoint that grants at once by
 * redirecting to the client's `redirect_uri` with a code, a token endpoint with PKCE and refresh)
 * and its bearer check in front of a Streamable HTTP endpoint at `/mcp`. Tokens live in memory,
 * so a test can expire or revoke them.
 *
 * @module
 */

import type { IncomingMessage, Server, ServerResponse } from "node:http";
// @ts-types="@modelcontextprotocol/sdk/server/express"
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
// @ts-types="@modelcontextprotocol/sdk/server/auth/router"
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from "@modelcontextprotocol/sdk/server/auth/router.js";
// @ts-types="@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth"
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
// @ts-types="@modelcontextprotocol/sdk/server/auth/provider"
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from "@modelcontextprotocol/sdk/server/auth/provider.js";
// @ts-types="@modelcontextprotocol/sdk/server/auth/clients"
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js";
// @ts-types="@modelcontextprotocol/sdk/server/auth/types"
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
// @ts-types="@modelcontextprotocol/sdk/server/auth/errors"
import {
  InvalidGrantError,
  InvalidTokenError,
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
// @ts-types="@modelcontextprotocol/sdk/shared/auth"
import type {
  OAuthClientInformationFull,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/server/streamableHttp"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

/** How many times each OAuth step ran, so a test can tell a reuse from a new authorization. */
export interface OAuthCounts {
  registrations: number;
  authorizations: number;
  codeExchanges: number;
  refreshes: number;
  /** Refresh requests refused (an unknown, spent or revoked refresh token). */
  refusedRefreshes: number;
}

/** A running server. */
export interface OAuthTestServer {
  /** The MCP endpoint (`http://127.0.0.1:<port>/mcp`). */
  readonly url: URL;
  /** Every access, refresh token and code handed out, oldest first (to look for leaks). */
  readonly issued: readonly string[];
  /** The client registrations, in order. */
  readonly clients: readonly OAuthClientInformationFull[];
  readonly counts: OAuthCounts;
  /** Makes every access token issued so far expired; the refresh tokens still work. */
  expireAccessTokens(): void;
  /** Forgets every access and refresh token, as a server that revoked them. */
  revokeAll(): void;
  /** Stops the server and drops its connections. */
  close(): Promise<void>;
}

interface Grant {
  readonly clientId: string;
  readonly challenge: string;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
}

interface AccessGrant {
  readonly clientId: string;
  readonly scopes: readonly string[];
  expiresAt: number;
}

function secret(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return `${prefix}-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

/** The in-memory authorization server: it grants every authorization request it gets. */
class GrantingProvider implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>();
  readonly codes = new Map<string, Grant>();
  readonly access = new Map<string, AccessGrant>();
  readonly refresh = new Map<string, { clientId: string; scopes: readonly string[] }>();
  readonly issued: string[] = [];
  readonly registered: OAuthClientInformationFull[] = [];
  readonly counts: OAuthCounts = {
    registrations: 0,
    authorizations: 0,
    codeExchanges: 0,
    refreshes: 0,
    refusedRefreshes: 0,
  };

  get clientsStore(): OAuthRegisteredClientsStore {
    return {
      getClient: (clientId) => this.clients.get(clientId),
      registerClient: (client) => {
        this.counts.registrations++;
        const full: OAuthClientInformationFull = {
          ...client,
          client_id: secret("client"),
          client_id_issued_at: Math.floor(Date.now() / 1000),
        };
        this.clients.set(full.client_id, full);
        this.registered.push(full);
        return full;
      },
    };
  }

  authorize(
    client: OAuthClientInformationFull,
    params: AuthorizationParams,
    res: { redirect(status: number, url: string): void },
  ): Promise<void> {
    this.counts.authorizations++;
    const code = secret("code");
    this.issued.push(code);
    this.codes.set(code, {
      clientId: client.client_id,
      challenge: params.codeChallenge,
      redirectUri: params.redirectUri,
      scopes: params.scopes ?? [],
    });
    const target = new URL(params.redirectUri);
    target.searchParams.set("code", code);
    if (params.state !== undefined) target.searchParams.set("state", params.state);
    res.redirect(302, target.href);
    return Promise.resolve();
  }

  challengeForAuthorizationCode(
    _client: OAuthClientInformationFull,
    code: string,
  ): Promise<string> {
    const grant = this.codes.get(code);
    if (!grant) return Promise.reject(new InvalidGrantError("unknown authorization code"));
    return Promise.resolve(grant.challenge);
  }

  exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    _verifier?: string,
    redirectUri?: string,
  ): Promise<OAuthTokens> {
    const grant = this.codes.get(code);
    this.codes.delete(code);
    if (!grant || grant.clientId !== client.client_id) {
      return Promise.reject(new InvalidGrantError("unknown authorization code"));
    }
    if (redirectUri !== undefined && redirectUri !== grant.redirectUri) {
      return Promise.reject(new InvalidGrantError("redirect_uri differs from the authorization's"));
    }
    this.counts.codeExchanges++;
    return Promise.resolve(this.#issue(client.client_id, grant.scopes));
  }

  exchangeRefreshToken(client: OAuthClientInformationFull, token: string): Promise<OAuthTokens> {
    const grant = this.refresh.get(token);
    if (!grant || grant.clientId !== client.client_id) {
      this.counts.refusedRefreshes++;
      return Promise.reject(new InvalidGrantError("unknown refresh token"));
    }
    // Rotated, as OAuth 2.1 asks of public clients' refresh tokens.
    this.refresh.delete(token);
    this.counts.refreshes++;
    return Promise.resolve(this.#issue(client.client_id, grant.scopes));
  }

  verifyAccessToken(token: string): Promise<AuthInfo> {
    const grant = this.access.get(token);
    if (!grant) return Promise.reject(new InvalidTokenError("unknown access token"));
    return Promise.resolve({
      token,
      clientId: grant.clientId,
      scopes: [...grant.scopes],
      expiresAt: grant.expiresAt,
    });
  }

  #issue(clientId: string, scopes: readonly string[]): OAuthTokens {
    const accessToken = secret("access");
    const refreshToken = secret("refresh");
    this.issued.push(accessToken, refreshToken);
    this.access.set(accessToken, { clientId, scopes, expiresAt: Date.now() / 1000 + 3600 });
    this.refresh.set(refreshToken, { clientId, scopes });
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: refreshToken,
      scope: scopes.join(" ") || undefined,
    };
  }
}

/** An MCP server with one tool, `whoami`, answering the OAuth client id of the caller. */
function mcpServer(): McpServer {
  const server = new McpServer({ name: "oauth-test", version: "1.0.0" });
  server.registerTool(
    "whoami",
    { description: "The OAuth client id of the caller." },
    (extra) => ({ content: [{ type: "text", text: extra.authInfo?.clientId ?? "nobody" }] }),
  );
  return server;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startOAuthServer(): Promise<OAuthTestServer> {
  const provider = new GrantingProvider();
  const app = createMcpExpressApp({ host: "127.0.0.1" });
  const http: Server = await new Promise((resolve, reject) => {
    const listening = app.listen(0, "127.0.0.1", (error?: Error) => {
      if (error) reject(error);
      else resolve(listening);
    });
  });
  // The routes need the issuer URL, so the port: express takes them once it listens.
  const address = http.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  const base = new URL(`http://127.0.0.1:${address.port}/`);
  const url = new URL("/mcp", base);
  const disabled = { rateLimit: false } as const;
  app.use(mcpAuthRouter({
    provider,
    issuerUrl: base,
    resourceServerUrl: url,
    authorizationOptions: disabled,
    tokenOptions: disabled,
    clientRegistrationOptions: disabled,
  }));
  const bearer = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(url),
  });
  app.get("/mcp", bearer, (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(405, { allow: "POST" }).end();
  });
  app.post(
    "/mcp",
    bearer,
    async (req: IncomingMessage & { body: unknown }, res: ServerResponse) => {
      // Stateless: a fresh server and transport for each request.
      const server = mcpServer();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on("close", () => {
        transport.close();
        server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );
  return {
    url,
    issued: provider.issued,
    clients: provider.registered,
    counts: provider.counts,
    expireAccessTokens() {
      for (const grant of provider.access.values()) grant.expiresAt = 0;
    },
    revokeAll() {
      provider.access.clear();
      provider.refresh.clear();
    },
    close() {
      return new Promise((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
