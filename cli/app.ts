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
import { intOption, parseArgs, UsageError } from "./args.ts";
import type { CliCommand, CommandContext, Io } from "./command.ts";
import { ConfigFileError } from "./config_file.ts";
import { type Host, openHost } from "./host.ts";
import { loadModule } from "./lazy_modules.ts";
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
];

const GLOBAL_OPTIONS = ["config-dir", "workspace", "effort"];
const GLOBAL_FLAGS = ["version", "help"];

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
  --config-dir DIR                the config directory (else $AMBER_CONFIG_DIR,
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
  --help                          this text`;
}

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
    const parsed = parseArgs(
      args,
      [...new Set([...GLOBAL_OPTIONS, ...COMMANDS.flatMap((c) => c.options ?? [])])],
      [...new Set([...GLOBAL_FLAGS, ...COMMANDS.flatMap((c) => c.flags ?? [])])],
    );
    if (parsed.switches.has("version")) {
      io.out(`amber ${VERSION}`);
      return 0;
    }
    const [name, ...words] = parsed.words;
    // No command in a terminal: the interactive session. Without one, the usage as before.
    const interactive = name === undefined && !parsed.switches.has("help") &&
      Deno.stdin.isTerminal() && Deno.stdout.isTerminal();
    if (!interactive && (parsed.switches.has("help") || name === undefined || name === "help")) {
      io.out(await usage());
      return name === undefined && !parsed.switches.has("help") ? 2 : 0;
    }
    const entry = COMMANDS.find((c) => c.name === name);
    if (entry === undefined && !interactive) {
      throw new UsageError(
        `unknown command '${name}'; commands: ${COMMANDS.map((c) => c.name).join(", ")}`,
      );
    }
    const plugins = options.plugins ?? makeBundledPlugins;
    const configDir = parsed.options.get("config-dir");
    const workspace = parsed.options.get("workspace") ?? Deno.env.get("INIT_CWD") ?? Deno.cwd();
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
    if (
      error instanceof UsageError || error instanceof UnknownPluginError ||
      error instanceof UnknownProviderError
    ) {
      io.err(`amber: ${error.message}`);
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
