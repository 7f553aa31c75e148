/**
 * Loading amber's own modules when they are first needed, by specifiers the runtime cannot read
 * ahead of time.
 *
 * When Deno loads a module, it walks the whole graph of every `import("...")` whose specifier is
 * a literal in it (reading and hashing each file, resolving each npm package), though none of it
 * runs. A literal import of the terminal UI, the sandbox or the MCP SDK would make every start pay
 * for a graph it may never load. So these are imported by a computed specifier, and a single-file
 * build (`single_file.ts`, what the bundles and `deno compile` run, which must see every module)
 * hands over literal imports for the same names with {@linkcode provideModules}.
 *
 * Only for what is loaded before a session's screen starts (a command, the host's parts): a
 * module graph Deno has not read yet is read when it is imported, and on a terminal Deno draws a
 * progress line on stderr meanwhile and then clears the screen below the cursor, over the frame.
 * What is imported while the screen is up (a dialect, the records of the processes tools start)
 * keeps a literal import; what cannot (the model catalog's, named at run time) relies on amber
 * running with `--quiet`, as `deno task amber` and the installed command do.
 *
 * @module
 */

/** Imports one module. */
export type ModuleLoader = () => Promise<unknown>;

const provided = new Map<string, ModuleLoader>();

/**
 * Registers literal imports for names {@linkcode loadModule} is asked for: the single-file
 * entry calls it before anything loads, so the bundler and the compiler include the modules.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadModule, provideModules } from "./lazy_modules.ts";
 * provideModules({ "./example_only.ts": () => Promise.resolve({ answer: 42 }) });
 * const module = await loadModule<{ answer: number }>("./example_only.ts");
 * assert.equal(module.answer, 42);
 * ```
 */
export function provideModules(loaders: { readonly [name: string]: ModuleLoader }): void {
  for (const [name, loader] of Object.entries(loaders)) provided.set(name, loader);
}

/**
 * Imports `name`: a path relative to `cli/` (`"./commands/run.ts"`) or a workspace package
 * (`"@amber/mcp"`), through the literal import a single-file build provided, else by its
 * resolved specifier.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadModule } from "./lazy_modules.ts";
 * const { PLUGIN_ID_PATTERN } = await loadModule<typeof import("@amber/core")>("@amber/core");
 * assert.equal(PLUGIN_ID_PATTERN.test("hello"), true);
 * ```
 */
export function loadModule<T>(name: string): Promise<T> {
  const loader = provided.get(name);
  if (loader !== undefined) return loader() as Promise<T>;
  const specifier = name.startsWith(".")
    ? new URL(name, import.meta.url).href
    : import.meta.resolve(name);
  return import(specifier) as Promise<T>;
}
