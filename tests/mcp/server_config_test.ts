import assert from "node:assert/strict";
import {
  entryFingerprint,
  expandEntry,
  MCP_SERVER_NAME,
  McpConfigError,
  mcpPluginId,
  mcpToolName,
  parseMcpJson,
  parseServers,
} from "../../mcp/server_config.ts";
import type { McpServerSpec } from "../../mcp/types.ts";

Deno.test("server names: the pattern, the plugin id in lower case", () => {
  for (const name of ["a", "everything", "my-server_2", "x".repeat(48)]) {
    assert.equal(MCP_SERVER_NAME.test(name), true, name);
  }
  for (const name of ["", "x".repeat(49), "a.b", "a b", "ünï", "a/b"]) {
    assert.equal(MCP_SERVER_NAME.test(name), false, name);
  }
  assert.equal(mcpPluginId("My-Server"), "mcp.my-server");
});

Deno.test("tool names: outside characters become '_', long ones are cut and hashed", async () => {
  assert.equal(mcpToolName("fs", "read_file"), "mcp__fs__read_file");
  assert.equal(mcpToolName("fs", "read file/é"), "mcp__fs__read_file__");
  const exactly = mcpToolName("s", "t".repeat(64 - "mcp__s__".length));
  assert.equal(exactly.length, 64);
  assert.equal(exactly.endsWith("t"), true);

  const tool = "a".repeat(70);
  const long = mcpToolName("server", tool);
  const full = `mcp__server__${tool}`;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(full));
  const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  assert.equal(long, `${full.slice(0, 55)}_${hex.slice(0, 8)}`);
  assert.equal(long.length, 64);
  // Two names alike in their first 55 characters stay apart.
  assert.notEqual(mcpToolName("server", tool + "b"), mcpToolName("server", tool + "c"));
});

Deno.test("parseServers: stdio, http and sse entries with every key", () => {
  const { servers, problems } = parseServers(
    {
      local: {
        command: "node",
        args: ["server.js", "--port", 3000, true],
        env: { DEBUG: "1", PORT: 8080 },
        cwd: "tools",
        disabledTools: ["dangerous"],
        trustReadOnly: true,
        timeout: 12.5,
      },
      remote: {
        type: "http",
        url: "https://example.com/mcp",
        headers: { "X-Team": "amber" },
        bearerTokenEnv: "REMOTE_TOKEN",
        oauth: {
          clientId: "id",
          clientSecretEnv: "SECRET",
          scope: "read write",
          callbackPort: 7777,
        },
      },
      old: { type: "sse", url: "http://127.0.0.1:9/sse", oauth: true },
      typed: { type: "stdio", command: "x" },
    },
    "config.yaml",
    false,
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(servers, [
    {
      name: "local",
      pluginId: "mcp.local",
      source: "config.yaml",
      fromWorkspace: false,
      entry: {
        transport: "stdio",
        command: "node",
        args: ["server.js", "--port", "3000", "true"],
        env: { DEBUG: "1", PORT: "8080" },
        cwd: "tools",
        disabledTools: ["dangerous"],
        trustReadOnly: true,
        timeout: 12.5,
      },
    },
    {
      name: "remote",
      pluginId: "mcp.remote",
      source: "config.yaml",
      fromWorkspace: false,
      entry: {
        transport: "http",
        url: "https://example.com/mcp",
        headers: { "X-Team": "amber" },
        bearerTokenEnv: "REMOTE_TOKEN",
        oauth: {
          clientId: "id",
          clientSecretEnv: "SECRET",
          scope: "read write",
          callbackPort: 7777,
        },
      },
    },
    {
      name: "old",
      pluginId: "mcp.old",
      source: "config.yaml",
      fromWorkspace: false,
      entry: { transport: "sse", url: "http://127.0.0.1:9/sse", oauth: {} },
    },
    {
      name: "typed",
      pluginId: "mcp.typed",
      source: "config.yaml",
      fromWorkspace: false,
      entry: { transport: "stdio", command: "x" },
    },
  ]);
});

Deno.test("parseServers: a bad entry is dropped with where and why, the others load", () => {
  const { servers, problems } = parseServers(
    {
      good: { command: "ok" },
      "bad name": { command: "x" },
      GOOD: { command: "y" },
      noCommand: { args: [] },
      both: { command: "x", url: "http://x" },
      badType: { type: "websocket", url: "ws://x" },
      badArg: { command: "x", args: ["a", { b: 1 }] },
      badEnv: { command: "x", env: { "A-B": "1" } },
      badUrl: { url: "ftp://example.com" },
      notUrl: { type: "http", url: "not a url" },
      badTimeout: { command: "x", timeout: -1 },
      badTrust: { command: "x", trustReadOnly: "yes" },
      badBearer: { url: "https://x", bearerTokenEnv: "not a name" },
      badPort: { url: "https://x", oauth: { callbackPort: 70000 } },
      badDisabled: { command: "x", disabledTools: "all" },
      scalar: "npx server",
      emptyCommand: { command: "  " },
    },
    "config.yaml",
    false,
  );
  assert.deepEqual(servers.map((spec) => spec.name), ["good"]);
  const where = problems.map((problem) => problem.keys.join("."));
  assert.deepEqual(where, [
    "bad name",
    "GOOD",
    "noCommand",
    "both",
    "badType.type",
    "badArg.args.1",
    "badEnv.env.A-B",
    "badUrl.url",
    "notUrl.url",
    "badTimeout.timeout",
    "badTrust.trustReadOnly",
    "badBearer.bearerTokenEnv",
    "badPort.oauth.callbackPort",
    "badDisabled.disabledTools",
    "scalar",
    "emptyCommand.command",
  ]);
  for (const problem of problems) assert.match(problem.message, /not loaded/);
  const clash = problems[1].message;
  assert.match(clash, /'good'/);
  assert.match(clash, /'GOOD'/);
});

Deno.test("parseServers: unknown keys are reported and ignored", () => {
  const { servers, problems } = parseServers(
    {
      a: { command: "x", headers: { A: "1" }, autoApprove: [] },
      b: { url: "https://x", env: { A: "1" }, oauth: { clientId: "c", realm: "r" } },
      c: { command: "x", oauth: true },
    },
    "config.yaml",
    false,
  );
  assert.deepEqual(servers.map((spec) => spec.entry), [
    { transport: "stdio", command: "x" },
    { transport: "http", url: "https://x", oauth: { clientId: "c" } },
    { transport: "stdio", command: "x" },
  ]);
  assert.deepEqual(problems, [
    { keys: ["a", "headers"], message: "unknown key for a stdio server, ignored" },
    { keys: ["a", "autoApprove"], message: "unknown key, ignored" },
    { keys: ["b", "env"], message: "unknown key for a http server, ignored" },
    { keys: ["b", "oauth", "realm"], message: "unknown key, ignored" },
    { keys: ["c", "oauth"], message: "unknown key for a stdio server, ignored" },
  ]);
});

Deno.test("parseServers: not a mapping", () => {
  for (const value of [[], "x", null, 3]) {
    const { servers, problems } = parseServers(value, "config.yaml", false);
    assert.equal(servers.length, 0);
    assert.deepEqual(problems.map((problem) => problem.keys), [[]]);
  }
});

Deno.test("parseMcpJson: workspace servers, problems as path lines", () => {
  const text = JSON.stringify({
    mcpServers: {
      everything: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] },
      web: { type: "http", url: "https://example.com/mcp", disabled: true },
      "my server": { command: "x" },
      broken: { command: "x", args: ["a", 1, null] },
    },
    inputs: [],
  });
  const { servers, problems } = parseMcpJson(text, "/ws/.mcp.json");
  assert.deepEqual(servers.map((spec) => [spec.name, spec.source, spec.fromWorkspace]), [
    ["everything", "/ws/.mcp.json", true],
    ["web", "/ws/.mcp.json", true],
  ]);
  assert.deepEqual(problems, [
    "/ws/.mcp.json: inputs: unknown key, ignored",
    "/ws/.mcp.json: mcpServers.web.disabled: unknown key, ignored",
    "/ws/.mcp.json: mcpServers[\"my server\"]: a server name is 1 to 48 letters, digits, '_' " +
    "or '-'; server not loaded",
    "/ws/.mcp.json: mcpServers.broken.args[2]: must be a string; server not loaded",
  ]);
});

Deno.test("parseMcpJson: not JSON, not an object, no servers", () => {
  const bad = parseMcpJson("{", "/ws/.mcp.json");
  assert.equal(bad.servers.length, 0);
  assert.match(bad.problems[0], /^\/ws\/\.mcp\.json: not valid JSON: /);
  assert.deepEqual(parseMcpJson("[]", "p").problems, ['p: must be an object with "mcpServers"']);
  assert.deepEqual(parseMcpJson("{}", "p"), { servers: [], problems: [] });
});

function spec(entry: unknown): McpServerSpec {
  const { servers, problems } = parseServers({ srv: entry }, "config.yaml", false);
  assert.deepEqual(problems, []);
  return servers[0];
}

Deno.test("expandEntry: ${VAR} and ${VAR:-default} in every expanded field", () => {
  const stdio = spec({
    command: "${BIN_DIR}/server",
    args: ["--root", "${ROOT:-/srv}", "--level=${LEVEL:-info}", "$HOME", "${ not a ref }"],
    env: { TOKEN: "${MY_TOKEN}", MIXED: "a${EMPTY:-b}c${EMPTY}d" },
    cwd: "${WORK}",
  });
  const env = { BIN_DIR: "/opt/bin", MY_TOKEN: "t0k", EMPTY: "", WORK: "sub", LEVEL: "debug" };
  assert.deepEqual(expandEntry(stdio, env), {
    transport: "stdio",
    command: "/opt/bin/server",
    args: ["--root", "/srv", "--level=debug", "$HOME", "${ not a ref }"],
    env: { TOKEN: "t0k", MIXED: "abcd" },
    cwd: "sub",
  });
  // The spec keeps its references: a secret is never written back.
  assert.equal(stdio.entry.env?.TOKEN, "${MY_TOKEN}");

  const http = spec({
    url: "https://${HOST}/mcp?team=${TEAM:-core}",
    headers: { Authorization: "Bearer ${API_TOKEN}" },
    bearerTokenEnv: "OTHER",
  });
  assert.deepEqual(expandEntry(http, { HOST: "api.test", API_TOKEN: "abc", OTHER: "x" }), {
    transport: "http",
    url: "https://api.test/mcp?team=core",
    headers: { Authorization: "Bearer abc" },
    bearerTokenEnv: "OTHER",
  });
});

Deno.test("expandEntry: a missing variable names the server, the field and the variable", () => {
  const cases: [unknown, Record<string, string>, string, string][] = [
    [{ command: "${NOPE}" }, {}, "command", "NOPE"],
    [{ command: "x", args: ["a", "${ARG}"] }, {}, "args[1]", "ARG"],
    [{ command: "x", env: { KEY: "${SECRET_KEY}" } }, {}, "env.KEY", "SECRET_KEY"],
    [{ command: "x", cwd: "${DIR}" }, {}, "cwd", "DIR"],
    [{ url: "https://${HOST}/" }, {}, "url", "HOST"],
    [{ url: "https://x/", headers: { "X-A": "${A}" } }, {}, "headers.X-A", "A"],
    [{ url: "https://x/", bearerTokenEnv: "TOKEN" }, {}, "bearerTokenEnv", "TOKEN"],
    [
      { url: "https://x/", oauth: { clientSecretEnv: "CS" } },
      {},
      "oauth.clientSecretEnv",
      "CS",
    ],
  ];
  for (const [entry, env, field, variable] of cases) {
    assert.throws(() => expandEntry(spec(entry), env), (error: unknown) => {
      assert.ok(error instanceof McpConfigError);
      assert.equal(error.name, "McpConfigError");
      assert.equal(error.server, "srv");
      assert.equal(error.field, field);
      assert.equal(error.variable, variable);
      assert.equal(
        error.message,
        `server 'srv': ${field}: environment variable ${variable} is not set`,
      );
      return true;
    });
  }
});

Deno.test("expandEntry: a URL that expands to something else than http(s) is refused", () => {
  assert.throws(
    () => expandEntry(spec({ url: "${BASE}/mcp" }), { BASE: "file:///etc" }),
    (error: unknown) => error instanceof McpConfigError && error.field === "url",
  );
});

Deno.test("entryFingerprint: stable across key order, changed by any change", async () => {
  const base = spec({ command: "x", args: ["1"], env: { A: "1", B: "2" } }).entry;
  const reordered = {
    env: { B: "2", A: "1" },
    args: ["1"],
    command: "x",
    transport: "stdio",
  } as const;
  assert.equal(await entryFingerprint(base), await entryFingerprint(reordered));
  const variants = [
    { ...base, args: ["2"] },
    { ...base, env: { A: "1", B: "3" } },
    { ...base, cwd: "." },
    { ...base, trustReadOnly: true },
    { ...base, disabledTools: ["x"] },
  ];
  const prints = new Set([await entryFingerprint(base)]);
  for (const variant of variants) prints.add(await entryFingerprint(variant));
  assert.equal(prints.size, variants.length + 1);
  // Same as SHA-256 of the canonical JSON.
  const canonical = '{"args":["1"],"command":"x","env":{"A":"1","B":"2"},"transport":"stdio"}';
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical));
  const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  assert.equal(await entryFingerprint(base), hex);
});
