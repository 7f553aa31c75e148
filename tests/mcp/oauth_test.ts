import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/client/auth"
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import {
  createMcpOAuth,
  forgetMcpTokens,
  type McpOAuth,
  McpOAuthError,
  mcpOAuthPath,
  type OAuthInteraction,
} from "../../mcp/oauth.ts";
import type { McpOAuthSettings } from "../../mcp/types.ts";
import { type OAuthTestServer, startOAuthServer } from "./_oauth_server.ts";

const SERVER = "secured";

/** The user's browser: opens the authorization URL, follows the redirect to the callback. */
class Browser implements OAuthInteraction {
  readonly opened: URL[] = [];
  readonly notices: string[] = [];
  readonly pages: Promise<{ status: number; text: string }>[] = [];
  /** Rewrites the redirect before following it (a forged or refused answer). */
  tamper: ((callback: URL) => URL) | undefined;

  authorize(url: URL): void {
    this.opened.push(url);
    this.pages.push(this.#visit(url));
  }

  notice(message: string): void {
    this.notices.push(message);
  }

  async #visit(url: URL): Promise<{ status: number; text: string }> {
    const grant = await fetch(url, { redirect: "manual" });
    await grant.body?.cancel();
    assert.equal(grant.status, 302);
    let callback = new URL(grant.headers.get("location")!);
    if (this.tamper) callback = this.tamper(callback);
    const page = await fetch(callback);
    return { status: page.status, text: await page.text() };
  }
}

interface Fixture {
  readonly server: OAuthTestServer;
  readonly configDir: string;
  readonly browser: Browser;
  /** Every error the flows threw, to look for leaked secrets. */
  readonly thrown: unknown[];
  oauth(settings?: McpOAuthSettings, env?: Record<string, string>): Promise<McpOAuth>;
  /** Connects as connect.ts does: on UnauthorizedError, complete and connect again. */
  connect(oauth: McpOAuth, signal?: AbortSignal): Promise<Client>;
  whoami(client: Client): Promise<string>;
  stored(): Promise<{ tokens?: { access_token: string }; url?: string }>;
}

async function withServer(test: (fixture: Fixture) => Promise<void>): Promise<void> {
  const server = await startOAuthServer();
  const configDir = await Deno.makeTempDir();
  const browser = new Browser();
  const thrown: unknown[] = [];
  const open: McpOAuth[] = [];
  const clients: Client[] = [];
  const attempt = async (oauth: McpOAuth) => {
    const transport = new StreamableHTTPClientTransport(server.url, {
      authProvider: oauth.provider,
    });
    const client = new Client({ name: "amber-test", version: "0.0.0" });
    await client.connect(transport);
    clients.push(client);
    return client;
  };
  const fixture: Fixture = {
    server,
    configDir,
    browser,
    thrown,
    async oauth(settings = {}, env = {}) {
      const oauth = await createMcpOAuth({
        configDir,
        server: SERVER,
        settings,
        env,
        interaction: browser,
        url: server.url.href,
      });
      open.push(oauth);
      return oauth;
    },
    async connect(oauth, signal = AbortSignal.timeout(10_000)) {
      const transport = new StreamableHTTPClientTransport(server.url, {
        authProvider: oauth.provider,
      });
      const client = new Client({ name: "amber-test", version: "0.0.0" });
      try {
        await client.connect(transport);
        clients.push(client);
        return client;
      } catch (error) {
        thrown.push(error);
        if (!(error instanceof UnauthorizedError)) throw error;
      }
      try {
        await oauth.complete(transport, signal);
      } catch (error) {
        thrown.push(error);
        throw error;
      }
      return await attempt(oauth);
    },
    async whoami(client) {
      const result = await client.callTool({ name: "whoami", arguments: {} });
      const content = result.content as { type: string; text: string }[];
      return content[0].text;
    },
    async stored() {
      return JSON.parse(await Deno.readTextFile(mcpOAuthPath(configDir, SERVER)));
    },
  };
  try {
    await test(fixture);
    assertNoSecret(server.issued, thrown, browser.notices);
  } finally {
    for (const client of clients) await client.close();
    for (const oauth of open) await oauth.close();
    await server.close();
    await Deno.remove(configDir, { recursive: true });
  }
}

function texts(value: unknown): string[] {
  if (value instanceof Error) {
    return [value.message, value.stack ?? "", ...texts(value.cause)];
  }
  return value === undefined ? [] : [String(value)];
}

function assertNoSecret(secrets: readonly string[], thrown: unknown[], notices: string[]): void {
  const said = [...thrown.flatMap(texts), ...notices];
  for (const secret of secrets) {
    for (const text of said) {
      assert.ok(!text.includes(secret), `a secret appears in: ${text.slice(0, 80)}`);
    }
  }
}

Deno.test("OAuth: the browser authorizes once; the 0600 file's tokens serve the next connect", async () => {
  await withServer(
    async ({ server, configDir, browser, thrown, oauth, connect, whoami, stored }) => {
      const first = await oauth({ scope: "mcp" });
      const client = await connect(first);
      assert.equal(browser.opened.length, 1);
      const page = await browser.pages[0];
      assert.equal(page.status, 200);
      assert.match(page.text, /authorized for secured/);
      assert.ok(thrown[0] instanceof UnauthorizedError);
      assert.equal(await whoami(client), server.clients[0].client_id);
      assert.equal(server.clients[0].client_name, "amber");
      assert.equal(server.clients[0].scope, "mcp");
      assert.deepEqual(
        { ...server.counts },
        {
          registrations: 1,
          authorizations: 1,
          codeExchanges: 1,
          refreshes: 0,
          refusedRefreshes: 0,
        },
      );

      const path = mcpOAuthPath(configDir, SERVER);
      if (Deno.build.os !== "windows") {
        assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
        assert.equal((await Deno.stat(`${configDir}/mcp/oauth`)).mode! & 0o777, 0o700);
      }
      const state = await stored();
      assert.equal(state.url, server.url.href);
      assert.equal(state.tokens?.access_token, server.issued.at(-2));
      assert.deepEqual([...Deno.readDirSync(`${configDir}/mcp/oauth`)].map((e) => e.name), [
        "secured.json",
      ]);

      // Another run: the stored tokens, no browser, no registration, the same port.
      await first.close();
      const second = await oauth({ scope: "mcp" });
      assert.equal(second.provider.redirectUrl, String(first.provider.redirectUrl));
      const again = await connect(second);
      assert.equal(await whoami(again), server.clients[0].client_id);
      assert.equal(browser.opened.length, 1);
      assert.deepEqual(
        { ...server.counts },
        {
          registrations: 1,
          authorizations: 1,
          codeExchanges: 1,
          refreshes: 0,
          refusedRefreshes: 0,
        },
      );
      assert.deepEqual(browser.notices, []);
    },
  );
});

Deno.test("OAuth: an expired access token is refreshed by the SDK without asking the user", async () => {
  await withServer(async ({ server, browser, oauth, connect, whoami, stored }) => {
    await (await connect(await oauth())).close();
    const before = (await stored()).tokens?.access_token;
    server.expireAccessTokens();
    const client = await connect(await oauth());
    assert.equal(await whoami(client), server.clients[0].client_id);
    assert.equal(server.counts.refreshes, 1);
    assert.equal(server.counts.authorizations, 1);
    assert.equal(browser.opened.length, 1);
    const after = (await stored()).tokens?.access_token;
    assert.notEqual(after, before);
    assert.equal(after, server.issued.at(-2));
  });
});

Deno.test("OAuth: two refreshes at once take turns, the second with the rotated refresh token", async () => {
  await withServer(async ({ server, browser, oauth, connect, whoami, stored }) => {
    await (await connect(await oauth())).close();
    server.expireAccessTokens();
    // Two connections refused at the same moment both refresh with the same refresh token, which
    // the server rotates: the second waits for the first and uses the refresh token it stored.
    const flows = [await oauth(), await oauth()];
    const results = await Promise.all(
      flows.map((flow) => auth(flow.provider, { serverUrl: server.url })),
    );
    assert.deepEqual(results, ["AUTHORIZED", "AUTHORIZED"]);
    assert.equal(server.counts.refreshes, 2);
    assert.equal(server.counts.refusedRefreshes, 0);
    assert.equal(server.counts.authorizations, 1);
    assert.deepEqual(browser.notices, []);
    assert.equal((await stored()).tokens?.access_token, server.issued.at(-2));
    assert.equal(await whoami(await connect(await oauth())), server.clients[0].client_id);
    assert.equal(browser.opened.length, 1);
  });
});

Deno.test("OAuth: tokens another process stored are kept when this one's refresh failed", async () => {
  const configDir = await Deno.makeTempDir();
  const notices: string[] = [];
  const interaction = { authorize: () => {}, notice: (text: string) => void notices.push(text) };
  const path = mcpOAuthPath(configDir, SERVER);
  const store = (refresh: string) =>
    Deno.writeTextFile(
      path,
      JSON.stringify({
        tokens: { access_token: "a", token_type: "Bearer", refresh_token: refresh },
      }),
    );
  try {
    await Deno.mkdir(`${configDir}/mcp/oauth`, { recursive: true });
    await store("R1");
    const flow = await createMcpOAuth({
      configDir,
      server: SERVER,
      settings: {},
      env: {},
      interaction,
    });
    const provider = flow.provider;
    const params = new URLSearchParams({ grant_type: "refresh_token", refresh_token: "R1" });
    await provider.addClientAuthentication!(new Headers(), params, "http://127.0.0.1/token");
    // The other process refreshed meanwhile: R1 was spent, R2 stored. This refresh (R1) failed.
    await store("R2");
    await provider.invalidateCredentials!("tokens");
    assert.equal((await provider.tokens())?.refresh_token, "R2");
    assert.deepEqual(notices, []);
    // R2 sent and refused: those are deleted.
    params.set("refresh_token", "R2");
    await provider.addClientAuthentication!(new Headers(), params, "http://127.0.0.1/token");
    assert.equal(params.get("refresh_token"), "R2");
    await provider.invalidateCredentials!("tokens");
    assert.equal(await provider.tokens(), undefined);
    assert.deepEqual(notices, [
      "secured: the server refused the stored OAuth tokens; they were deleted",
    ]);
    await flow.close();
  } finally {
    await Deno.remove(configDir, { recursive: true });
  }
});

Deno.test("OAuth: revoked tokens are deleted with a notice and the user is asked again", async () => {
  await withServer(async ({ server, browser, thrown, oauth, connect, whoami, stored }) => {
    await (await connect(await oauth())).close();
    server.revokeAll();
    const client = await connect(await oauth());
    assert.equal(await whoami(client), server.clients[0].client_id);
    assert.equal(browser.opened.length, 2);
    assert.equal(server.counts.authorizations, 2);
    assert.equal(server.counts.registrations, 1);
    assert.deepEqual(browser.notices, [
      "secured: the server refused the stored OAuth tokens; they were deleted",
    ]);
    assert.equal((await stored()).tokens?.access_token, server.issued.at(-2));
    assert.equal(thrown.filter((error) => error instanceof UnauthorizedError).length, 2);
  });
});

Deno.test("OAuth: once closed, a needed authorization fails instead of showing a dead URL", async () => {
  await withServer(async ({ server, browser, oauth, connect, whoami }) => {
    const flow = await oauth();
    const client = await connect(flow);
    await flow.close();
    // Mid-session: the refresh still works after close.
    server.expireAccessTokens();
    assert.equal(await whoami(client), server.clients[0].client_id);
    // (The SDK may refresh twice here, its POST and its GET stream each; they take turns.)
    assert.ok(server.counts.refreshes >= 1);
    assert.equal(server.counts.refusedRefreshes, 0);
    // Revoked: a new authorization is needed, and the call fails without showing a URL.
    server.revokeAll();
    await assert.rejects(whoami(client), /secured: the server asks for a new authorization/);
    assert.equal(browser.opened.length, 1);
  });
});

Deno.test("OAuth: an unreadable state file is deleted with a notice and authorization starts over", async () => {
  await withServer(async ({ server, configDir, browser, oauth, connect, whoami }) => {
    const path = mcpOAuthPath(configDir, SERVER);
    await Deno.mkdir(`${configDir}/mcp/oauth`, { recursive: true });
    await Deno.writeTextFile(path, '{"tokens": {"access_token": 42}}');
    const flow = await oauth();
    assert.equal(browser.notices.length, 1);
    assert.match(browser.notices[0], /^secured: the stored OAuth state .*secured\.json could not/);
    assert.match(browser.notices[0], /\(its tokens are malformed\); it was deleted/);
    assert.equal(await flow.provider.tokens(), undefined);
    await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
    const client = await connect(flow);
    assert.equal(await whoami(client), server.clients[0].client_id);

    await Deno.writeTextFile(path, "not json at all");
    await oauth();
    assert.match(browser.notices[1], /\(it is not JSON\)/);
  });
});

Deno.test("OAuth: state stored for another URL is deleted, never sent to this server", async () => {
  await withServer(async ({ configDir, browser, oauth, stored }) => {
    const path = mcpOAuthPath(configDir, SERVER);
    await Deno.mkdir(`${configDir}/mcp/oauth`, { recursive: true });
    const old = { access_token: "old-secret-token", token_type: "Bearer" };
    await Deno.writeTextFile(
      path,
      JSON.stringify({ url: "https://elsewhere.test/mcp?key=hidden", tokens: old }),
    );
    const flow = await oauth();
    assert.equal(await flow.provider.tokens(), undefined);
    await assert.rejects(stored(), Deno.errors.NotFound);
    assert.equal(browser.notices.length, 1);
    assert.match(browser.notices[0], /was for https:\/\/elsewhere\.test\/mcp, not http:/);
    assert.ok(!browser.notices[0].includes("old-secret-token"));
    assert.ok(!browser.notices[0].includes("hidden"));
  });
});

Deno.test("OAuth: forgetMcpTokens makes the next connect authorize again", async () => {
  await withServer(async ({ server, configDir, browser, oauth, connect }) => {
    await connect(await oauth());
    await forgetMcpTokens(configDir, SERVER);
    await assert.rejects(Deno.stat(mcpOAuthPath(configDir, SERVER)), Deno.errors.NotFound);
    await connect(await oauth());
    assert.equal(browser.opened.length, 2);
    assert.equal(server.counts.registrations, 2);
  });
});

Deno.test("OAuth: the callback ignores a wrong state and reports a refusal", async () => {
  await withServer(async ({ server, browser, oauth, connect }) => {
    browser.tamper = (callback) => {
      callback.searchParams.set("state", "forged");
      return callback;
    };
    const flow = await oauth();
    const waiting = connect(flow, AbortSignal.timeout(1_000));
    const forged = await new Promise<{ status: number; text: string }>((resolve) => {
      const poll = () =>
        browser.pages.length > 0 ? resolve(browser.pages[0]) : setTimeout(poll, 10);
      poll();
    });
    assert.equal(forged.status, 400);
    assert.match(forged.text, /not for the authorization amber started/);
    // The forged answer did not end the wait: the timeout did.
    await assert.rejects(waiting, (error: Error) => {
      assert.ok(error instanceof McpOAuthError);
      assert.match(error.message, /^secured: the authorization was not completed \(/);
      return true;
    });

    browser.tamper = (callback) => {
      const refused = new URL(callback.pathname, callback);
      refused.searchParams.set("state", callback.searchParams.get("state")!);
      refused.searchParams.set("error", "access_denied");
      refused.searchParams.set("error_description", "the user said no");
      return refused;
    };
    await assert.rejects(connect(await oauth()), (error: Error) => {
      assert.ok(error instanceof McpOAuthError);
      assert.equal(
        error.message,
        "secured: the authorization was refused: access_denied (the user said no)",
      );
      return true;
    });
    assert.equal((await browser.pages[1]).status, 400);
    assert.equal(server.counts.codeExchanges, 0);
  });
});

Deno.test("OAuth: complete without an authorization under way fails at once", async () => {
  await withServer(async ({ oauth }) => {
    const flow = await oauth();
    const finish = () => Promise.reject(new Error("not to be called"));
    await assert.rejects(
      flow.complete({ finishAuth: finish }, new AbortController().signal),
      /secured: the server refused access, but no authorization was started/,
    );
  });
});

Deno.test("OAuth: a configured client is used as is, its secret read from the environment", async () => {
  const configDir = await Deno.makeTempDir();
  const interaction = { authorize: () => {} };
  try {
    const settings = { clientId: "amber-app", clientSecretEnv: "DOCS_SECRET" };
    await assert.rejects(
      createMcpOAuth({ configDir, server: SERVER, settings, env: {}, interaction }),
      (error: Error) => {
        assert.ok(error instanceof McpOAuthError);
        assert.equal(
          error.message,
          "secured: oauth.clientSecretEnv names DOCS_SECRET, which is not set",
        );
        return true;
      },
    );
    const flow = await createMcpOAuth({
      configDir,
      server: SERVER,
      settings,
      env: { DOCS_SECRET: "s3cret" },
      interaction,
    });
    assert.deepEqual(await flow.provider.clientInformation(), {
      client_id: "amber-app",
      client_secret: "s3cret",
    });
    // No dynamic registration may replace a configured client.
    assert.equal(flow.provider.saveClientInformation, undefined);
    await flow.close();
  } finally {
    await Deno.remove(configDir, { recursive: true });
  }
});

Deno.test("OAuth: a configured callback port is used, and a taken one is an error", async () => {
  const configDir = await Deno.makeTempDir();
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const interaction = { authorize: () => {} };
  try {
    const port = taken.addr.port;
    await assert.rejects(
      createMcpOAuth({
        configDir,
        server: SERVER,
        settings: { callbackPort: port },
        env: {},
        interaction,
      }),
      new RegExp(
        `^McpOAuthError: secured: the OAuth callback port ${port} \\(oauth.callbackPort\\) is in use$`,
      ),
    );
    taken.close();
    const flow = await createMcpOAuth({
      configDir,
      server: SERVER,
      settings: { callbackPort: port },
      env: {},
      interaction,
    });
    assert.equal(flow.provider.redirectUrl, `http://127.0.0.1:${port}/callback`);
    await flow.close();
  } finally {
    try {
      taken.close();
    } catch {
      // Closed above.
    }
    await Deno.remove(configDir, { recursive: true });
  }
});

Deno.test("OAuth: an authorization URL that is not https nor local is refused, not shown", async () => {
  const configDir = await Deno.makeTempDir();
  const shown: URL[] = [];
  try {
    const flow = await createMcpOAuth({
      configDir,
      server: SERVER,
      settings: {},
      env: {},
      interaction: { authorize: (url) => void shown.push(url) },
    });
    await assert.rejects(
      Promise.resolve(flow.provider.redirectToAuthorization(new URL("javascript:alert(1)"))),
      McpOAuthError,
    );
    await assert.rejects(
      Promise.resolve(
        flow.provider.redirectToAuthorization(new URL("http://auth.example/authorize")),
      ),
      McpOAuthError,
    );
    await flow.provider.redirectToAuthorization(new URL("https://auth.example/authorize"));
    assert.deepEqual(shown.map(String), ["https://auth.example/authorize"]);
    await flow.close();
  } finally {
    await Deno.remove(configDir, { recursive: true });
  }
});

Deno.test("OAuth: a server name that could leave the folder is refused", async () => {
  await assert.rejects(forgetMcpTokens("/tmp", "../x"), McpOAuthError);
  assert.throws(() => mcpOAuthPath("/tmp", "a/b"), McpOAuthError);
});
