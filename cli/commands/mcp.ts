/**
 * `amber mcp list|add|remove|tools|test|approve`: the MCP servers of `config.yaml` and of the
 * workspace's `.mcp.json`, from the command line. `list` starts the servers as a session would
 * (approved ones only) to say how each stands; `tools` and `test` connect the one server named,
 * by itself; `add` and `remove` edit `config.yaml` keeping the rest of it as it is.
 *
 * @module
 */

import type { Diagnostic } from "@amber/core";
import { configDir as defaultConfigDir } from "@amber/core";
import type { McpServerSpec } from "@amber/mcp";
import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext, Io } from "../command.ts";
import { loadConfigFile } from "../config_file.ts";
import { MCP_WAIT_MS } from "../host.ts";
import { loadModule } from "../lazy_modules.ts";
import { plainText } from "../plain_text.ts";
import { table } from "../text_table.ts";

/** `amber mcp`. */
export const mcpCommand: CliCommand = {
  name: "mcp",
  usage: `  mcp list [--json]               the MCP servers (config.yaml, ./.mcp.json): source,
                                  transport, state, tools (connects the approved ones)
  mcp add NAME -- COMMAND ARGS... add a stdio server to config.yaml [--env K=V]...
  mcp add NAME --url URL          add a Streamable HTTP server [--type sse] [--header 'K: V']...
  mcp remove NAME                 remove a server from config.yaml
  mcp tools NAME                  connect to a server and list its tools (read-only, disabled)
  mcp test NAME                   connect, initialize, count what it offers, time it
  mcp approve NAME                allow a server of the workspace's .mcp.json to start`,
  options: ["url", "type", "env", "header"],
  flags: ["json"],
  run: mcp,
};

// `@amber/mcp` (and the SDK) and what reads the servers' files load only when a verb needs them,
// by specifiers `deno run` does not read ahead (see lazy_modules.ts).
function mcpModule(): Promise<typeof import("@amber/mcp")> {
  return loadModule("@amber/mcp");
}

function sourcesModule(): Promise<typeof import("../mcp_sources.ts")> {
  return loadModule("./mcp_sources.ts");
}

const VERBS = ["list", "add", "remove", "tools", "test", "approve"];

async function mcp(context: CommandContext): Promise<number> {
  const [verb = "list", name, ...rest] = context.words;
  if (!VERBS.includes(verb)) {
    throw new UsageError(`unknown mcp command '${verb}'; commands: ${VERBS.join(", ")}`);
  }
  const { options, switches } = context.parsed;
  const adding = ["url", "type", "env", "header"].filter((option) => options.has(option));
  if (verb !== "add" && adding.length > 0) {
    throw new UsageError(`--${adding[0]} goes with mcp add`);
  }
  if (switches.has("json") && verb !== "list") throw new UsageError("--json goes with mcp list");
  if (verb === "list") {
    if (name !== undefined) throw new UsageError("mcp list takes no arguments");
    return await list(context);
  }
  if (name === undefined) throw new UsageError(`usage: amber mcp ${verb} NAME`);
  if (verb === "add") return await add(context, name, rest);
  if (rest.length > 0) throw new UsageError(`usage: amber mcp ${verb} NAME`);
  if (verb === "remove") return await remove(context, name);
  if (verb === "approve") return await approve(context, name);
  return await inspect(context, name, verb === "test");
}

function configDirOf(context: CommandContext): string {
  return context.configDir ?? defaultConfigDir(Deno.env.toObject());
}

// Every server declared, where it stands before anything connects: config.yaml's, then the
// workspace's (approved or not).
async function declared(context: CommandContext): Promise<{
  readonly specs: readonly McpServerSpec[];
  readonly awaiting: ReadonlySet<McpServerSpec>;
  readonly changed: ReadonlySet<McpServerSpec>;
}> {
  const configDir = configDirOf(context);
  const config = await loadConfigFile(configDir, {
    onServerProblem: (problem) => context.io.err(plainText(`amber: ${problem.message}`)),
  });
  const { mcpSources } = await sourcesModule();
  const sources = await mcpSources({ configDir, workspace: context.workspace, config });
  for (const problem of sources.problems) context.io.err(plainText(`amber: ${problem}`));
  const awaiting = sources.awaiting.map((a) => a.spec);
  return {
    specs: [...sources.specs, ...awaiting],
    awaiting: new Set(awaiting),
    changed: new Set(sources.awaiting.filter((a) => a.changed).map((a) => a.spec)),
  };
}

function find(specs: readonly McpServerSpec[], name: string): McpServerSpec {
  const spec = specs.find((s) => s.name === name) ??
    specs.find((s) => s.name.toLowerCase() === name.toLowerCase());
  if (spec !== undefined) return spec;
  const names = specs.map((s) => s.name).join(", ") || "none";
  throw new UsageError(`no MCP server named '${name}' (servers: ${names})`);
}

// A server's log lines and the diagnostics of starting it are the diagnostics' business, not
// this command's output: what goes wrong with a server shows in its state, and the problems of
// the files that declare them were said already.
function quiet(io: Io): (diagnostic: Diagnostic) => void {
  return (d) => {
    if (d.where === "log" || d.where === "mcp" || d.pluginId.startsWith("mcp.")) return;
    io.err(plainText(`amber: plugin '${d.pluginId}' (${d.where}): ${d.message}`));
  };
}

async function list(context: CommandContext): Promise<number> {
  const { io } = context;
  const { specs, awaiting, changed } = await declared(context);
  const json = context.parsed.switches.has("json");
  if (specs.length === 0) {
    if (json) io.out("[]");
    else io.out("no MCP servers (add one with amber mcp add, or in ./.mcp.json)");
    return 0;
  }
  const host = await context.host({ onDiagnostic: quiet(io), mcp: { connect: true } });
  await host.mcp?.ready(MCP_WAIT_MS);
  const rows = specs.map((spec) => {
    const view = host.mcp?.get(spec.name);
    const plugin = host.runtime.ids().includes(spec.pluginId)
      ? host.runtime.state(spec.pluginId)
      : undefined;
    let state: string;
    let reason: string | undefined;
    if (awaiting.has(spec)) {
      state = changed.has(spec) ? "changed, awaiting approval" : "awaiting approval";
    } else if (plugin?.status === "disabled") state = "off";
    else if (plugin?.status === "failed") [state, reason] = ["failed", plugin.reason];
    else if (view === undefined) state = "idle";
    else {
      const s = view.state;
      state = s.status;
      if (s.status === "failed" || s.status === "reconnecting") reason = s.reason;
    }
    return {
      name: spec.name,
      pluginId: spec.pluginId,
      source: spec.source,
      transport: view?.state.status === "connected" ? view.state.transport : spec.entry.transport,
      state,
      ...(reason !== undefined ? { reason } : {}),
      ...(view?.state.status === "connected" ? { server: view.state.server } : {}),
      tools: view?.tools.filter((tool) => !tool.disabled).length ?? 0,
      prompts: view?.prompts.length ?? 0,
      resources: view?.resources.length ?? 0,
    };
  });
  if (json) {
    io.out(JSON.stringify(rows, null, 2));
    return 0;
  }
  io.out(table(
    ["NAME", "SOURCE", "TRANSPORT", "STATE", "TOOLS"],
    rows.map((row) => [
      row.name,
      row.source,
      row.transport,
      row.reason === undefined ? row.state : `${row.state}: ${firstLine(row.reason)}`,
      String(row.tools),
    ]),
  ));
  const waiting = specs.filter((spec) => awaiting.has(spec));
  for (const spec of waiting) io.out(`approve '${spec.name}' with: amber mcp approve ${spec.name}`);
  return 0;
}

async function add(
  context: CommandContext,
  name: string,
  rest: readonly string[],
): Promise<number> {
  const { options, repeated } = context.parsed;
  const url = options.get("url");
  const type = options.get("type");
  const env = repeated.get("env") ?? [];
  const headers = repeated.get("header") ?? [];
  const { MCP_SERVER_NAME, parseServers } = await mcpModule();
  if (!MCP_SERVER_NAME.test(name)) {
    throw new UsageError(`a server name is 1 to 48 letters, digits, '_' or '-', got '${name}'`);
  }
  let entry: Record<string, unknown>;
  if (url !== undefined) {
    if (rest.length > 0) throw new UsageError("mcp add takes a command or --url, not both");
    if (env.length > 0) throw new UsageError("--env goes with a command (a stdio server)");
    if (type !== undefined && type !== "http" && type !== "sse") {
      throw new UsageError(`--type must be http or sse, got '${type}'`);
    }
    entry = { type: type ?? "http", url };
    if (headers.length > 0) entry.headers = pairs(headers, ":", "--header 'Name: value'");
  } else {
    if (rest.length === 0) {
      throw new UsageError(
        "usage: amber mcp add NAME -- COMMAND [ARGS...] | amber mcp add NAME --url URL",
      );
    }
    if (type !== undefined) throw new UsageError("--type goes with --url");
    if (headers.length > 0) throw new UsageError("--header goes with --url (an HTTP server)");
    entry = { command: rest[0], ...(rest.length > 1 ? { args: rest.slice(1) } : {}) };
    if (env.length > 0) entry.env = pairs(env, "=", "--env NAME=value");
  }
  // Checked as config.yaml will be read, so nothing is written that amber would drop.
  const [problem] = parseServers({ [name]: entry }, "config.yaml", false).problems;
  if (problem !== undefined) {
    throw new UsageError(`${[name, ...problem.keys.slice(1)].join(".")}: ${problem.message}`);
  }
  const { addServerToConfig } = await import("../mcp_config_edit.ts");
  const path = await addServerToConfig(configDirOf(context), name, entry);
  const what = url ?? rest.join(" ");
  context.io.out(
    `added '${name}' (${url === undefined ? "stdio" : type ?? "http"}: ${what}) to ${path}`,
  );
  return 0;
}

// `K=V` / `K: V` words into a mapping; the separator's first occurrence splits.
function pairs(words: readonly string[], separator: string, form: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const word of words) {
    const at = word.indexOf(separator);
    const key = at < 0 ? "" : word.slice(0, at).trim();
    if (key === "") throw new UsageError(`expected ${form}, got '${word}'`);
    out[key] = word.slice(at + separator.length).trim();
  }
  return out;
}

async function remove(context: CommandContext, name: string): Promise<number> {
  const configDir = configDirOf(context);
  const { removeServerFromConfig } = await import("../mcp_config_edit.ts");
  const removed = await removeServerFromConfig(configDir, name);
  if (removed !== undefined) {
    // Its OAuth tokens go with it: a server added again under the name signs in afresh.
    const { forgetMcpTokens } = await mcpModule();
    await forgetMcpTokens(configDir, removed);
    context.io.out(`removed '${removed}' from ${configDir}/config.yaml`);
    return 0;
  }
  const { readWorkspaceServers } = await sourcesModule();
  const workspace = await readWorkspaceServers(context.workspace);
  const there = workspace?.servers.find((s) => s.name.toLowerCase() === name.toLowerCase());
  if (workspace !== undefined && there !== undefined) {
    throw new UsageError(
      `'${there.name}' is declared in ${workspace.path}: edit that file to remove it`,
    );
  }
  const { configServerNames } = await import("../mcp_config_edit.ts");
  const names = (await configServerNames(configDir)).join(", ") || "none";
  throw new UsageError(`config.yaml has no MCP server named '${name}' (servers: ${names})`);
}

async function approve(context: CommandContext, name: string): Promise<number> {
  const { approveServer, readWorkspaceServers } = await sourcesModule();
  const workspace = await readWorkspaceServers(context.workspace);
  for (const problem of workspace?.problems ?? []) context.io.err(plainText(`amber: ${problem}`));
  const spec = workspace?.servers.find((s) => s.name === name) ??
    workspace?.servers.find((s) => s.name.toLowerCase() === name.toLowerCase());
  if (spec === undefined) {
    const { configServerNames } = await import("../mcp_config_edit.ts");
    const inConfig = (await configServerNames(configDirOf(context)))
      .some((n) => n.toLowerCase() === name.toLowerCase());
    if (inConfig) {
      throw new UsageError(`'${name}' is in config.yaml: only a workspace's servers need approval`);
    }
    const names = workspace?.servers.map((s) => s.name).join(", ") || "none";
    const where = workspace?.path ?? `${context.workspace}/.mcp.json`;
    throw new UsageError(`${where} has no server named '${name}' (servers: ${names})`);
  }
  await approveServer(configDirOf(context), context.workspace, spec);
  context.io.out(
    `approved '${spec.name}' of ${spec.source} (${describeEntry(spec)}); ` +
      "it starts with the next session",
  );
  return 0;
}

function describeEntry(spec: McpServerSpec): string {
  const { entry } = spec;
  if (entry.transport === "stdio") return [entry.command ?? "", ...(entry.args ?? [])].join(" ");
  return `${entry.transport} ${entry.url ?? ""}`;
}

// `tools` and `test`: the one server, connected by itself (no session, no other server), then
// closed. A workspace's server must be approved first: connecting starts its command.
async function inspect(context: CommandContext, name: string, test: boolean): Promise<number> {
  const { io } = context;
  const { specs, awaiting } = await declared(context);
  const spec = find(specs, name);
  if (awaiting.has(spec)) {
    throw new UsageError(
      `'${spec.name}' of ${spec.source} is not approved: amber mcp approve ${spec.name}`,
    );
  }
  const { mcpToolName, probeServer } = await mcpModule();
  const stderr: string[] = [];
  let probe;
  try {
    probe = await probeServer({
      spec,
      env: Deno.env.toObject(),
      workspace: context.workspace,
      configDir: configDirOf(context),
      onStderr: (line) => {
        stderr.push(line);
        if (stderr.length > 5) stderr.shift();
      },
      timeoutMs: (spec.entry.timeout ?? 30) * 1000,
      oauth: {
        authorize: (url) => io.err(`amber: to sign in to '${spec.name}', open ${url.href}`),
      },
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    io.err(plainText(`amber: ${spec.name}: cannot connect: ${reason}`));
    for (const line of stderr) io.err(plainText(`  stderr: ${line}`));
    return 1;
  }
  const disabled = new Set(spec.entry.disabledTools ?? []);
  const { tools } = probe;
  if (!test) {
    io.out(table(
      ["TOOL", "AS", "MARKS", "DESCRIPTION"],
      tools.map((tool) => [
        tool.name,
        mcpToolName(spec.name, tool.name),
        [
          ...(tool.readOnly ? ["read-only"] : []),
          ...(tool.destructive ? ["destructive"] : []),
          ...(disabled.has(tool.name) ? ["disabled"] : []),
        ].join(",") || "-",
        firstLine(tool.description),
      ]),
    ));
    return 0;
  }
  const off = tools.filter((tool) => disabled.has(tool.name)).length;
  io.out(`${spec.name}: connected over ${probe.transport} in ${probe.ms} ms (${probe.server})`);
  io.out(
    `  tools: ${tools.length}${off > 0 ? ` (${off} disabled)` : ""}, ` +
      `prompts: ${probe.prompts.length}, resources: ${probe.resources.length}`,
  );
  return 0;
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0].trim();
}
