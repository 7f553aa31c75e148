/**
 * The `amber` command: parses the command line and runs one subcommand against a started host.
 * Exit codes: 0 done, 1 failed, 2 usage (an unknown command, plugin, panel or option; the
 * message lists what exists).
 *
 * @module
 */

import {
  type AllowanceWindow,
  AmberError,
  type CommandTreeNode,
  configDir,
  describeError,
  type Plugin,
  UnknownPluginError,
} from "@amber/core";
import { makeBundledPlugins } from "@amber/plugins";
import { ProviderClient } from "@amber/providers/client";
import { checkConfig } from "./config_check.ts";
import { ConfigFileError } from "./config_file.ts";
import { intOption, parseArgs, UsageError } from "./args.ts";
import { type Host, openHost } from "./host.ts";
import {
  describeBound,
  describeContributions,
  describeRequires,
  describeSchema,
  describeState,
  pluginConsoleLines,
} from "./plugin_console.ts";
import {
  accountSettings,
  type ProviderOverrides,
  resolveProvider,
  UnknownProviderError,
} from "./provider_settings.ts";
import { VERSION } from "./version.ts";

/** Options of {@linkcode main} for embedders. */
export interface MainOptions {
  /** The plugins of this harness; the bundled ones by default. */
  readonly plugins?: () => readonly Plugin[];
}

/** Where the CLI writes. */
export interface Io {
  /** Standard output. */
  out(text: string): void;
  /** Standard error. */
  err(text: string): void;
}

const USAGE = `amber ${VERSION}: a plugin runtime for coding-agent sessions

usage: amber <command> [options]

commands:
  plugins list                    every plugin, grouped by category
  plugins info <id>               one plugin: state, failure reason, contributions
  plugins enable|disable <id>     switch a plugin on or off (persisted); --cascade also
                                  switches off the active plugins that require it
  plugins graph                   the activation order, with each plugin's requirements
  config check                    every problem in the configuration, with file and line
  tools                           every tool with its owner
  cmd <root> <path...> [arg]      run a plugin command (amber cmd hello greet amber)
  status [--width N]              the status bar
  panel <id> [--width N]          a panel's text
  providers                       every provider preset (flavor, plugin, base URL, default
                                  model, key variable and whether it is set) and every flavor
  models                          the models the provider offers (asks its API)
  wallet                          the provider's account balance and quota windows

options:
  --config-dir DIR                the config directory (else $AMBER_CONFIG_DIR,
                                  $XDG_CONFIG_HOME/amber, ~/.config/amber)
  --workspace DIR                 the workspace (else the directory amber started in)
  --provider NAME                 the provider preset (else provider in config.yaml, else openai)
  --model NAME                    the model (else model in config.yaml, else the preset's)
  --base-url URL                  the API's base URL (else baseUrl in config.yaml, else the
                                  preset's); the key comes from the variable the preset names,
                                  or apiKeyEnv in config.yaml
  --version                       the version
  --help                          this text`;

const COMMANDS = [
  "plugins",
  "tools",
  "cmd",
  "status",
  "panel",
  "config",
  "providers",
  "models",
  "wallet",
];

/**
 * Runs the CLI on `args` and returns the exit code.
 *
 * @example
 * ```ts
 * import { main } from "@amber/cli";
 * const lines: string[] = [];
 * const code = await main(["--version"], { out: (t) => lines.push(t), err: () => {} });
 * console.log(code, lines[0].startsWith("amber ")); // 0 true
 * ```
 */
export async function main(
  args: readonly string[],
  io: Io,
  options: MainOptions = {},
): Promise<number> {
  let host: Host | undefined;
  try {
    const parsed = parseArgs(
      args,
      ["config-dir", "workspace", "width", "provider", "model", "base-url"],
      ["version", "help", "cascade"],
    );
    if (parsed.switches.has("version")) {
      io.out(`amber ${VERSION}`);
      return 0;
    }
    const [command, ...rest] = parsed.words;
    if (parsed.switches.has("help") || command === undefined || command === "help") {
      io.out(USAGE);
      return command === undefined && !parsed.switches.has("help") ? 2 : 0;
    }
    if (!COMMANDS.includes(command)) {
      throw new UsageError(`unknown command '${command}'; commands: ${COMMANDS.join(", ")}`);
    }
    const plugins = options.plugins ?? makeBundledPlugins;
    if (command === "config") {
      return await configCommand(parsed.options.get("config-dir"), rest, plugins(), io);
    }
    host = await openHost({
      plugins: plugins(),
      configDir: parsed.options.get("config-dir"),
      workspace: parsed.options.get("workspace") ?? Deno.env.get("INIT_CWD"),
      onDiagnostic: (d) => io.err(`amber: plugin '${d.pluginId}' (${d.where}): ${d.message}`),
    });
    const width = intOption(parsed, "width", terminalWidth());
    const overrides: ProviderOverrides = {
      provider: parsed.options.get("provider"),
      model: parsed.options.get("model"),
      baseUrl: parsed.options.get("base-url"),
    };
    switch (command) {
      case "plugins":
        return await pluginsCommand(host, rest, parsed.switches.has("cascade"), io);
      case "tools":
        return toolsCommand(host, io);
      case "cmd":
        return await cmdCommand(host, rest, io);
      case "status":
        io.out(host.registries.status.compose(width, host.snapshot(overrides)).text);
        return 0;
      case "providers":
        return providersCommand(host, rest, overrides, io);
      case "models":
        return await modelsCommand(host, rest, overrides, io);
      case "wallet":
        return await walletCommand(host, rest, overrides, io);
      default:
        return panelCommand(host, rest, width, io);
    }
  } catch (error) {
    if (
      error instanceof UsageError || error instanceof UnknownPluginError ||
      error instanceof UnknownProviderError
    ) {
      io.err(`amber: ${error.message}`);
      return 2;
    }
    // Our own errors already say what and where; anything else keeps its class name.
    const ours = error instanceof AmberError || error instanceof ConfigFileError;
    io.err(`amber: ${ours ? (error as Error).message : describeError(error)}`);
    if (error instanceof ConfigFileError) io.err("amber: `amber config check` lists every problem");
    return 1;
  } finally {
    await host?.close();
  }
}

async function configCommand(
  dir: string | undefined,
  words: readonly string[],
  plugins: readonly Plugin[],
  io: Io,
): Promise<number> {
  if (words.length !== 1 || words[0] !== "check") {
    throw new UsageError("usage: amber config check");
  }
  const configDirectory = dir ?? configDir(Deno.env.toObject());
  const check = await checkConfig(configDirectory, plugins);
  if (check.problems.length === 0) {
    io.out(
      `${configDirectory}: no problems; ${check.active.length} of ${check.plugins} plugins active`,
    );
    return 0;
  }
  for (const problem of check.problems) io.out(problem);
  io.out(`${check.problems.length} problem${check.problems.length === 1 ? "" : "s"}`);
  return 1;
}

async function pluginsCommand(
  host: Host,
  words: readonly string[],
  cascade: boolean,
  io: Io,
): Promise<number> {
  const [verb, id, ...extra] = words;
  const verbs = ["list", "info", "enable", "disable", "graph"];
  if (verb === undefined || verb === "list") {
    if (id !== undefined) throw new UsageError("plugins list takes no arguments");
    io.out(pluginConsoleLines(host.runtime.list(), Number.MAX_SAFE_INTEGER).join("\n"));
    return 0;
  }
  if (!verbs.includes(verb)) {
    throw new UsageError(`unknown plugins command '${verb}'; commands: ${verbs.join(", ")}`);
  }
  if (verb === "graph") {
    if (id !== undefined) throw new UsageError("plugins graph takes no arguments");
    io.out(graphLines(host).join("\n"));
    return 0;
  }
  if (id === undefined || extra.length > 0) {
    throw new UsageError(`usage: amber plugins ${verb} <id>`);
  }
  if (verb === "info") {
    const info = host.runtime.info(id);
    const { plugin } = info;
    const lines = [
      `${plugin.id} ${plugin.version}: ${plugin.name}`,
      ...(plugin.description ? [`  ${plugin.description}`] : []),
      `  category: ${plugin.category?.trim() || "other"}`,
      `  state: ${describeState(info.state)}`,
      `  requires: ${describeRequires(plugin)}`,
      `  bound: ${describeBound(plugin.bound)}`,
      `  config: ${describeSchema(plugin)}`,
      `  contributions: ${describeContributions(info.contributions)}`,
      ...info.contributions.map((c) => `    ${c.kind} '${c.name}': ${c.ids.join(", ")}`),
      ...info.declined.map((d) => `  declined '${d.name}': ${d.reason}`),
    ];
    io.out(lines.join("\n"));
    return 0;
  }
  if (cascade && verb !== "disable") throw new UsageError("--cascade goes with plugins disable");
  const result = await host.runtime.setState(id, verb === "enable", { cascade });
  for (const other of result.cascaded) io.out(`${other}: switched off first (it requires ${id})`);
  io.out(`${id}: ${describeState(result.state)}${result.path ? ` (saved to ${result.path})` : ""}`);
  for (const other of result.unblocked) io.out(`${other}: active (it was waiting for ${id})`);
  return result.state.status === "failed" ? 1 : 0;
}

function graphLines(host: Host): string[] {
  const order = host.runtime.order();
  const width = Math.max(0, ...order.map((id) => id.length));
  const lines = order.map((id, i) => {
    const { plugin, state } = host.runtime.info(id);
    return `${String(i + 1).padStart(3)}. ${id.padEnd(width)}  ${plugin.version.padEnd(8)}  ${
      describeState(state).padEnd(8)
    }  requires ${describeRequires(plugin)}`;
  });
  const outside = host.runtime.list().filter((view) => !order.includes(view.plugin.id));
  if (outside.length > 0) {
    lines.push("not in the order:");
    for (const view of outside) lines.push(`     ${view.plugin.id}: ${describeState(view.state)}`);
  }
  return lines;
}

function toolsCommand(host: Host, io: Io): number {
  const rows = host.registries.tool.list().map((entry) => [
    entry.tool.name,
    entry.owner,
    entry.tool.readOnly ? "read-only" : "writes",
    entry.tool.requiresApproval ? "decided per call" : "never",
  ]);
  io.out(rows.length === 0 ? "(no tools)" : table(["tool", "owner", "access", "approval"], rows));
  return 0;
}

async function cmdCommand(host: Host, words: readonly string[], io: Io): Promise<number> {
  const [rootWord, ...rest] = words;
  const roots = host.registries.command.tree();
  const names = roots.map((r) => r.name).join(", ");
  if (rootWord === undefined) {
    throw new UsageError(`usage: amber cmd <root> <path...> [arg]; roots: ${names}`);
  }
  const root = roots.find((r) => r.name === rootWord);
  if (root === undefined) {
    throw new UsageError(`unknown command root '${rootWord}'; roots: ${names}`);
  }
  let node: CommandTreeNode = root;
  const path: string[] = [];
  let i = 0;
  for (; i < rest.length; i++) {
    const child: CommandTreeNode | undefined = node.children.find((c) => c.name === rest[i]);
    if (child === undefined) break;
    path.push(child.name);
    node = child;
  }
  if (node.action === undefined && node.children.length > 0) {
    const where = [rootWord, ...path].join(" ");
    const next = rest[i] === undefined ? "" : ` has no '${rest[i]}';`;
    throw new UsageError(
      `'${where}'${next} choose one of: ${node.children.map((c) => c.name).join(", ")}`,
    );
  }
  const outcome = await host.registries.command.dispatch(rootWord, path, rest.slice(i).join(" "));
  if (outcome.ok) {
    io.out(outcome.text);
    return 0;
  }
  io.err(`amber: ${outcome.error}`);
  return 1;
}

function panelCommand(host: Host, words: readonly string[], width: number, io: Io): number {
  const [id, ...extra] = words;
  const panels = host.registries.panel.list();
  const known = panels.map((p) => p.id).join(", ");
  if (id === undefined || extra.length > 0) {
    throw new UsageError(`usage: amber panel <id>; panels: ${known}`);
  }
  const panel = panels.find((p) => p.id === id);
  const lines = panel && host.registries.panel.render(id, width);
  if (panel === undefined || lines === undefined) {
    throw new UsageError(`unknown panel '${id}'; panels: ${known}`);
  }
  io.out(
    [panel.title, "─".repeat(Math.min(width, Math.max(panel.title.length, 1))), ...lines].join(
      "\n",
    ),
  );
  return 0;
}

function providersCommand(
  host: Host,
  words: readonly string[],
  overrides: ProviderOverrides,
  io: Io,
): number {
  if (words.length > 0) throw new UsageError("providers takes no arguments");
  const providers = host.registries.provider;
  // config.yaml's apiKeyEnv names the key of config.yaml's provider, so that row shows it.
  const configured = host.config.provider?.trim() || "openai";
  const configKeyEnv = host.config.apiKeyEnv?.trim() || undefined;
  const rows = providers.presets().map((preset) => {
    const keyEnv = (preset.name === configured ? configKeyEnv : undefined) ?? preset.keyEnv;
    // Only whether the variable holds something is shown, never its value.
    const set = keyEnv !== undefined && (Deno.env.get(keyEnv)?.trim() ?? "") !== "";
    const key = keyEnv === undefined
      ? (preset.requiresKey ? "needs apiKeyEnv" : "no key needed")
      : set
      ? "set"
      : preset.requiresKey
      ? "not set"
      : "not set (optional)";
    return [
      preset.name,
      preset.flavor,
      preset.owner,
      preset.baseUrl,
      preset.defaultModel || "-",
      keyEnv ?? "-",
      key,
    ];
  });
  const lines = [
    rows.length === 0 ? "(no providers)" : table(
      ["preset", "flavor", "plugin", "base URL", "default model", "key env", "key"],
      rows,
    ),
    "",
    table(["flavor", "plugin"], flavorRows(host)),
  ];
  try {
    const resolved = resolveProvider(host, overrides);
    lines.push(
      "",
      `in use: ${resolved.preset.name}, model ${resolved.model}, ${resolved.settings.baseUrl}`,
    );
  } catch (error) {
    lines.push("", `in use: ${error instanceof Error ? error.message : String(error)}`);
  }
  io.out(lines.join("\n"));
  return 0;
}

// The live flavors, then those a plugin that is not active declares: they fail loudly until it
// is switched back on.
function flavorRows(host: Host): string[][] {
  const live = host.registries.provider.flavors();
  const rows = live.map((entry) => [entry.flavor, entry.owner]);
  const seen = new Set(live.map((entry) => entry.flavor));
  for (const view of host.runtime.list()) {
    const bound = view.plugin.bound?.flavors;
    if (bound?.kind !== "exact" || view.state.status === "active") continue;
    for (const flavor of bound.ids) {
      if (seen.has(flavor)) continue;
      seen.add(flavor);
      rows.push([flavor, `${view.plugin.id} (${describeState(view.state)})`]);
    }
  }
  return rows;
}

async function modelsCommand(
  host: Host,
  words: readonly string[],
  overrides: ProviderOverrides,
  io: Io,
): Promise<number> {
  if (words.length > 0) throw new UsageError("models takes no arguments");
  const resolved = resolveProvider(host, overrides);
  const client = new ProviderClient(resolved.flavor.dialect(), resolved.settings);
  // A ProviderError names the URL it tried (never with the key); main reports it and exits 1.
  const models = await client.models();
  io.out(models.length === 0 ? "(no models)" : models.join("\n"));
  return 0;
}

async function walletCommand(
  host: Host,
  words: readonly string[],
  overrides: ProviderOverrides,
  io: Io,
): Promise<number> {
  if (words.length > 0) throw new UsageError("wallet takes no arguments");
  const resolved = resolveProvider(host, overrides);
  const request = accountSettings(resolved);
  const { wallet, allowance } = host.registries;
  await Promise.all([wallet.refresh(request), allowance.refresh(request)]);
  const lines = [
    `provider: ${request.provider} (${request.baseUrl})`,
    `balance: ${wallet.readout(request)}`,
  ];
  const snapshot = allowance.snapshot(request);
  if (snapshot?.plan) lines.push(`plan: ${snapshot.plan}`);
  if (snapshot?.creditsBalance !== undefined) {
    const unit = snapshot.currency ?? snapshot.unit;
    lines.push(`credits: ${snapshot.creditsBalance}${unit ? ` ${unit}` : ""}`);
  }
  if (snapshot === undefined || snapshot.windows.length === 0) {
    lines.push("windows: -");
  } else {
    for (const window of snapshot.windows) lines.push(describeWindow(window, snapshot.unit));
  }
  io.out(lines.join("\n"));
  if (!resolved.keySet && resolved.preset.requiresKey && resolved.keyEnv !== undefined) {
    io.err(`amber: ${resolved.keyEnv} is not set, so there is no account to read`);
  }
  return 0;
}

function describeWindow(window: AllowanceWindow, unit: string | undefined): string {
  const parts = [
    window.percentUsed === undefined ? "use unknown" : `${Math.round(window.percentUsed)}% used`,
  ];
  if (window.remaining !== undefined) {
    const of = window.entitlement === undefined ? "" : ` of ${window.entitlement}`;
    parts.push(`${window.remaining}${of}${unit ? ` ${unit}` : ""} left`);
  }
  if (window.resetsAt) parts.push(`resets ${window.resetsAt}`);
  return `${window.label}: ${parts.join(", ")}`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

function terminalWidth(): number {
  try {
    return Deno.stdout.isTerminal() ? Deno.consoleSize().columns : 80;
  } catch {
    return 80;
  }
}
