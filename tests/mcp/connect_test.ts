import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import {
  type ConnectOptions,
  connectServer,
  McpConnectError,
  type McpConnection,
} from "../../mcp/connect.ts";
import { McpConfigError, parseServers } from "../../mcp/server_config.ts";
import { groupAlive } from "../../mcp/stdio_transport.ts";
import type { McpServerSpec } from "../../mcp/types.ts";
import { startOAuthServer } from "./_oauth_server.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31";
const server = (name: string): string =>
  fileURLToPath(new URL(`./_servers/${name}.ts`, import.meta.url));

function spec(entry: unknown, name = "srv"): McpServerSpec {
  const { servers, problems } = parseServers({ [name]: entry }, "config.yaml", false);
  assert.deepEqual(problems, []);
  return servers[0];
}

function options(
  entry: unknown,
  overrides: Partial<ConnectOptions> = {},
): ConnectOptions & { readonly stderr: string[]; readonly spawned: number[] } {
  const stderr: string[] = [];
  const spawned: number[] = [];
  return {
    spec: spec(entry),
    env: Deno.env.toObject(),
    workspace: ROOT,
    configDir: ROOT,
    handlers: { roots: () => [{ uri: `file://${ROOT}`, name: "workspace" }] },
    onStderr: (line) => stderr.push(line),
    onSpawn: (process) => spawned.push(process.pid),
    timeoutMs: 30_000,
    graceMs: 500,
    stderr,
    spawned,
    ...overrides,
  };
}

function denoEntry(name: string, args: string[] = []): Record<string, unknown> {
  return { command: Deno.execPath(), args: ["run", "-A", server(name), ...args] };
}

async function echo(connection: McpConnection, message: string): Promise<unknown> {
  const result = await connection.client.callTool({ name: "echo", arguments: { message } });
  return result.content;
}

// Live processes of group `pgid` per `ps`, zombies left out.
function psGroup(pgid: number): string[] {
  const { stdout } = new Deno.Command("ps", { args: ["-o", "pid=,stat=", "-g", String(pgid)] })
    .outputSync();
  return new TextDecoder().decode(stdout).split("\n").map((line) => line.trim())
    .filter((line) => line !== "" && !line.split(/\s+/)[1]?.startsWith("Z"));
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** server-everything over HTTP (`streamableHttp` or `sse`), in a process group of its own. */
async function startEverything(mode: "streamableHttp" | "sse"): Promise<{
  readonly base: string;
  stop(): Promise<void>;
}> {
  const port = freePort();
  const child = new Deno.Command("npx", {
    args: ["-y", EVERYTHING, mode],
    env: { PORT: String(port) },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    detached: true,
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!new RegExp(`port ${port}`).test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server-everything ${mode} ended: ${seen}`);
    seen += value;
  }
  // Keep draining so that its writes never block.
  const drained = (async () => {
    while (!(await reader.read().catch(() => ({ done: true }))).done) {
      // Nothing to keep.
    }
  })();
  return {
    base: `http://127.0.0.1:${port}`,
    async stop() {
      try {
        Deno.kill(-child.pid, "SIGKILL");
      } catch {
        // Gone.
      }
      await child.status;
      await drained;
    },
  };
}

Deno.test("server-everything over stdio (npx): tools, echo, the env it gets, close ends the group", async () => {
  Deno.env.set("AMBER_H1_PROVIDER_KEY", "sk-amber-secret-0042");
  Deno.env.set("AMBER_H1_NAMED", "passed-on-purpose");
  const sampled: unknown[] = [];
  const opts = options({
    command: "npx",
    args: ["-y", EVERYTHING, "stdio"],
    env: { NAMED_FOR_SERVER: "${AMBER_H1_NAMED}" },
  }, {
    env: Deno.env.toObject(),
    handlers: {
      roots: () => [{ uri: `file://${ROOT}`, name: "workspace" }],
      sample: (params) => {
        sampled.push(params);
        return Promise.resolve({
          role: "assistant",
          model: "fake",
          content: { type: "text", text: "sampled answer" },
        });
      },
    },
  });
  Deno.env.delete("AMBER_H1_PROVIDER_KEY");
  Deno.env.delete("AMBER_H1_NAMED");
  const connection = await connectServer(opts);
  try {
    assert.equal(connection.transport, "stdio");
    assert.match(connection.server, /everything/);
    const { tools } = await connection.client.listTools();
    const names = tools.map((tool) => tool.name);
    assert.ok(names.includes("echo"), names.join());
    // Sampling is advertised (a handler was given); elicitation is not.
    assert.ok(names.includes("trigger-sampling-request"), names.join());
    assert.equal(names.includes("trigger-elicitation-request"), false);
    assert.deepEqual(await echo(connection, "hi"), [{ type: "text", text: "Echo: hi" }]);

    const env = await connection.client.callTool({ name: "get-env", arguments: {} });
    const text = (env.content as { text: string }[])[0].text;
    const seen = JSON.parse(text) as Record<string, string>;
    assert.equal(seen.NAMED_FOR_SERVER, "passed-on-purpose");
    assert.equal(text.includes("sk-amber-secret-0042"), false);
    assert.equal(seen.AMBER_H1_PROVIDER_KEY, undefined);

    const sampling = await connection.client.callTool({
      name: "trigger-sampling-request",
      arguments: { prompt: "say something" },
    });
    assert.match(JSON.stringify(sampling.content), /sampled answer/);
    assert.equal(sampled.length, 1);
  } finally {
    await connection.close();
  }
  assert.equal(await connection.closed, "closed");
  assert.equal(opts.spawned.length, 1);
  assert.equal(groupAlive(opts.spawned[0]), false);
  assert.deepEqual(psGroup(opts.spawned[0]), []);
});

Deno.test("server-everything over Streamable HTTP, over SSE, and http falling back to SSE", async () => {
  const [http, sse] = await Promise.all([
    startEverything("streamableHttp"),
    startEverything("sse"),
  ]);
  try {
    const streamable = await connectServer(options({ type: "http", url: `${http.base}/mcp` }));
    assert.equal(streamable.transport, "http");
    assert.deepEqual(await echo(streamable, "over http"), [
      { type: "text", text: "Echo: over http" },
    ]);
    await streamable.close();
    assert.equal(await streamable.closed, "closed");

    const old = await connectServer(options({ type: "sse", url: `${sse.base}/sse` }));
    assert.equal(old.transport, "sse");
    assert.deepEqual(await echo(old, "over sse"), [{ type: "text", text: "Echo: over sse" }]);
    await old.close();

    // An http entry at an SSE-only server: the POST is refused with a 4xx, SSE is used.
    const fallen = await connectServer(options({ url: `${sse.base}/sse` }));
    assert.equal(fallen.transport, "sse");
    assert.deepEqual(await echo(fallen, "fallback"), [{ type: "text", text: "Echo: fallback" }]);
    await fallen.close();
  } finally {
    await Promise.all([http.stop(), sse.stop()]);
  }
});

interface Loopback {
  readonly url: string;
  readonly seen: Headers[];
  readonly capabilities: (ClientCapabilities | undefined)[];
  readonly roots: unknown[];
  close(): Promise<void>;
}

/** An MCP server on 127.0.0.1 that answers only requests `allow` lets through (401 otherwise). */
function loopback(allow: (headers: Headers) => boolean): Loopback {
  const seen: Headers[] = [];
  const capabilities: (ClientCapabilities | undefined)[] = [];
  const roots: unknown[] = [];
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const listening = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      seen.push(request.headers);
      if (!allow(request.headers)) return new Response("no", { status: 401 });
      const id = request.headers.get("mcp-session-id");
      const known = id === null ? undefined : sessions.get(id);
      if (known !== undefined) return await known.handleRequest(request);
      const mcp = new McpServer({ name: "loopback", version: "9.9.9" });
      mcp.registerTool("echo", { inputSchema: { message: z.string() } }, ({ message }) => ({
        content: [{ type: "text", text: `loop: ${message}` }],
      }));
      mcp.registerTool("roots", {}, async () => {
        capabilities.push(mcp.server.getClientCapabilities());
        roots.push(await mcp.server.listRoots());
        return { content: [{ type: "text", text: "ok" }] };
      });
      const transport: WebStandardStreamableHTTPServerTransport =
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          onsessioninitialized: (session) => void sessions.set(session, transport),
          onsessionclosed: (session) => void sessions.delete(session),
        });
      await mcp.connect(transport);
      return await transport.handleRequest(request);
    },
  );
  return {
    url: `http://127.0.0.1:${listening.addr.port}/mcp`,
    seen,
    capabilities,
    roots,
    close: async () => {
      for (const transport of sessions.values()) await transport.close();
      await listening.shutdown();
    },
  };
}

Deno.test("headers and a bearer token from env reach the server; roots are the handler's", async () => {
  const server = loopback((headers) =>
    headers.get("x-team") === "amber-h1" && headers.get("authorization") === "Bearer tok-123"
  );
  try {
    const connection = await connectServer(options({
      url: server.url,
      headers: { "X-Team": "${TEAM}" },
      bearerTokenEnv: "H1_TOKEN",
    }, { env: { TEAM: "amber-h1", H1_TOKEN: "tok-123" } }));
    assert.equal(connection.server, "loopback 9.9.9");
    assert.deepEqual(await echo(connection, "x"), [{ type: "text", text: "loop: x" }]);
    await connection.client.callTool({ name: "roots", arguments: {} });
    // No sampling or elicitation handler: neither is advertised.
    assert.deepEqual(server.capabilities, [{ roots: { listChanged: true } }]);
    assert.deepEqual(server.roots, [{ roots: [{ uri: `file://${ROOT}`, name: "workspace" }] }]);
    await connection.close();
    assert.ok(server.seen.length >= 3);

    // With handlers, sampling and elicitation are advertised.
    const asking = await connectServer(options({
      url: server.url,
      headers: { "X-Team": "amber-h1" },
      bearerTokenEnv: "H1_TOKEN",
    }, {
      env: { H1_TOKEN: "tok-123" },
      handlers: {
        roots: () => [],
        sample: () => Promise.reject(new Error("not asked")),
        elicit: () => Promise.resolve({ action: "decline" }),
      },
    }));
    await asking.client.callTool({ name: "roots", arguments: {} });
    await asking.close();
    assert.deepEqual(server.capabilities[1], {
      roots: { listChanged: true },
      sampling: {},
      elicitation: { form: {}, url: {} },
    });
    assert.deepEqual(server.roots[1], { roots: [] });
  } finally {
    await server.close();
  }
});

Deno.test("a 401 with a token configured is an error, not an OAuth flow", async () => {
  const server = loopback(() => false);
  try {
    await assert.rejects(
      connectServer(options({ url: server.url, bearerTokenEnv: "H1_TOKEN" }, {
        env: { H1_TOKEN: "wrong" },
        oauth: { authorize: () => assert.fail("no OAuth when a token is configured") },
      })),
      (error: unknown) =>
        error instanceof McpConnectError && /^the server answered HTTP 401: /.test(error.message),
    );
  } finally {
    await server.close();
  }
});

Deno.test("OAuth: a 401 without Authorization authorizes through the browser, then reuses tokens", async () => {
  const oauthServer = await startOAuthServer();
  const configDir = await Deno.makeTempDir({ prefix: "amber-h1-oauth-" });
  const opened: URL[] = [];
  // The user's browser: grants at once, follows the redirect to amber's callback.
  const browser = {
    authorize(url: URL): void {
      opened.push(url);
      (async () => {
        const grant = await fetch(url, { redirect: "manual" });
        await grant.body?.cancel();
        const page = await fetch(grant.headers.get("location")!);
        await page.body?.cancel();
      })();
    },
  };
  try {
    const first = await connectServer(
      options({ url: oauthServer.url.href }, { configDir, oauth: browser, env: {} }),
    );
    assert.equal(first.transport, "http");
    assert.equal(opened.length, 1);
    await first.close();
    const again = await connectServer(
      options({ url: oauthServer.url.href, oauth: true }, { configDir, oauth: browser, env: {} }),
    );
    assert.equal(opened.length, 1);
    assert.equal(oauthServer.counts.authorizations, 1);
    await again.close();

    // Nothing to show the page with: the error says why.
    await assert.rejects(
      connectServer(options({ url: oauthServer.url.href }, {
        configDir: await Deno.makeTempDir({ dir: configDir }),
        env: {},
      })),
      (error: unknown) => error instanceof McpConnectError && /OAuth/.test(error.message),
    );
  } finally {
    await oauthServer.close();
    await Deno.remove(configDir, { recursive: true });
  }
});

Deno.test("a server that never answers initialize is killed at the deadline", async () => {
  const opts = options(denoEntry("hang", ["--at=initialize", "--ignore-term"]), {
    timeoutMs: 1500,
    graceMs: 200,
  });
  const started = performance.now();
  await assert.rejects(connectServer(opts), (error: unknown) => {
    assert.ok(error instanceof McpConnectError);
    assert.equal(
      error.message,
      "it did not answer initialize within 1.5 s; its process was killed",
    );
    return true;
  });
  assert.ok(performance.now() - started < 5000);
  assert.equal(opts.spawned.length, 1);
  assert.deepEqual(psGroup(opts.spawned[0]), []);
});

Deno.test("garbage before or as the answer to initialize: the reason quotes it", async () => {
  for (const at of ["start", "initialize"]) {
    const opts = options(denoEntry("garbage", [`--at=${at}`, "--line=Starting up!"]));
    await assert.rejects(
      connectServer(opts),
      (error: unknown) =>
        error instanceof McpConnectError &&
        error.message === 'it wrote a line that is not JSON-RPC: "Starting up!"',
    );
    assert.deepEqual(psGroup(opts.spawned[0]), []);
  }
});

Deno.test("garbage after connecting ends the connection; closed says why", async () => {
  const opts = options(denoEntry("garbage", ["--at=call"]));
  const connection = await connectServer(opts);
  const call = connection.client.callTool({ name: "spew", arguments: {} });
  await assert.rejects(call);
  assert.match(await connection.closed, /^it wrote a line that is not JSON-RPC: /);
  assert.deepEqual(psGroup(opts.spawned[0]), []);
  await connection.close();
});

Deno.test("a crash: at start the error carries the exit and stderr; later, closed does", async () => {
  const early = options(denoEntry("crash", ["--at-start"]));
  await assert.rejects(
    connectServer(early),
    (error: unknown) =>
      error instanceof McpConnectError &&
      error.message ===
        "its process exited with code 3: crash: told to fail at start, exiting with 3",
  );
  assert.deepEqual(early.stderr, ["crash: told to fail at start, exiting with 3"]);

  const later = options(denoEntry("crash", ["--code=5"]));
  const connection = await connectServer(later);
  await assert.rejects(connection.client.callTool({ name: "boom", arguments: {} }));
  assert.match(await connection.closed, /^its process exited with code 5: crash: /);
  assert.deepEqual(psGroup(later.spawned[0]), []);
});

Deno.test("a missing variable: McpConfigError naming server, field and variable; nothing starts", async () => {
  const opts = options({ command: "npx", args: ["${H1_SURELY_UNSET}"] }, { env: {} });
  await assert.rejects(connectServer(opts), (error: unknown) => {
    assert.ok(error instanceof McpConfigError);
    assert.equal(
      error.message,
      "server 'srv': args[0]: environment variable H1_SURELY_UNSET is not set",
    );
    return true;
  });
  assert.deepEqual(opts.spawned, []);
});

Deno.test("a program that is not there, a folder that is not there", async () => {
  await assert.rejects(
    connectServer(options({ command: "amber-h1-no-such-program" })),
    (error: unknown) =>
      error instanceof McpConnectError &&
      /could not start 'amber-h1-no-such-program'/.test(error.message),
  );
  await assert.rejects(
    connectServer(options({ command: "sh", cwd: "no/such/folder" })),
    (error: unknown) => error instanceof McpConnectError && /no\/such\/folder/.test(error.message),
  );
});

Deno.test("cancelling a connect kills what it started", async () => {
  const controller = new AbortController();
  const opts = options(denoEntry("hang", ["--at=initialize"]), { signal: controller.signal });
  const connecting = connectServer(opts);
  setTimeout(() => controller.abort(), 300);
  await assert.rejects(
    connecting,
    (error: unknown) =>
      error instanceof McpConnectError && error.message === "connecting was cancelled",
  );
  assert.deepEqual(psGroup(opts.spawned[0]), []);
});
