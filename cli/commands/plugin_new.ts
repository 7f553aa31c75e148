/**
 * `amber plugin new <id> [dir] [--scope S]`: the plugin author's kit. Writes a publishable JSR
 * package (deno.json, mod.ts with a tool and a command, mod_test.ts, the vendored plugin types,
 * README.md, LICENSE) that passes `deno test` and `deno publish --dry-run` as generated, offline.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { AmberError, PLUGIN_SLUG_PATTERN } from "@amber/core";
import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import { TEMPLATE_FILES } from "../scaffold/templates.ts";
import { VERSION } from "../version.ts";

/** `amber plugin`. */
export const pluginCommand: CliCommand = {
  name: "plugin",
  usage: `  plugin new <id> [dir]           scaffold a publishable plugin package in dir (./<id> by
                                  default; it must be empty or new); --scope S names it @S/<id>`,
  options: ["scope"],
  run: plugin,
};

/** Options of {@linkcode scaffoldPlugin}. */
export interface ScaffoldOptions {
  /** The plugin id, `[a-z0-9_]+`. */
  readonly id: string;
  /** The directory to create or fill; it must not exist, or be empty. */
  readonly dir: string;
  /** The JSR scope, without `@`; `your-scope` by default. */
  readonly scope?: string;
  /** The amber version the vendored types come from; this amber's by default. */
  readonly amberVersion?: string;
}

/** What {@linkcode scaffoldPlugin} wrote. */
export interface ScaffoldResult {
  /** The package directory, absolute. */
  readonly dir: string;
  /** The JSR package name. */
  readonly packageName: string;
  /** The files written, relative to `dir`. */
  readonly files: readonly string[];
}

/**
 * A scaffold could not be written: a bad id or scope, or a directory that is not empty.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScaffoldError } from "./plugin_new.ts";
 * assert.equal(new ScaffoldError("/tmp/x is not empty").name, "ScaffoldError");
 * ```
 */
export class ScaffoldError extends AmberError {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ScaffoldError";
  }
}

const SCOPE = /^[a-z0-9][a-z0-9-]*$/;

/**
 * Writes the plugin package for `options.id` into `options.dir`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scaffoldPlugin } from "./plugin_new.ts";
 * const root = await Deno.makeTempDir();
 * const result = await scaffoldPlugin({ id: "greeter", dir: `${root}/greeter` });
 * assert.equal(result.packageName, "@your-scope/greeter");
 * assert.ok(result.files.includes("mod.ts"));
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function scaffoldPlugin(options: ScaffoldOptions): Promise<ScaffoldResult> {
  const { id } = options;
  if (!PLUGIN_SLUG_PATTERN.test(id)) {
    throw new ScaffoldError(
      `plugin id '${id}' is not a slug: use lowercase letters, digits and '_'`,
    );
  }
  const scope = (options.scope ?? "your-scope").replace(/^@/, "");
  if (!SCOPE.test(scope)) {
    throw new ScaffoldError(`scope '${scope}' is not a JSR scope: lowercase letters, digits, '-'`);
  }
  const dir = resolve(options.dir);
  await ensureEmpty(dir);
  const words = id.split("_").filter((word) => word !== "");
  const capitalized = words.map((word) => word[0].toUpperCase() + word.slice(1));
  const pascal = capitalized.join("");
  const values: { readonly [placeholder: string]: string } = {
    __ID__: id,
    __NAME__: capitalized.join(" ") || id,
    // An identifier cannot start with a digit.
    __PASCAL__: /^[0-9]/.test(pascal) ? `Plugin${pascal}` : pascal,
    __TOOL__: `${id}_greet`,
    __PACKAGE__: `@${scope}/${id.replaceAll("_", "-")}`,
    __AMBER_VERSION__: options.amberVersion ?? VERSION,
    __YEAR__: String(new Date().getFullYear()),
  };
  await Deno.mkdir(dir, { recursive: true });
  for (const file of TEMPLATE_FILES) {
    const text = file.text.replace(/__[A-Z_]+?__/g, (placeholder) => values[placeholder] ?? "");
    // createNew: never overwrite a file that appeared since the directory was checked.
    await Deno.writeTextFile(join(dir, file.path), text, { createNew: true });
  }
  return { dir, packageName: values.__PACKAGE__, files: TEMPLATE_FILES.map((f) => f.path) };
}

async function ensureEmpty(dir: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dir);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw new ScaffoldError(`${dir}: ${(error as Error).message}`, { cause: error });
  }
  if (!info.isDirectory) throw new ScaffoldError(`${dir} exists and is not a directory`);
  for await (const _ of Deno.readDir(dir)) {
    throw new ScaffoldError(`${dir} is not empty; choose a new or empty directory`);
  }
}

async function plugin(context: CommandContext): Promise<number> {
  const [verb, id, dir, ...extra] = context.words;
  if (verb !== "new" || id === undefined || extra.length > 0) {
    throw new UsageError("usage: amber plugin new <id> [dir] [--scope S]");
  }
  if (!PLUGIN_SLUG_PATTERN.test(id)) {
    throw new UsageError(`plugin id '${id}' is not a slug: use lowercase letters, digits and '_'`);
  }
  if (context.plugins().some((bundled) => bundled.id === id)) {
    throw new UsageError(`plugin id '${id}' is taken by a bundled plugin; choose another`);
  }
  const cwd = shellCwd();
  const result = await scaffoldPlugin({
    id,
    dir: resolve(cwd, dir ?? id),
    ...(context.parsed.options.has("scope") ? { scope: context.parsed.options.get("scope") } : {}),
  });
  const { io } = context;
  io.out(`created ${result.packageName} in ${result.dir}: ${result.files.join(", ")}`);
  io.out("next:");
  io.out(`  cd ${result.dir} && deno test          # activates it without amber`);
  io.out(`  amber plugins add ${join(result.dir, "mod.ts")}`);
  io.out(`  deno publish --dry-run                  # then deno publish, with your scope`);
  return 0;
}

// A relative path on the command line means the shell's directory (see plugins_add.ts).
function shellCwd(): string {
  try {
    return Deno.env.get("INIT_CWD") ?? Deno.cwd();
  } catch {
    return Deno.cwd();
  }
}
