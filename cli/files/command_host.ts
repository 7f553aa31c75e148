/**
 * What markdown commands need of the host: the command roots others hold, and the running of
 * `` !`cmd` `` lines under amber's approval, as the `bash` tool's calls are: the permission rules
 * of `config.yaml` and the workspace (`bash(git status *)`) first, then the approval policy,
 * asking the user when there is one to ask. Loaded once a commands folder holds a file.
 *
 * @module
 */

import type { Diagnostic, HostServices, PluginRuntime } from "@amber/core";
import { SessionPermissions } from "../session/permissions.ts";
import type { CommandFile, FilesBuilder, FilesContext } from "./definitions.ts";
import { commandCapabilities, type CommandTemplateHost, runShell } from "./markdown_commands.ts";

/**
 * The roots amber's own front ends add (the interactive session's `/help`, `/model`..., and the
 * core's `/set`, `/get`): a markdown command never takes one, in any front end, so `/help` means
 * the same in `amber run` as on the screen.
 */
export const AMBER_COMMAND_ROOTS: ReadonlySet<string> = new Set([
  "set",
  "get",
  "help",
  "plugins",
  "panel",
  "mcp",
  "model",
  "provider",
  "sessions",
  "resume",
  "compact",
  "clear",
  "quit",
  "permissions",
]);

/** How long one `` !`cmd` `` line may run: within the command deadline (30 s by default). */
export const SHELL_LINE_TIMEOUT_MS = 20_000;

/** What {@linkcode commandHost} reads the configuration and services from. */
export interface CommandHostPlaces {
  /** amber's config directory. */
  readonly configDir: string;
  /** The workspace root. */
  readonly workspace: string;
  /** The host's services: `ui` for the question, `processes` for the environment. */
  readonly services: HostServices;
  /** Where a refused line is reported. */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
}

/**
 * The template host of a session: approval as for `bash`, and a run in the workspace with the
 * environment tools get (amber's secrets left out).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandHost } from "./command_host.ts";
 * const configDir = await Deno.makeTempDir();
 * const workspace = await Deno.makeTempDir();
 * const config = { plugins: {}, permissions: { allow: ["bash(echo *)"], deny: ["bash(rm *)"] } };
 * const host = commandHost(() => config, { configDir, workspace, services: {} });
 * assert.equal(await host.approve("echo hi", "/x"), undefined);
 * assert.match((await host.approve("rm -rf x", "/x"))!, /denied by the permission rule 'bash\(rm \*\)'/);
 * assert.match((await host.approve("ls", "/x"))!, /no one to ask/);
 * assert.equal(await host.run("echo hi"), "hi\n");
 * await Deno.remove(configDir, { recursive: true });
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export function commandHost(
  config: PluginRuntime["config"],
  places: CommandHostPlaces,
): CommandTemplateHost {
  const { configDir, workspace, services } = places;
  return {
    workspace,
    approve: async (command, from) => {
      const live = config();
      const rules = await SessionPermissions.load({ configDir, workspace, config: live });
      const verdict = rules.decide({ name: "bash", args: { command }, summary: command });
      if (verdict?.effect === "deny") {
        return `denied by the permission rule '${verdict.rule}' (${verdict.source})`;
      }
      if (verdict?.effect === "allow") return undefined;
      const asked = verdict?.effect === "ask";
      const policy = live.approval ?? "ask";
      if (policy === "auto" && !asked) return undefined;
      if (policy === "deny") return "the approval policy is deny";
      const ui = services.ui;
      if (ui === undefined || !ui.interactive) {
        return `there is no one to ask; allow it with a permission rule (bash(${command})) or approval: auto`;
      }
      const yes = await ui.confirm(`${from} runs \`${command}\` and sends its output. Run it?`);
      return yes ? undefined : "the user said no";
    },
    run: async (command) => {
      const { env, secrets } = services.processes?.environment() ??
        { env: Deno.env.toObject(), secrets: [] };
      let text = await runShell(command, workspace, env, SHELL_LINE_TIMEOUT_MS);
      for (const secret of secrets) {
        if (secret !== "") text = text.split(secret).join("[redacted]");
      }
      return text;
    },
  };
}

/**
 * The builder of a commands plugin: one root per file, leaving out (and reporting) a name another
 * plugin or amber holds now.
 */
export function commandBuilder(
  context: FilesContext,
  runtime: PluginRuntime,
  places: CommandHostPlaces & {
    readonly commandRoots: () => readonly { readonly name: string; readonly owner: string }[];
  },
): FilesBuilder<"commands"> {
  const host = commandHost(() => runtime.config(), places);
  return (items: readonly CommandFile[]) => {
    const held = new Map<string, string>([...AMBER_COMMAND_ROOTS].map((root) => [root, "core"]));
    for (const root of places.commandRoots()) {
      if (root.owner !== context.pluginId) held.set(root.name, root.owner);
    }
    return commandCapabilities(items, {
      host,
      taken: (name) => {
        const owner = held.get(name);
        if (owner === undefined) return undefined;
        return owner === "core" ? "amber's own command" : `the plugin ${owner}`;
      },
    });
  };
}
