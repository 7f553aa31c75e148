// Each deno.json declares the npm packages its own files import, and nothing else: a member's
// package publishes with its own dependencies, and the workspace root (whose import map every
// member inherits, and whose packages a fresh `deno task amber` installs) keeps only what mod.ts,
// the tests and .ci/ import. The benchmark-only packages live in bench/import_map.json and
// bench/deno.lock, so neither the workspace nor its lockfile names them.

import { deepStrictEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MEMBERS = ["core", "registries", "providers", "plugins", "cli", "mcp"];

interface DenoConfig {
  readonly workspace?: string[];
  readonly imports?: Record<string, string>;
  readonly tasks?: Record<string, string>;
}

async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await Deno.readTextFile(join(ROOT, path))) as T;
}

async function* typescriptFiles(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory && entry.name !== "node_modules") yield* typescriptFiles(path);
    else if (entry.isFile && entry.name.endsWith(".ts")) yield path;
  }
}

// A bare specifier that names an npm package; relative paths, `node:`/`npm:`/`jsr:` specifiers,
// the workspace's own `@amber/*` packages and template placeholders (`__PACKAGE__`) are not.
const NPM_NAME = /^(@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*(\/.*)?$/;
const SPECIFIER = /(?:\bfrom|\bimport)\s*\(?\s*["']([^"']+)["']/g;

function packageName(specifier: string): string | undefined {
  if (!NPM_NAME.test(specifier) || specifier.startsWith("@amber/")) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** The npm packages the files import, doc examples included (`deno test --doc` resolves them). */
async function importedPackages(paths: string[]): Promise<string[]> {
  const names = new Set<string>();
  for (const path of paths) {
    const stat = await Deno.stat(join(ROOT, path));
    const files = stat.isDirectory ? typescriptFiles(join(ROOT, path)) : [join(ROOT, path)];
    for await (const file of files) {
      for (const match of (await Deno.readTextFile(file)).matchAll(SPECIFIER)) {
        const name = packageName(match[1]);
        if (name) names.add(name);
      }
    }
  }
  return [...names].sort();
}

// A package mapped with its subpaths (`"name/": "npm:/name@1/"`, what an import map given with
// --import-map needs for `name/sub.js`) is the package `name`.
function declared(config: DenoConfig): string[] {
  return [...new Set(Object.keys(config.imports ?? {}).map((name) => name.replace(/\/$/, "")))]
    .sort();
}

async function benchOnlyPackages(): Promise<string[]> {
  const bench = await readJson<DenoConfig>("bench/import_map.json");
  const workspace = new Set(declared(await readJson<DenoConfig>("deno.json")));
  for (const member of MEMBERS) {
    for (const name of declared(await readJson<DenoConfig>(`${member}/deno.json`))) {
      workspace.add(name);
    }
  }
  return declared(bench).filter((name) => !workspace.has(name));
}

for (const member of MEMBERS) {
  Deno.test(`${member}/deno.json declares exactly the npm packages ${member}/ imports`, async () => {
    const config = await readJson<DenoConfig>(`${member}/deno.json`);
    deepStrictEqual(declared(config), await importedPackages([member]));
  });
}

Deno.test("the root deno.json declares exactly what mod.ts, tests/ and .ci/ import", async () => {
  const config = await readJson<DenoConfig>("deno.json");
  deepStrictEqual(config.workspace?.map((m) => m.replace(/^\.\//, "")), MEMBERS);
  deepStrictEqual(declared(config), await importedPackages(["mod.ts", "tests", ".ci"]));
});

Deno.test("bench/import_map.json declares what bench/ imports, the benchmark-only packages among them", async () => {
  deepStrictEqual(
    declared(await readJson<DenoConfig>("bench/import_map.json")),
    await importedPackages(["bench"]),
  );
  deepStrictEqual(await benchOnlyPackages(), [
    "@ai-sdk/anthropic",
    "@ai-sdk/openai",
    "ai",
    "avvio",
    "eventemitter3",
    "hookable",
  ]);
});

Deno.test("the workspace's lockfile names no benchmark-only package; bench/deno.lock locks them", async () => {
  const named = (lock: { specifiers?: Record<string, string> }) =>
    Object.keys(lock.specifiers ?? {}).map((s) => s.replace(/^npm:/, "").replace(/(.)@.*$/, "$1"));
  const root = named(await readJson("deno.lock"));
  const bench = named(await readJson("bench/deno.lock"));
  for (const name of await benchOnlyPackages()) {
    ok(!root.includes(name), `deno.lock names ${name}: a fresh install would fetch it`);
    ok(bench.includes(name), `bench/deno.lock does not lock ${name}`);
  }
});

Deno.test("the bench tasks resolve through bench/'s import map and lockfile", async () => {
  const { tasks = {} } = await readJson<DenoConfig>("deno.json");
  for (const task of ["bench", "check:bench"]) {
    ok(
      tasks[task]?.includes("--import-map bench/import_map.json --lock=bench/deno.lock"),
      `task ${task}: ${tasks[task]}`,
    );
  }
  for (const [name, command] of Object.entries(tasks)) {
    if (name === "bench" || name === "check:bench") continue;
    ok(!/\bbench\//.test(command), `task ${name} reaches bench/ without its import map`);
  }
});
