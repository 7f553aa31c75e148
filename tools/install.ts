// `deno task install`: builds amber and installs that build as the `amber` command (`deno install
// --global`: the command in `$DENO_INSTALL_ROOT/bin`, else `~/.deno/bin`; the build beside it, in
// `lib/amber/<version>-<time>/` of the same root, so the command does not depend on the checkout
// once installed).
//
// The build is what the single-file bundle is (cli/single_file.ts, every npm package inlined),
// split into chunks that load only when a command needs them, and minified: a start reads a few
// files instead of some two hundred modules (see docs/performance.md, "Start-up"). Beside it:
//   main.js     the entry: `--version` loads nothing else; a plugin's process runs the sandbox's
//               own entry (app/core/sandbox/child_main.js), which loads only the child's side;
//   packages/   one module per export of amber's packages (`@amber/core`, `@amber/core/kernel`,
//               ...) re-exporting the build's own bindings, so a plugin that imports `@amber/core`
//               gets the classes amber itself uses, not a second copy of them;
//   import_map.json
//               what the command and its plugins' processes resolve `@amber/*` with: those
//               modules. The build needs no npm package at run time, so the command has no config
//               (a config holding an import map costs Deno some 7 ms more at every start than the
//               same map on its own) and reads no `node_modules` (`--node-modules-dir=none`).
//
// deno run -A tools/install.ts

import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const installRoot = Deno.env.get("DENO_INSTALL_ROOT") ||
  (Deno.env.get("HOME") ? join(Deno.env.get("HOME")!, ".deno") : undefined);
if (installRoot === undefined) fail("neither DENO_INSTALL_ROOT nor HOME is set");
const version = String((await readJson(join(ROOT, "cli", "deno.json"))).version);
// Each build in a folder of its own: the one the command ran until now is kept, so a session
// still running from it (or its plugins' processes) can load its chunks; older ones are removed.
const BUILDS = join(installRoot, "lib", "amber");
const LIB = join(BUILDS, `${version}-${new Date().toISOString().replace(/[:.]/g, "-")}`);
// Renamed to LIB once complete; a build that failed halfway is removed by the next one.
const OUT = `${LIB}.partial`;
const APP = join(OUT, "app");
// The namespaces module must sit in the workspace, where `@amber/*` resolve.
const SOURCE = join(ROOT, "dist", "install-source");
const PERMISSIONS = ["--allow-read", "--allow-write", "--allow-env", "--allow-net", "--allow-run"];
// V8's young generation starts at 1 MB and grows as it fills: `amber run` allocates about 6 MB
// while it starts and runs one tool round trip, which took three scavenges (about 5 ms of CPU,
// `--trace-gc`); starting at 8 MB it takes none and peaks no higher. The flag leaves the code
// cache valid (measured alternating with and without it), and `deno task amber` uses the same.
const V8_FLAGS = "--v8-flags=--min-semi-space-size=8";
const MEMBERS = ["core", "registries", "providers", "plugins", "cli", "mcp"];

interface Export {
  /** `@amber/core/kernel` */
  readonly specifier: string;
  /** Its name in the build's namespace module and its file under `packages/`. */
  readonly name: string;
}

function fail(message: string): never {
  console.error(`deno task install: ${message}`);
  Deno.exit(1);
}

async function deno(args: readonly string[], quiet = false): Promise<void> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [...args],
    cwd: ROOT,
    stdout: quiet ? "piped" : "inherit",
    stderr: quiet ? "piped" : "inherit",
  }).output();
  if (!output.success) {
    const said = quiet ? `\n${new TextDecoder().decode(output.stderr).trimEnd()}` : "";
    fail(`deno ${args[0]} failed${said}`);
  }
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(path));
}

// Every subpath each member exports, as a plugin would import it.
async function packageExports(): Promise<Export[]> {
  const found: Export[] = [];
  for (const member of MEMBERS) {
    const config = await readJson(join(ROOT, member, "deno.json"));
    const exports = typeof config.exports === "string"
      ? { ".": config.exports }
      : config.exports as Record<string, string>;
    for (const subpath of Object.keys(exports)) {
      const specifier = `${config.name}${subpath === "." ? "" : subpath.slice(1)}`;
      found.push({ specifier, name: specifier.slice(1).replace(/[^A-Za-z0-9]/g, "_") });
    }
  }
  return found;
}

// A literal `import("./chunk.js")` in the output would make Deno read every chunk it reaches
// before the first line runs (it walks literal dynamic imports ahead of time); a computed one is
// read when it runs. Only imports of the build's own files are rewritten.
//
// The bundler gives the npm packages written as CommonJS a `require` made with `node:module`'s
// `createRequire` at import, and importing `node:module` starts much of Deno's Node layer (some
// 13 ms of CPU): made on the first call instead, a process that requires nothing (a plugin's
// process) never pays for it. Returns how many imports it made computed.
async function rewriteChunks(dir: string): Promise<number> {
  let deferred = 0;
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      deferred += await rewriteChunks(path);
      continue;
    }
    if (!entry.name.endsWith(".js")) continue;
    const text = await Deno.readTextFile(path);
    const next = text.replace(/\bimport\("(\.{1,2}\/[^"\\]+\.js)"\)/g, (whole, target: string) => {
      try {
        if (!Deno.statSync(join(dirname(path), target)).isFile) return whole;
      } catch {
        return whole;
      }
      deferred++;
      return `import(new URL(${JSON.stringify(target)},import.meta.url).href)`;
    }).replace(
      REQUIRE,
      (_whole, name: string) =>
        `var ${name}=(()=>{let r;const get=()=>r??=globalThis.process.getBuiltinModule(` +
        `"module").createRequire(import.meta.url);return new Proxy(function(){},{apply:(_,t,a)=>` +
        `get()(...a),get:(_,k)=>get()[k]})})();`,
    );
    if (next !== text) await Deno.writeTextFile(path, next);
  }
  return deferred;
}

const REQUIRE =
  /import\s*\{\s*createRequire as __deno_internal_createRequire\s*\}\s*from\s*"node:module";\s*var ([\w$]+)\s*=\s*__deno_internal_createRequire\(import\.meta\.url\);/g;

// Split, a CommonJS package that is imported with `import()` (yaml, semver) gets a chunk that
// exports only `default`, the package's exports object, where the code importing it reads its
// names: the chunk exports each name too, read from that object (the chunk is imported here once
// to learn them).
async function exportCommonJsNames(dir: string): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".js")) continue;
    const path = join(dir, entry.name);
    const text = await Deno.readTextFile(path);
    const tail = /export default ([\w$]+)\(\);?\s*$/.exec(text);
    if (tail === null) continue;
    const exported: unknown = (await import(pathToFileURL(path).href)).default;
    if (typeof exported !== "object" || exported === null) continue;
    const names = Object.keys(exported).filter((name) =>
      /^[A-Za-z_$][\w$]*$/.test(name) && name !== "default"
    );
    const locals = names.map((name, i) => `__cjs${i}=__cjs.${name}`);
    const list = names.map((name, i) => `__cjs${i} as ${name}`);
    const replaced = `var __cjs=${tail[1]}();` +
      (locals.length > 0 ? `var ${locals.join(",")};` : "") +
      `export{${["__cjs as default", ...list].join(",")}};\n`;
    await Deno.writeTextFile(path, text.slice(0, tail.index) + replaced);
  }
}

// Keeps the build just installed and the newest one before it; removes the rest, and every build
// that never completed.
async function removeOldBuilds(): Promise<void> {
  const builds: { path: string; mtime: number }[] = [];
  for await (const entry of Deno.readDir(BUILDS)) {
    const path = join(BUILDS, entry.name);
    if (!entry.isDirectory || path === LIB) continue;
    if (entry.name.endsWith(".partial")) {
      await Deno.remove(path, { recursive: true }).catch(() => {});
      continue;
    }
    builds.push({ path, mtime: (await Deno.stat(path)).mtime?.getTime() ?? 0 });
  }
  builds.sort((a, b) => b.mtime - a.mtime);
  for (const { path } of builds.slice(1)) await Deno.remove(path, { recursive: true });
}

function shim(namespaceModule: string, name: string, names: readonly string[]): string {
  const bindings = names.filter((binding) => binding !== "default");
  const lines = [
    `// ${name}: the build's own bindings (written by tools/install.ts).`,
    `import { ${name} as ns } from ${JSON.stringify(namespaceModule)};`,
    `export const { ${bindings.join(", ")} } = ns;`,
  ];
  if (names.includes("default")) lines.push(`export default ns.default;`);
  return `${lines.join("\n")}\n`;
}

function entry(version: string): string {
  return `// amber ${version}, as \`deno task install\` built it (tools/install.ts).
const load = (path) => import(new URL(path, import.meta.url).href);
if (import.meta.main) {
  if (Deno.args.length === 1 && Deno.args[0] === "--version") {
    console.log("amber ${version}");
  } else {
    const here = new URL(".", import.meta.url);
    const { runSingleFile } = await load("./app/cli/single_file.js");
    Deno.exitCode = await runSingleFile(Deno.args, {
      mainModule: import.meta.url,
      // A plugin's process runs the sandbox's own entry: it loads only the child's side.
      pluginProcessEntry: [new URL("./app/core/sandbox/child_main.js", import.meta.url).href],
      packages: {
        importMap: decodeURIComponent(new URL("import_map.json", here).pathname),
        folders: [decodeURIComponent(here.pathname).replace(/\\/$/, "")],
      },
    });
  }
}
`;
}

await Deno.remove(OUT, { recursive: true }).catch(() => {});
await Deno.mkdir(join(OUT, "packages"), { recursive: true });
await Deno.remove(SOURCE, { recursive: true }).catch(() => {});
await Deno.mkdir(SOURCE, { recursive: true });

// What each export holds at run time (types are gone), read from the source.
const exports = await packageExports();
const names = new Map<string, string[]>();
for (const { specifier } of exports) {
  names.set(specifier, Object.keys(await import(specifier)).sort());
}

const namespaces = join(SOURCE, "packages.ts");
await Deno.writeTextFile(
  namespaces,
  exports.map(({ specifier, name }) => `export * as ${name} from "${specifier}";\n`).join(""),
);
await deno([
  "bundle",
  "--quiet",
  "--platform",
  "deno",
  "--code-splitting",
  "--minify",
  "--outdir",
  APP,
  join(ROOT, "cli", "single_file.ts"),
  join(ROOT, "core", "sandbox", "child_main.ts"),
  namespaces,
], true);
await Deno.remove(SOURCE, { recursive: true });
const NAMESPACES = join(APP, "dist", "install-source", "packages.js");
for (
  const expected of [
    join(APP, "cli", "single_file.js"),
    join(APP, "core", "sandbox", "child_main.js"),
    NAMESPACES,
  ]
) {
  try {
    await Deno.stat(expected);
  } catch {
    fail(`the bundle has no ${expected}: deno bundle laid its output out differently`);
  }
}
if (await rewriteChunks(APP) === 0) {
  fail("no dynamic import of the bundle's chunks was found to defer");
}
await exportCommonJsNames(APP);

const imports: Record<string, string> = {};
for (const { specifier, name } of exports) {
  const file = join(OUT, "packages", `${name}.js`);
  const namespaceModule = relative(dirname(file), NAMESPACES);
  await Deno.writeTextFile(file, shim(`./${namespaceModule}`, name, names.get(specifier)!));
  imports[specifier] = `./packages/${name}.js`;
}
await Deno.writeTextFile(join(OUT, "main.js"), entry(version));
await Deno.writeTextFile(join(OUT, "import_map.json"), `${JSON.stringify({ imports }, null, 2)}\n`);

await Deno.rename(OUT, LIB);

await deno([
  "install",
  "--global",
  "--force",
  // Written into the command too: a chunk first imported while the terminal UI is up would
  // otherwise have Deno draw its loading line on the screen (every import of the build's chunks
  // is computed, see rewriteChunks). Deno's errors are still shown.
  "--quiet",
  "--name",
  "amber",
  "--no-config",
  "--import-map",
  join(LIB, "import_map.json"),
  "--node-modules-dir=none",
  V8_FLAGS,
  ...PERMISSIONS,
  pathToFileURL(join(LIB, "main.js")).href,
]);
await removeOldBuilds();
const bin = join(installRoot, "bin");
console.log(`installed amber ${version}: ${join(bin, "amber")} (the build: ${LIB})`);
const path = (Deno.env.get("PATH") ?? "").split(":");
if (!path.includes(bin)) console.log(`add ${bin} to your PATH: export PATH="${bin}:$PATH"`);
