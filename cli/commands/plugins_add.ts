/**
 * `amber plugins add <spec>`, `amber plugins update <id>` and `amber plugins remove <id>`: the
 * third-party plugin verbs of `amber plugins`. They work on the lock file before any host opens, so adding a plugin again
 * to accept a changed source never runs the refused one first.
 *
 * @module
 */

import { join } from "node:path";
import { configDir as defaultConfigDir, timeoutFor } from "@amber/core";
import { UsageError } from "../args.ts";
import type { CommandContext } from "../command.ts";
import { loadConfigFile } from "../config_file.ts";
import { describePermissions } from "@amber/core/sandbox";
import { describeContributions, describeState } from "../plugin_console.ts";
import type { ModuleGraph } from "../module_graph.ts";
import {
  type AddOptions,
  addThirdPartyPlugin,
  type GrantDecider,
  type GrantRequest,
  type PluginLockEntry,
  removeThirdPartyPlugin,
  updateThirdPartyPlugin,
} from "../third_party.ts";

/**
 * `amber plugins add <spec> [--grant|--trusted]`: reads the plugin's manifest in a process with
 * no permission, shows what it asks for and asks (when stdin is a terminal; `--grant` accepts
 * it; without either a plugin that asks for anything is refused, exit 2, nothing recorded),
 * records it with its grant, then starts the host with it and reports its state. `--trusted`
 * warns, and records it to run inside amber with all of amber's permissions. Exits 1 when it
 * was recorded but failed to activate (the reason says why). Loading the plugin has
 * config.yaml's `timeouts.import` deadline, the one every later start gives it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { main } from "@amber/cli";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${dir}/tiny.js`,
 *   "export default { id: 'tiny', version: '1.0.0', name: 'Tiny', initialize: () => true, " +
 *     "shutdown() {}, capabilities: () => [] };",
 * );
 * const out: string[] = [];
 * const io = { out: (text: string) => out.push(text), err: () => {} };
 * // `amber plugins add <file>` runs addPlugin.
 * assert.equal(await main(["plugins", "add", `${dir}/tiny.js`, "--config-dir", dir], io), 0);
 * assert.match(out[0], /^tiny 1\.0\.0: Tiny, added from /);
 * assert.equal(out.at(-1), "  state: active (nothing)");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function addPlugin(context: CommandContext): Promise<number> {
  const [, spec, ...extra] = context.words;
  if (spec === undefined || extra.length > 0) {
    throw new UsageError(
      "usage: amber plugins add <path.ts|path.js|dir|npm:pkg|jsr:@scope/pkg> [--grant|--trusted]",
    );
  }
  const { switches } = context.parsed;
  const trusted = switches.has("trusted");
  if (trusted && switches.has("grant")) {
    throw new UsageError(
      "--grant and --trusted do not go together: a trusted plugin has all of amber's permissions",
    );
  }
  const { io } = context;
  if (trusted) io.err(TRUSTED_WARNING);
  const dir = configDirOf(context);
  // The plugin's id (and so its own `timeouts.plugins.<id>.import`) is known only once loaded.
  const { entry, previous, path } = await addThirdPartyPlugin(dir, spec, {
    ...await loadOptions(context, dir),
    trusted,
  });
  const how = previous === undefined
    ? "added"
    : previous.sha256 === entry.sha256
    ? "added again (unchanged)"
    : "accepted again (its source changed)";
  io.out(`${entry.id} ${entry.version}: ${entry.name}, ${how} from ${entry.spec}`);
  io.out(`  sha256 ${entry.sha256} of ${entry.resolved}`);
  if (entry.graph !== undefined) io.out(`  ${describeGraph(entry.graph)}`);
  io.out(`  ${describeTrust(entry)}`);
  io.out(`  recorded in ${path}`);
  return await reportState(context, entry.id);
}

/** What `amber plugins add --trusted` says before it records anything. */
export const TRUSTED_WARNING: string =
  "amber: warning: a trusted plugin runs inside amber with all of amber's permissions: it can " +
  "read your API keys and every file amber can, write files and run commands. Trust only code " +
  "you have read; `amber plugins add <spec>` without --trusted runs it in a sandbox again.";

// One line for the lock entry's trust: where it runs and what it was granted.
function describeTrust(entry: PluginLockEntry): string {
  if (entry.trusted === true) return "trusted: runs inside amber with all of amber's permissions";
  return `sandboxed, granted: ${describePermissions(entry.grant ?? {}).join("; ")}`;
}

/**
 * `amber plugins update <id> [--grant]`: loads an added plugin again from where it was added,
 * records its module graph as it is now, and says what changed (files added, removed, changed;
 * packages); then starts the host and reports its state, like `add`. This is how a plugin
 * refused because a file it imports changed is accepted, and how a new version that asks for
 * more than its grant is granted it (asked, or `--grant`; refused, exit 2, without either).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { main } from "@amber/cli";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${dir}/tiny.js`,
 *   "import { name } from './name.js'; export default { id: 'tiny', version: '1.0.0', name, " +
 *     "initialize: () => true, shutdown() {}, capabilities: () => [] };",
 * );
 * await Deno.writeTextFile(`${dir}/name.js`, "export const name = 'Tiny';");
 * const out: string[] = [];
 * const io = { out: (text: string) => out.push(text), err: () => {} };
 * await main(["plugins", "add", `${dir}/tiny.js`, "--config-dir", dir], io);
 * await Deno.writeTextFile(`${dir}/name.js`, "export const name = 'Tinier';");
 * out.length = 0;
 * // `amber plugins update <id>` runs updatePlugin.
 * assert.equal(await main(["plugins", "update", "tiny", "--config-dir", dir], io), 0);
 * assert.ok(out.includes("  changed: name.js"));
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function updatePlugin(context: CommandContext): Promise<number> {
  const [, id, ...extra] = context.words;
  if (id === undefined || extra.length > 0) {
    throw new UsageError("usage: amber plugins update <id> [--grant]");
  }
  if (context.parsed.switches.has("trusted")) {
    throw new UsageError(
      `--trusted goes with plugins add: run \`amber plugins add <spec> --trusted\` to trust '${id}'`,
    );
  }
  const dir = configDirOf(context);
  const { entry, previous, diff, path } = await updateThirdPartyPlugin(
    dir,
    id,
    await loadOptions(context, dir, id),
  );
  const { io } = context;
  io.out(`${entry.id} ${entry.version}: ${entry.name}, updated from ${entry.spec}`);
  if (previous.version !== entry.version) {
    io.out(`  version: ${previous.version} -> ${entry.version}`);
  }
  if (previous.sha256 !== entry.sha256) io.out(`  changed: ${entry.resolved}`);
  if (diff !== undefined) {
    for (const file of diff.added) io.out(`  added: ${file}`);
    for (const file of diff.removed) io.out(`  removed: ${file}`);
    for (const file of diff.changed) io.out(`  changed: ${file}`);
    for (const pkg of diff.packagesAdded) io.out(`  package added: ${pkg}`);
    for (const pkg of diff.packagesRemoved) io.out(`  package removed: ${pkg}`);
    const same = diff.added.length + diff.removed.length + diff.changed.length +
            diff.packagesAdded.length + diff.packagesRemoved.length === 0 &&
      previous.sha256 === entry.sha256;
    if (same) io.out("  nothing changed");
  } else if (previous.graph === undefined && entry.graph !== undefined) {
    io.out("  the lock had only its entry file; now it records every module it imports");
  }
  if (entry.graph !== undefined) io.out(`  ${describeGraph(entry.graph)}`);
  io.out(`  ${describeTrust(entry)}`);
  io.out(`  recorded in ${path}`);
  return await reportState(context, entry.id);
}

function describeGraph(graph: ModuleGraph): string {
  const files = `${graph.files.length} ${graph.files.length === 1 ? "file" : "files"}`;
  const count = graph.packages.length;
  return `module graph: ${files}, ${count} npm ${count === 1 ? "package" : "packages"}`;
}

/**
 * `amber plugins remove <id>`: drops the lock entry of an added plugin. Its `plugin.conf` is
 * left as it is (adding it again finds it on or off as it was); a bundled plugin is refused.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { main } from "@amber/cli";
 * import { readPluginLock } from "@amber/cli/third-party";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${dir}/tiny.js`,
 *   "export default { id: 'tiny', version: '1.0.0', name: 'Tiny', initialize: () => true, " +
 *     "shutdown() {}, capabilities: () => [] };",
 * );
 * const out: string[] = [];
 * const io = { out: (text: string) => out.push(text), err: () => {} };
 * await main(["plugins", "add", `${dir}/tiny.js`, "--config-dir", dir], io);
 * // `amber plugins remove <id>` runs removePlugin.
 * assert.equal(await main(["plugins", "remove", "tiny", "--config-dir", dir], io), 0);
 * assert.deepEqual((await readPluginLock(dir)).plugins, []);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function removePlugin(context: CommandContext): Promise<number> {
  const [, id, ...extra] = context.words;
  if (id === undefined || extra.length > 0) {
    throw new UsageError("usage: amber plugins remove <id>");
  }
  const dir = configDirOf(context);
  const { entry, path } = await removeThirdPartyPlugin(
    dir,
    id,
    context.plugins().map((plugin) => plugin.id),
  );
  context.io.out(`${entry.id}: removed from ${path} (it was added from ${entry.spec})`);
  context.io.out(
    `  its state file ${join(dir, "plugins", entry.id, "plugin.conf")}, if any, is left as it is`,
  );
  return 0;
}

// How `add` and `update` load a plugin: from the shell's directory, under config.yaml's import
// deadline (the plugin's own, for `update`, which knows its id).
async function loadOptions(
  context: CommandContext,
  dir: string,
  id?: string,
): Promise<AddOptions> {
  const config = await loadConfigFile(dir);
  const decide = grantDecider(context);
  return {
    cwd: shellCwd(),
    bundledIds: context.plugins().map((plugin) => plugin.id),
    timeoutMs: timeoutFor(config, "import", id),
    workspace: context.workspace,
    ...(decide !== undefined ? { grant: decide } : {}),
  };
}

// `--grant` grants what the plugin asks for; otherwise a terminal asks, and without one a plugin
// that asks for anything is refused (nothing is asked of a script's closed stdin).
function grantDecider(context: CommandContext): GrantDecider | undefined {
  const { io } = context;
  const show = (request: GrantRequest) => {
    io.out(`${request.id} ${request.version} (${request.file}) asks for:`);
    for (const line of request.lines) io.out(`  ${line}`);
  };
  if (context.parsed.switches.has("grant")) {
    return (request) => {
      show(request);
      io.out("  granted (--grant)");
      return true;
    };
  }
  // The question is written to stdout: with stdout sent elsewhere it would be answered unseen.
  if (!Deno.stdin.isTerminal() || !Deno.stdout.isTerminal()) return undefined;
  return (request) => {
    show(request);
    const answer = prompt(`Grant ${request.id} ${request.beyond.join(", ")}? [y/N]`);
    return answer !== null && /^y(es)?$/i.test(answer.trim());
  };
}

// Starts the host and reports the plugin's state: exits 1 when it failed to activate.
async function reportState(context: CommandContext, id: string): Promise<number> {
  const host = await context.host();
  const info = host.runtime.info(id);
  context.io.out(
    `  state: ${describeState(info.state)} (${describeContributions(info.contributions)})`,
  );
  return info.state.status === "failed" ? 1 : 0;
}

function configDirOf(context: CommandContext): string {
  return context.configDir ?? defaultConfigDir(Deno.env.toObject());
}

// A relative path on the command line means the shell's directory; `deno task` runs in the
// project's and says where the user was in INIT_CWD.
function shellCwd(): string {
  try {
    return Deno.env.get("INIT_CWD") ?? Deno.cwd();
  } catch {
    return Deno.cwd();
  }
}
