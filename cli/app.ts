/**
 * The `amber` command: parses the command line and runs one subcommand. Each subcommand lives
 * in `commands/` and is one entry of {@linkcode COMMANDS}, loaded only when it runs (or when the
 * help lists them all), so a command starts without evaluating the others' modules. Exit codes:
 * 0 done, 1 failed, 2 usage (an unknown command, plugin, panel, provider or option; the message
 * lists what exists).
 *
 * @module
 */

import { AmberError, describeError, type Plugin, UnknownPluginError } from "@amber/core";
import { makeBundledPlugins } from "@amber/plugins";
import {
  commandWord,
  intOption,
  parseArgs,
  type ParsedArgs,
  suggestOption,
  UnknownOptionError,
  UsageError,
} from "./args.ts";
import type { CliCommand, CommandContext, Io } from "./command.ts";
import { ConfigFileError } from "./config_file.ts";
import { didYouMean } from "./did_you_mean.ts";
import { type Host, openHost } from "./host.ts";
import { loadModule } from "./lazy_modules.ts";
import { outsideSession } from "./outside_session.ts";
import { plainText } from "./plain_text.ts";
import { UnknownProviderError } from "./provider_settings.ts";
import { terminalWidth } from "./text_table.ts";
import { VERSION } from "./version.ts";

export type { Io } from "./command.ts";

/** Options of {@linkcode main} for embedders. */
export interface MainOptions {
  /** The plugins of this harness; the bundled ones by default. */
  readonly plugins?: () => readonly Plugin[];
}

/**
 * A subcommand before its module is loaded: the word that selects it and the options it takes
 * (the command line cannot be split into words without knowing which options take a value),
 * and how to load the rest. They agree with the loaded {@linkcode CliCommand}'s.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { COMMANDS } from "@amber/cli";
 * const entry = COMMANDS.find((c) => c.name === "run")!;
 * const command = await entry.load();
 * assert.equal(command.name, "run");
 * assert.deepEqual(command.options, entry.options);
 * ```
 */
export interface CommandEntry {
  /** The word that selects it. */
  readonly name: string;
  /** Options that take a value, without dashes. */
  readonly options?: readonly string[];
  /** Options without a value. */
  readonly flags?: readonly string[];
  /** Loads the command's module; the module is evaluated once. */
  load(): Promise<CliCommand>;
}

const PROVIDER_OPTIONS = ["provider", "model", "base-url"];

// The specifiers are literals so that `deno compile` and `deno bundle` include every command.
/** Every subcommand, in the order the help lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "demo",
    flags: ["interactive"],
    load: async () =>
      (await loadModule<typeof import("./commands/demo.ts")>("./commands/demo.ts")).demoCommand,
  },
  {
    name: "run",
    options: ["provider", "model", "base-url", "approve", "max-steps", "resume", "compact-at"],
    flags: ["json"],
    load: async () =>
      (await loadModule<typeof import("./commands/run.ts")>("./commands/run.ts")).runCommand,
  },
  {
    name: "sessions",
    load: async () =>
      (await loadModule<typeof import("./commands/sessions.ts")>("./commands/sessions.ts"))
        .sessionsCommand,
  },
  {
    name: "serve",
    options: ["port", "host"],
    load: async () =>
      (await loadModule<typeof import("./commands/serve.ts")>("./commands/serve.ts")).serveCommand,
  },
  {
    name: "plugins",
    flags: ["cascade", "dry-run", "json", "grant", "trusted"],
    load: async () =>
      (await loadModule<typeof import("./commands/plugins.ts")>("./commands/plugins.ts"))
        .pluginsCommand,
  },
  {
    name: "plugin",
    options: ["scope"],
    load: async () =>
      (await loadModule<typeof import("./commands/plugin_new.ts")>("./commands/plugin_new.ts"))
        .pluginCommand,
  },
  {
    name: "mcp",
    options: ["url", "type", "env", "header"],
    flags: ["json"],
    load: async () =>
      (await loadModule<typeof import("./commands/mcp.ts")>("./commands/mcp.ts")).mcpCommand,
  },
  {
    name: "config",
    load: async () =>
      (await loadModule<typeof import("./commands/config.ts")>("./commands/config.ts"))
        .configCommand,
  },
  {
    name: "doctor",
    flags: ["json"],
    load: async () =>
      (await loadModule<typeof import("./commands/doctor.ts")>("./commands/doctor.ts"))
        .doctorCommand,
  },
  {
    name: "tools",
    load: async () =>
      (await loadModule<typeof import("./commands/tools.ts")>("./commands/tools.ts")).toolsCommand,
  },
  {
    name: "cmd",
    load: async () =>
      (await loadModule<typeof import("./commands/cmd.ts")>("./commands/cmd.ts")).cmdCommand,
  },
  {
    name: "status",
    options: ["width"],
    load: async () =>
      (await loadModule<typeof import("./commands/panel.ts")>("./commands/panel.ts")).statusCommand,
  },
  {
    name: "panel",
    options: ["width"],
    load: async () =>
      (await loadModule<typeof import("./commands/panel.ts")>("./commands/panel.ts")).panelCommand,
  },
  {
    name: "providers",
    options: PROVIDER_OPTIONS,
    load: async () =>
      (await loadModule<typeof import("./commands/providers.ts")>("./commands/providers.ts"))
        .providersCommand,
  },
  {
    name: "models",
    options: PROVIDER_OPTIONS,
    flags: ["json"],
    load: async () =>
      (await loadModule<typeof import("./commands/models.ts")>("./commands/models.ts"))
        .modelsCommand,
  },
  {
    name: "wallet",
    options: PROVIDER_OPTIONS,
    load: async () =>
      (await loadModule<typeof import("./commands/providers.ts")>("./commands/providers.ts"))
        .walletCommand,
  },
  {
    name: "acp",
    options: ["provider", "model", "base-url", "approve", "max-steps"],
    load: async () =>
      (await loadModule<typeof import("./commands/acp.ts")>("./commands/acp.ts")).acpCommand,
  },
  {
    name: "batch",
    options: ["queue", "out"],
    flags: ["json"],
    // Typed by hand: `typeof import(...)` would pull BullMQ's and ioredis's types (which want
    // Node's) into every module that reads this table, and into `deno doc`.
    load: async () =>
      (await loadModule<{ readonly batchCommand: CliCommand }>("./commands/batch.ts"))
        .batchCommand,
  },
  {
    name: "worker",
    options: ["queue", "concurrency", "approve", "name"],
    load: async () =>
      (await loadModule<{ readonly workerCommand: CliCommand }>("./commands/worker.ts"))
        .workerCommand,
  },
];

// Every command takes these (the provider options choose what `status`, `doctor`... describe).
const GLOBAL_OPTIONS = ["config-dir", "workspace", "effort", ...PROVIDER_OPTIONS];
const GLOBAL_FLAGS = ["version", "help"];
// The interactive session's own, with no command word.
const SESSION_OPTIONS = ["approve", "max-steps", "resume"];

// The help is the one place that needs every command's module.
async function usage(): Promise<string> {
  const commands = await Promise.all(COMMANDS.map((entry) => entry.load()));
  return `amber ${VERSION}: coding-agent sessions where every feature is a plugin

usage: amber <command> [options]
       amber [--provider P] [--model M] [--base-url U] [--resume ID]
                                  in a terminal: the interactive session (/help inside)

commands:
${commands.map((command) => command.usage).join("\n")}

options:
${GLOBAL_HELP}`;
}

// One command's help: its own lines, then the options every command takes.
async function commandUsage(entry: CommandEntry): Promise<string> {
  const command = await entry.load();
  return `usage: amber ${entry.name} [options]

${command.usage}

options of every command:
${GLOBAL_HELP}`;
}

// The command line for one command (or, with none, the interactive session): only the options
// it takes. A mistyped one is named with the closest of those and the list of them.
function parseFor(args: readonly string[], entry: CommandEntry | undefined): ParsedArgs {
  const own = entry === undefined ? SESSION_OPTIONS : entry.options ?? [];
  const ownFlags = entry?.flags ?? [];
  const valued = [...new Set([...GLOBAL_OPTIONS, ...own])];
  const flags = [...new Set([...GLOBAL_FLAGS, ...ownFlags])];
  try {
    return parseArgs(args, valued, flags);
  } catch (error) {
    if (!(error instanceof UnknownOptionError)) throw error;
    const what = entry === undefined ? "the interactive session" : entry.name;
    const mine = [
      ...own.filter((o) => !GLOBAL_OPTIONS.includes(o)).map((o) => `--${o} <value>`),
      ...ownFlags.map((f) => `--${f}`),
    ];
    const every = [...GLOBAL_OPTIONS, ...GLOBAL_FLAGS].map((o) => `--${o}`).join(", ");
    const takes = mine.length > 0 ? `${what} takes ${mine.join(", ")}; ` : "";
    const hint = suggestOption(error.option, [...valued, ...flags]);
    throw new UsageError(
      `unknown option '--${error.option}' for ${what}${hint}; ${takes}every command takes ${every}`,
    );
  }
}

// A word that names no command: the closest that does, and the commands there are.
function noCommand(what: string, word: string): UsageError {
  const names = COMMANDS.map((c) => c.name);
  return new UsageError(
    `${what} '${word}'${didYouMean(word, names)}; commands: ${names.join(", ")}`,
  );
}

// A workspace that is not there is a typo, not a place to create files in.
async function checkWorkspace(dir: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dir);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new UsageError(`--workspace ${dir}: no such directory`);
    }
    throw error;
  }
  if (!info.isDirectory) throw new UsageError(`--workspace ${dir}: not a directory`);
}

const GLOBAL_HELP = `  --config-dir DIR                the config directory (else $AMBER_CONFIG_DIR,
                                  $XDG_CONFIG_HOME/amber, ~/.config/amber)
  --workspace DIR                 the workspace (else the directory amber started in)
  --provider NAME                 the provider preset (else provider in config.yaml, else openai)
  --model NAME                    the model (else model in config.yaml, else the preset's)
  --base-url URL                  the API's base URL (else baseUrl in config.yaml, else the
                                  preset's); the key comes from the variable the preset names,
                                  or apiKeyEnv in config.yaml
  --effort LEVEL                  the reasoning effort asked of the model (else
                                  reasoningEffort in config.yaml)
  --version                       the version
  --help                          this text (with a command: that command's)`;

/**
 * Runs the CLI on `args` and returns the exit code.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { main } from "@amber/cli";
 * const lines: string[] = [];
 * const code = await main(["--version"], { out: (t) => lines.push(t), err: () => {} });
 * assert.equal(code, 0);
 * assert.match(lines[0], /^amber /);
 * ```
 */
export async function main(
  args: readonly string[],
  io: Io,
  options: MainOptions = {},
): Promise<number> {
  let host: Promise<Host> | undefined;
  try {
    // Which command it is decides which options there are, and so how the line splits.
    const first = commandWord(args, [
      ...GLOBAL_OPTIONS,
      ...SESSION_OPTIONS,
      ...COMMANDS.flatMap((c) => c.options ?? []),
    ]);
    const named = COMMANDS.find((c) => c.name === first);
    if (first !== undefined && first !== "help" && named === undefined) {
      // `amber --max-step 3`: the mistyped option, not its value, is what to point at.
      parseFor(args.slice(0, args.indexOf(first)), undefined);
      throw noCommand("unknown command", first);
    }
    const parsed = parseFor(args, named);
    if (parsed.switches.has("version")) {
      io.out(`amber ${VERSION}`);
      return 0;
    }
    const [name, ...words] = parsed.words;
    if (name === "help" && words.length > 0) {
      const about = COMMANDS.find((c) => c.name === words[0]);
      if (about === undefined) throw noCommand("no command", words[0]);
      io.out(await commandUsage(about));
      return 0;
    }
    if (named !== undefined && parsed.switches.has("help")) {
      io.out(await commandUsage(named));
      return 0;
    }
    // No command in a terminal: the interactive session. Without one, the usage as before.
    const interactive = name === undefined && !parsed.switches.has("help") &&
      Deno.stdin.isTerminal() && Deno.stdout.isTerminal();
    if (!interactive && (parsed.switches.has("help") || name === undefined || name === "help")) {
      io.out(await usage());
      return name === undefined && !parsed.switches.has("help") ? 2 : 0;
    }
    const entry = named;
    const plugins = options.plugins ?? makeBundledPlugins;
    const configDir = parsed.options.get("config-dir");
    const given = parsed.options.get("workspace");
    if (given !== undefined) await checkWorkspace(given);
    const workspace = given ?? Deno.env.get("INIT_CWD") ?? Deno.cwd();
    const context: CommandContext = {
      words,
      parsed,
      io,
      plugins,
      configDir,
      workspace,
      width: intOption(parsed, "width", terminalWidth()),
      overrides: {
        provider: parsed.options.get("provider"),
        model: parsed.options.get("model"),
        baseUrl: parsed.options.get("base-url"),
        reasoningEffort: parsed.options.get("effort"),
      },
      host: (extras) =>
        host ??= openHost({
          // A session brings its own; any other command lists `task` as a session has it.
          subagents: outsideSession,
          ...extras,
          plugins: plugins(),
          configDir,
          workspace,
          // What an MCP server logs is for the diagnostics, not a command's output.
          onDiagnostic: extras?.onDiagnostic ??
            ((d) => {
              if (d.where === "log" && d.pluginId.startsWith("mcp.")) return;
              io.err(plainText(`amber: plugin '${d.pluginId}' (${d.where}): ${d.message}`));
            }),
        }),
    };
    if (entry === undefined) {
      // Loaded only here: every other command starts without the TUI's modules.
      const { runTui } = await loadModule<typeof import("./commands/tui.ts")>("./commands/tui.ts");
      return await runTui(context);
    }
    return await (await entry.load()).run(context);
  } catch (error) {
    // Whoever read the output went away (`amber plugins list | head -1`): nothing to tell them.
    if (error instanceof Deno.errors.BrokenPipe) return 141;
    if (error instanceof UsageError) {
      io.err(`amber: ${error.message}`);
      return 2;
    }
    // The guess goes before the list: the list can be long.
    if (error instanceof UnknownPluginError) {
      const guess = didYouMean(error.pluginId, error.known);
      const known = error.known.join(", ");
      io.err(`amber: unknown plugin '${error.pluginId}'${guess}; known plugins: ${known}`);
      return 2;
    }
    if (error instanceof UnknownProviderError) {
      const guess = didYouMean(error.provider, error.known);
      io.err(
        `amber: unknown provider '${error.provider}'${guess}; presets: ${error.known.join(", ")}`,
      );
      return 2;
    }
    // Our own errors already say what and where; anything else keeps its class name.
    const ours = error instanceof AmberError || error instanceof ConfigFileError;
    io.err(plainText(`amber: ${ours ? (error as Error).message : describeError(error)}`));
    if (error instanceof ConfigFileError) io.err("amber: `amber config check` lists every problem");
    return 1;
  } finally {
    if (host !== undefined) await host.then((h) => h.close(), () => {});
  }
}
