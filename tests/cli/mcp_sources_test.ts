// Where a session's MCP servers come from, in process: config.yaml's `mcp` section (a bad entry
// named with file:line:col and left out, the others kept), the workspace's `.mcp.json` and its
// approvals, and `amber mcp add|remove` editing config.yaml without losing the user's comments.

import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfigFile, readConfigFile } from "../../cli/config_file.ts";
import { openHost } from "../../cli/host.ts";
import {
  addServerToConfig,
  configServerNames,
  McpConfigEditError,
  removeServerFromConfig,
} from "../../cli/mcp_config_edit.ts";
import {
  approvalsPath,
  approveServer,
  isApproved,
  mcpSources,
  readWorkspaceServers,
} from "../../cli/mcp_sources.ts";
import { tempDir } from "../_helpers.ts";
import { moduleGraph } from "../_module_graph.ts";
import { ROOT } from "./_subprocess.ts";

const CONFIG = [
  "model: gpt-5",
  "mcp:",
  "  trustReadOnly: true",
  "  startupWait: 2",
  "  servers:",
  "    good:",
  "      command: good-server",
  "    broken:",
  "      command: x",
  "      args: [ok, {not: a string}]",
  "    typo:",
  "      url: https://example.com/mcp",
  "      colour: blue",
  "    nothing: {}",
  "",
].join("\n");

Deno.test("config.yaml: a bad MCP server entry is named with file:line:col; the others load", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(join(tmp.dir, "config.yaml"), CONFIG);
  const read = await readConfigFile(tmp.dir);
  const messages = read.problems.map((problem) => problem.message.slice(tmp.dir.length + 1));
  assert.equal(messages.length, 3, messages.join("\n"));
  assert.match(messages[0], /^config\.yaml:10:18: mcp\.servers\.broken\.args\[1\]: /);
  assert.match(messages[1], /^config\.yaml:13:15: mcp\.servers\.typo\.colour: /);
  assert.match(messages[2], /^config\.yaml:14:14: mcp\.servers\.nothing: /);
  assert.deepEqual(read.serverProblems, read.problems, "only server entries are at fault");
  // The entry with an unknown key is kept (the key is ignored); the broken ones are left out.
  assert.deepEqual(Object.keys(read.config.mcp?.servers ?? {}), ["good", "typo"]);
  assert.equal(read.config.mcp?.trustReadOnly, true);
  assert.equal(read.config.mcp?.startupWait, 2);
  // Amber starts with what is left, and hands each problem to whoever reports it.
  const reported: string[] = [];
  const config = await loadConfigFile(tmp.dir, {
    onServerProblem: (problem) => reported.push(problem.message),
  });
  assert.deepEqual(Object.keys(config.mcp?.servers ?? {}), ["good", "typo"]);
  assert.equal(config.model, "gpt-5");
  assert.deepEqual(reported, read.problems.map((problem) => problem.message));
});

Deno.test("config.yaml: the mcp section's own fields are checked, and stop amber like any field", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(
    join(tmp.dir, "config.yaml"),
    "mcp:\n  startupWait: soon\n  trustReadOnly: yes please\n  server: {}\n",
  );
  const read = await readConfigFile(tmp.dir);
  assert.deepEqual(read.problems.map((problem) => problem.message.slice(tmp.dir.length + 1)), [
    'config.yaml:2:16: mcp.startupWait: expected a number of seconds, found string "soon"',
    'config.yaml:3:18: mcp.trustReadOnly: expected true or false, found string "yes please"',
    "config.yaml:4:11: mcp.server: unknown field (fields: servers, trustReadOnly, startupWait)",
  ]);
  assert.deepEqual(read.serverProblems, []);
  await assert.rejects(loadConfigFile(tmp.dir), /mcp\.startupWait/);
});

Deno.test("a workspace's server waits for approval; a changed entry asks again", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  const write = (args: string[]) =>
    Deno.writeTextFile(
      join(workspace.dir, ".mcp.json"),
      JSON.stringify({ mcpServers: { files: { command: "files-server", args } } }),
    );
  await write(["--root", "."]);
  const options = { configDir: config.dir, workspace: workspace.dir, config: { plugins: {} } };
  const first = await mcpSources(options);
  assert.deepEqual(first.specs, []);
  assert.deepEqual(first.awaiting.map((a) => [a.spec.name, a.changed]), [["files", false]]);
  const spec = first.awaiting[0].spec;
  assert.equal(spec.fromWorkspace, true);
  assert.equal(await isApproved(config.dir, workspace.dir, spec), false);

  await approveServer(config.dir, workspace.dir, spec);
  const second = await mcpSources(options);
  assert.deepEqual(second.specs.map((s) => s.name), ["files"]);
  assert.deepEqual(second.awaiting, []);
  // Kept under the workspace's real path, with the entry's fingerprint.
  const stored = JSON.parse(await Deno.readTextFile(approvalsPath(config.dir)));
  const real = await Deno.realPath(workspace.dir);
  assert.match(stored.workspaces[real].files, /^[0-9a-f]{64}$/);

  await write(["--root", "/"]);
  const third = await mcpSources(options);
  assert.deepEqual(third.specs, []);
  assert.deepEqual(third.awaiting.map((a) => [a.spec.name, a.changed]), [["files", true]]);

  // Another workspace with the same file is a different workspace: not approved there.
  await using other = await tempDir();
  await Deno.copyFile(join(workspace.dir, ".mcp.json"), join(other.dir, ".mcp.json"));
  await approveServer(config.dir, workspace.dir, third.awaiting[0].spec);
  const elsewhere = await mcpSources({ ...options, workspace: other.dir });
  assert.deepEqual(elsewhere.awaiting.map((a) => a.spec.name), ["files"]);
  assert.deepEqual((await mcpSources(options)).specs.map((s) => s.name), ["files"]);
});

Deno.test("an approve callback is asked about each awaiting server, and a yes is remembered", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  await Deno.writeTextFile(
    join(workspace.dir, ".mcp.json"),
    JSON.stringify({ mcpServers: { yes: { command: "a" }, no: { command: "b" } } }),
  );
  const asked: string[] = [];
  const options = { configDir: config.dir, workspace: workspace.dir, config: { plugins: {} } };
  const sources = await mcpSources({
    ...options,
    approve: (spec) => {
      asked.push(spec.name);
      return Promise.resolve(spec.name === "yes");
    },
  });
  assert.deepEqual(asked, ["yes", "no"]);
  assert.deepEqual(sources.specs.map((s) => s.name), ["yes"]);
  assert.deepEqual(sources.awaiting.map((a) => a.spec.name), ["no"]);
  // Without anyone to ask, the approved one starts and the other still waits.
  const later = await mcpSources(options);
  assert.deepEqual(later.specs.map((s) => s.name), ["yes"]);
  assert.deepEqual(later.awaiting.map((a) => a.spec.name), ["no"]);
});

Deno.test("the host registers approved servers as plugins and asks its approver about the rest", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  await Deno.writeTextFile(
    join(config.dir, "config.yaml"),
    "mcp:\n  servers:\n    docs: {url: https://example.com/mcp}\n    bad: {command: 1}\n",
  );
  await Deno.writeTextFile(
    join(workspace.dir, ".mcp.json"),
    JSON.stringify({ mcpServers: { yes: { command: "a" }, no: { command: "b" } } }),
  );
  const diagnostics: string[] = [];
  const open = (approve?: (name: string) => boolean) =>
    openHost({
      configDir: config.dir,
      workspace: workspace.dir,
      plugins: [],
      onDiagnostic: (d) => diagnostics.push(`${d.pluginId} (${d.where}): ${d.message}`),
      mcp: {
        connect: false,
        ...(approve ? { approve: (spec) => Promise.resolve(approve(spec.name)) } : {}),
      },
    });
  const host = await open((name) => name === "yes");
  try {
    assert.deepEqual(host.mcp?.list().map((view) => [view.name, view.source]), [
      ["docs", "config.yaml"],
      ["yes", join(workspace.dir, ".mcp.json")],
    ]);
    assert.equal(host.runtime.info("mcp.yes").plugin.category, "mcp");
    assert.equal(host.runtime.state("mcp.docs").status, "active");
    assert.deepEqual(host.mcpAwaiting.map((a) => a.spec.name), ["no"]);
    assert.equal(host.runtime.ids().includes("mcp.no"), false);
    assert.match(
      diagnostics[0],
      /^core \(mcp\): .*config\.yaml:4:20: mcp\.servers\.bad\.command: /,
    );
    assert.match(
      diagnostics[1],
      /^mcp\.no \(approval\): the server 'no' of .* it was never approved/,
    );
  } finally {
    await host.close();
  }
  // Without an approver, what was approved starts and nothing is asked.
  const again = await open();
  try {
    assert.deepEqual(again.mcp?.list().map((view) => view.name), ["docs", "yes"]);
  } finally {
    await again.close();
  }
});

Deno.test("without servers the host has no mcp, and nothing is awaiting", async () => {
  await using config = await tempDir();
  const host = await openHost({ configDir: config.dir, workspace: config.dir, plugins: [] });
  try {
    assert.equal(host.mcp, undefined);
    assert.deepEqual(host.mcpAwaiting, []);
  } finally {
    await host.close();
  }
});

Deno.test("a workspace's server with a config.yaml server's plugin id is left out, saying why", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  await Deno.writeTextFile(
    join(workspace.dir, ".mcp.json"),
    JSON.stringify({ mcpServers: { Docs: { command: "evil" }, bad: { args: [] } } }),
  );
  const sources = await mcpSources({
    configDir: config.dir,
    workspace: workspace.dir,
    config: { plugins: {}, mcp: { servers: { docs: { url: "https://example.com/mcp" } } } },
  });
  assert.deepEqual(sources.specs.map((s) => [s.name, s.source]), [["docs", "config.yaml"]]);
  assert.deepEqual(sources.awaiting, []);
  assert.equal(sources.problems.length, 2, sources.problems.join("\n"));
  assert.match(sources.problems[0], /\.mcp\.json: mcpServers\.bad/);
  assert.match(
    sources.problems[1],
    /mcpServers\.Docs: left out: .*'docs' of config\.yaml .*mcp\.docs/,
  );
});

Deno.test("an approvals file that cannot be read leaves the workspace's servers unapproved", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  await Deno.writeTextFile(
    join(workspace.dir, ".mcp.json"),
    JSON.stringify({ mcpServers: { files: { command: "x" } } }),
  );
  await Deno.mkdir(join(config.dir, "mcp"));
  await Deno.writeTextFile(approvalsPath(config.dir), "{not json");
  const sources = await mcpSources({
    configDir: config.dir,
    workspace: workspace.dir,
    config: { plugins: {} },
  });
  assert.deepEqual(sources.awaiting.map((a) => a.spec.name), ["files"]);
  assert.match(sources.problems[0], /approvals\.json: not valid JSON/);
  // Approving does not overwrite a file it cannot read.
  await assert.rejects(
    approveServer(config.dir, workspace.dir, sources.awaiting[0].spec),
    /approvals\.json: not valid JSON/,
  );
  assert.equal(await Deno.readTextFile(approvalsPath(config.dir)), "{not json");
});

Deno.test("concurrent approvals are all kept", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  const names = ["a", "b", "c", "d", "e", "f"];
  await Deno.writeTextFile(
    join(workspace.dir, ".mcp.json"),
    JSON.stringify({ mcpServers: Object.fromEntries(names.map((n) => [n, { command: n }])) }),
  );
  const read = await readWorkspaceServers(workspace.dir);
  await Promise.all(read!.servers.map((spec) => approveServer(config.dir, workspace.dir, spec)));
  const sources = await mcpSources({
    configDir: config.dir,
    workspace: workspace.dir,
    config: { plugins: {} },
  });
  assert.deepEqual(sources.specs.map((s) => s.name), names);
});

Deno.test("amber mcp add and remove edit config.yaml and keep everything else in it", async () => {
  await using tmp = await tempDir();
  const original = [
    "# amber settings",
    "model: gpt-5 # the model",
    "",
    "# my servers",
    "mcp:",
    "  startupWait: 3 # seconds",
    "  servers:",
    "    # the docs server",
    "    docs:",
    "      url: https://example.com/mcp",
    "",
    "plugins:",
    "  hello: {greeting: Hi} # friendly",
    "",
  ].join("\n");
  const path = join(tmp.dir, "config.yaml");
  await Deno.writeTextFile(path, original);
  await addServerToConfig(tmp.dir, "files", {
    command: "npx",
    args: ["-y", "files-server", "${HOME}"],
    env: { TOKEN: "${FILES_TOKEN}" },
  });
  const added = await Deno.readTextFile(path);
  for (const line of original.split("\n").filter((l) => l.includes("#"))) {
    assert.ok(added.includes(line), `kept: ${line}\n---\n${added}`);
  }
  const read = await readConfigFile(tmp.dir);
  assert.deepEqual(read.problems, []);
  assert.deepEqual(read.config.mcp?.servers, {
    docs: { url: "https://example.com/mcp" },
    files: {
      command: "npx",
      args: ["-y", "files-server", "${HOME}"],
      env: { TOKEN: "${FILES_TOKEN}" },
    },
  });
  assert.equal(read.config.mcp?.startupWait, 3);
  assert.deepEqual(read.config.plugins, { hello: { greeting: "Hi" } });
  assert.deepEqual(await configServerNames(tmp.dir), ["docs", "files"]);

  await assert.rejects(addServerToConfig(tmp.dir, "DOCS", { command: "x" }), McpConfigEditError);
  assert.equal(await Deno.readTextFile(path), added, "a refused add writes nothing");

  assert.equal(await removeServerFromConfig(tmp.dir, "files"), "files");
  assert.equal(await Deno.readTextFile(path), original);
  assert.equal(await removeServerFromConfig(tmp.dir, "nope"), undefined);
});

Deno.test("amber mcp add creates config.yaml, and refuses a file it cannot read as YAML", async () => {
  await using tmp = await tempDir();
  const dir = join(tmp.dir, "fresh");
  await addServerToConfig(dir, "files", { command: "files-server" });
  assert.equal(
    await Deno.readTextFile(join(dir, "config.yaml")),
    "mcp:\n  servers:\n    files:\n      command: files-server\n",
  );
  assert.equal(await removeServerFromConfig(dir, "files"), "files");
  assert.equal(await Deno.readTextFile(join(dir, "config.yaml")), "");

  await Deno.writeTextFile(join(dir, "config.yaml"), "model: [\n");
  await assert.rejects(
    addServerToConfig(dir, "files", { command: "x" }),
    (error: Error) =>
      error instanceof McpConfigEditError && /config\.yaml:2:1: /.test(error.message),
  );
  await Deno.writeTextFile(join(dir, "config.yaml"), "mcp: [1, 2]\n");
  await assert.rejects(
    addServerToConfig(dir, "files", { command: "x" }),
    /config\.yaml:1:6: mcp: expected a mapping/,
  );
});

Deno.test("start-up loads @amber/mcp and the SDK only when a server is configured", async () => {
  // `deno run` reads the graph of every literal `import("...")` too (see cli/lazy_modules.ts):
  // the MCP modules are reached only by computed specifiers.
  const modules = [
    ["cli", "host.ts"],
    ["cli", "config_file.ts"],
    ["cli", "commands", "mcp.ts"],
    ["cli", "commands", "run.ts"],
    ["cli", "commands", "plugins.ts"],
  ];
  for (const module of modules) {
    const seen = (await moduleGraph(join(ROOT, ...module), { dynamic: true })).reached;
    const mcp = [...seen].filter((s) =>
      s.includes("/mcp/") || s.includes("modelcontextprotocol") || s.endsWith("/mcp_sources.ts")
    );
    assert.deepEqual(mcp, [], module.join("/"));
  }
});
