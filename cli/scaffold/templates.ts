/**
 * The files `amber plugin new` writes, with placeholders: `__ID__` (the plugin id), `__NAME__`
 * (its display name), `__PASCAL__` (the id in PascalCase, for identifiers), `__TOOL__` (its tool's
 * name), `__PACKAGE__` (the JSR package name), `__AMBER_VERSION__` and `__YEAR__`. They are
 * strings in a module, not files beside it, so that a compiled or bundled amber carries them.
 *
 * The generated package imports nothing from amber at run time (its default export is a factory
 * that receives the host API) and only types from the vendored `amber_types.ts`, so `deno test`
 * and `deno publish --dry-run` pass offline as generated; `tests/cli/scaffold_test.ts` checks
 * that, and that the vendored types accept what `@amber/core` hands a plugin.
 *
 * @module
 */

/** One file of the scaffold: its path in the package and its text, placeholders included. */
export interface TemplateFile {
  /** The path relative to the package directory. */
  readonly path: string;
  /** The text, with placeholders. */
  readonly text: string;
}

const DENO_JSON = `{
  "name": "__PACKAGE__",
  "version": "0.1.0",
  "license": "MIT",
  "exports": "./mod.ts",
  "imports": {},
  "fmt": {
    "lineWidth": 100,
    "proseWrap": "preserve"
  },
  "publish": {
    "exclude": ["**/*_test.ts"]
  }
}
`;

const MOD_TS = `/**
 * __NAME__: an amber plugin with a \`__TOOL__\` tool and a \`/__ID__\` command.
 *
 * The default export is a factory: amber calls it with its host API, so this module imports
 * nothing from amber at run time (only types, from the vendored \`amber_types.ts\`).
 *
 * @example
 * \`\`\`ts
 * import assert from "node:assert/strict";
 * import create__PASCAL__ from "__PACKAGE__";
 * const plugin = create__PASCAL__({
 *   apiVersion: 1,
 *   version: "0.1.0",
 *   any: () => ({ kind: "any" }),
 *   exact: (...ids) => ({ kind: "exact", ids }),
 *   namespace: (prefix) => ({ kind: "namespace", prefix }),
 *   namespacedExact: (prefix, ids) => ({ kind: "namespacedExact", prefix, ids }),
 *   PluginCategory: {
 *     Provider: "provider",
 *     Observability: "observability",
 *     Tools: "tools",
 *     Ui: "ui",
 *     Memory: "memory",
 *     Search: "search",
 *     Other: "other",
 *   },
 * });
 * assert.equal(plugin.id, "__ID__");
 * \`\`\`
 *
 * @module
 */

import type { Plugin, PluginContext, PluginHostApi, Tool } from "./amber_types.ts";

export type * from "./amber_types.ts";

/** This plugin's section of amber's config.yaml (\`plugins.__ID__\`). */
export interface __PASCAL__Config {
  /** The word before the name; "Hello" by default. */
  readonly greeting?: string;
}

/**
 * Creates the plugin. amber calls it once per start with its host API.
 *
 * @param api The host API: bound helpers, plugin categories, amber's version.
 * @returns The plugin.
 */
export default function create__PASCAL__(api: PluginHostApi): Plugin {
  let context: PluginContext | undefined;

  // Read at use time, so an edited config.yaml is seen without a restart.
  const greet = (name: string): string => {
    const section = context?.section() as __PASCAL__Config | undefined;
    return \`\${section?.greeting ?? "Hello"}, \${name.trim() || "world"}!\`;
  };

  // The arguments' type states what \`parameters\` declares: amber validates the model's
  // arguments against the schema before \`execute\` runs, so \`execute\` needs no cast.
  const tool: Tool<{ readonly name: string }> = {
    name: "__TOOL__",
    description: "Greet someone by name.",
    parameters: {
      type: "object",
      properties: { name: { type: "string", description: "Who to greet." } },
      required: ["name"],
      additionalProperties: false,
    },
    readOnly: true,
    execute: (args) => ({ ok: true, output: greet(args.name) }),
  };

  return {
    id: "__ID__",
    version: "0.1.0",
    name: "__NAME__",
    description: "A __TOOL__ tool and the /__ID__ command.",
    category: api.PluginCategory.Tools,
    bound: { tools: api.exact("__TOOL__"), commands: api.exact("__ID__") },
    initialize(ctx) {
      context = ctx;
      return true;
    },
    shutdown() {
      context = undefined;
    },
    capabilities: () => [
      { kind: "tool", name: "__TOOL__", tools: [tool] },
      {
        kind: "command",
        name: "__ID__",
        root: "__ID__",
        help: "__NAME__",
        man: "Usage: /__ID__ greet <name>",
        subtree: { greet: { help: "Greet someone by name" } },
        handlers: { greet: (arg) => greet(arg) },
      },
    ],
  };
}
`;

const MOD_TEST_TS =
  `// Tests the plugin as amber would drive it, without amber: a host API, an activation, its tool
// and its command, and a check that everything it contributes is inside its bound. Inside the
// amber repository, \`testPlugin\` from \`@amber/core/testing\` does the same with amber's real
// registries.

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type {
  Capability,
  CommandCapability,
  IdBound,
  Plugin,
  PluginHostApi,
  Tool,
} from "./amber_types.ts";
import create__PASCAL__ from "./mod.ts";

const api: PluginHostApi = {
  apiVersion: 1,
  version: "__AMBER_VERSION__",
  any: () => ({ kind: "any" }),
  exact: (...ids) => ({ kind: "exact", ids }),
  namespace: (prefix) => ({ kind: "namespace", prefix }),
  namespacedExact: (prefix, ids) => ({ kind: "namespacedExact", prefix, ids }),
  PluginCategory: {
    Provider: "provider",
    Observability: "observability",
    Tools: "tools",
    Ui: "ui",
    Memory: "memory",
    Search: "search",
    Other: "other",
  },
};

function admits(bound: IdBound | undefined, id: string): boolean {
  if (bound === undefined) return false;
  switch (bound.kind) {
    case "any":
      return true;
    case "exact":
      return bound.ids.includes(id);
    case "namespace":
      return id.startsWith(bound.prefix);
    case "namespacedExact":
      return id.startsWith(bound.prefix) && bound.ids.includes(id);
  }
}

async function activate(
  section: unknown = {},
): Promise<{ plugin: Plugin; capabilities: readonly Capability[] }> {
  const plugin = create__PASCAL__(api);
  ok(await plugin.initialize({ pluginId: plugin.id, section: () => section }));
  return { plugin, capabilities: plugin.capabilities() };
}

function toolOf(capabilities: readonly Capability[], name: string): Tool {
  const tool = capabilities.flatMap((c) => c.kind === "tool" ? c.tools : [])
    .find((t) => t.name === name);
  ok(tool, \`no tool \${name}\`);
  return tool;
}

function commandOf(capabilities: readonly Capability[], root: string): CommandCapability {
  const command = capabilities.find((c): c is CommandCapability =>
    c.kind === "command" && c.root === root
  );
  ok(command, \`no command /\${root}\`);
  return command;
}

Deno.test("__ID__: the plugin has an id amber accepts and a semver version", () => {
  const plugin = create__PASCAL__(api);
  ok(/^[a-z0-9_]+$/.test(plugin.id));
  ok(/^\\d+\\.\\d+\\.\\d+/.test(plugin.version));
});

Deno.test("__ID__: the tool greets, with the configured greeting", async () => {
  const signal = new AbortController().signal;
  const plain = toolOf((await activate()).capabilities, "__TOOL__");
  deepStrictEqual(await plain.execute({ name: "amber" }, { signal }), {
    ok: true,
    output: "Hello, amber!",
  });
  const configured = toolOf((await activate({ greeting: "Hi" })).capabilities, "__TOOL__");
  strictEqual((await configured.execute({ name: "amber" }, { signal })).output, "Hi, amber!");
});

Deno.test("__ID__: /__ID__ greet <name> answers", async () => {
  const command = commandOf((await activate()).capabilities, "__ID__");
  strictEqual(await command.handlers.greet("amber"), "Hello, amber!");
});

Deno.test("__ID__: everything it contributes is inside its bound", async () => {
  const { plugin, capabilities } = await activate();
  for (const capability of capabilities) {
    if (capability.kind === "tool") {
      for (const tool of capability.tools) ok(admits(plugin.bound?.tools, tool.name), tool.name);
    } else if (capability.kind === "command") {
      ok(admits(plugin.bound?.commands, capability.root), capability.root);
    } else {
      ok(admits(plugin.bound?.prompts, capability.name), capability.name);
    }
  }
  await plugin.shutdown();
});
`;

const AMBER_TYPES_TS = `/**
 * The part of amber's plugin contract this package uses, as types only (vendored by
 * \`amber plugin new\` from amber __AMBER_VERSION__, so the package needs no amber import at run
 * time and builds offline). They mirror \`@amber/core\`: a value of these types is what amber
 * expects. For the full contract (panels, providers, wallets, hooks...), see \`@amber/core\`.
 *
 * @module
 */

/** Which ids a bound axis admits. */
export type IdBound =
  | { readonly kind: "any" }
  | { readonly kind: "exact"; readonly ids: readonly string[] }
  | { readonly kind: "namespace"; readonly prefix: string }
  | { readonly kind: "namespacedExact"; readonly prefix: string; readonly ids: readonly string[] };

/** What a plugin may contribute: anything outside it fails activation. Absent admits nothing. */
export interface CapabilityBound {
  /** Tool names. */
  readonly tools?: IdBound;
  /** Command roots. */
  readonly commands?: IdBound;
  /** Prompt block names. */
  readonly prompts?: IdBound;
  /** Status segment names. */
  readonly segments?: IdBound;
}

/** What the host hands the plugin factory (amber's \`PluginHostApi\`). */
export interface PluginHostApi {
  /** The version of the API object. */
  readonly apiVersion: number;
  /** The host's (amber's) version. */
  readonly version: string;
  /** A bound axis admitting any id. */
  any(): IdBound;
  /** A bound axis admitting exactly these ids. */
  exact(...ids: string[]): IdBound;
  /** A bound axis admitting every id under a prefix. */
  namespace(prefix: string): IdBound;
  /** A bound axis admitting exactly these ids, each under a prefix. */
  namespacedExact(prefix: string, ids: readonly string[]): IdBound;
  /** The common plugin categories. */
  readonly PluginCategory: {
    readonly Provider: "provider";
    readonly Observability: "observability";
    readonly Tools: "tools";
    readonly Ui: "ui";
    readonly Memory: "memory";
    readonly Search: "search";
    readonly Other: "other";
  };
}

/** What a tool returns. Errors are returned, never thrown. */
export interface ToolResult {
  /** Whether the tool did what it was asked. */
  readonly ok: boolean;
  /** Text for the model. */
  readonly output: string;
  /** What went wrong, when \`ok\` is false. */
  readonly error?: string;
}

/** What a tool receives besides its arguments. */
export interface ToolCallContext {
  /** Aborted when the run is cancelled. */
  readonly signal: AbortSignal;
}

/**
 * A tool a model can call. \`Args\` is the type of the arguments \`execute\` receives, which
 * amber has validated against \`parameters\`; keep the two in agreement.
 */
export interface Tool<Args = unknown> {
  /** Unique across the harness: \`[A-Za-z0-9_-]{1,64}\`. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The arguments as a JSON Schema object; amber validates them before \`execute\`. */
  readonly parameters: { readonly [key: string]: unknown };
  /** Whether the tool only reads. */
  readonly readOnly?: boolean;
  /**
   * Runs the tool with validated arguments. A method rather than a function property, so a
   * \`Tool<{ name: string }>\` still fits where a \`Tool\` is expected (as in \`ToolCapability\`).
   */
  execute(args: Args, context: ToolCallContext): ToolResult | Promise<ToolResult>;
}

/** A tool capability: one contribution, however many tools. */
export interface ToolCapability {
  /** The dispatch key. */
  readonly kind: "tool";
  /** Unique within the plugin. */
  readonly name: string;
  /** The tools. */
  readonly tools: readonly Tool[];
}

/** A node of a command's subtree. */
export interface CommandNode {
  /** One line of help. */
  readonly help?: string;
  /** The manual text. */
  readonly man?: string;
  /** Child nodes by name. */
  readonly children?: { readonly [name: string]: CommandNode };
}

/** A slash command: \`/root path... arg\`. */
export interface CommandCapability {
  /** The dispatch key. */
  readonly kind: "command";
  /** Unique within the plugin. */
  readonly name: string;
  /** The root word. */
  readonly root: string;
  /** One line of help for the root. */
  readonly help: string;
  /** The manual. */
  readonly man?: string;
  /** The nodes below the root. */
  readonly subtree: { readonly [name: string]: CommandNode };
  /** Handlers by dotted path below the root; each gets the rest of the line. */
  readonly handlers: { readonly [path: string]: (arg: string) => string | Promise<string> };
}

/** A block of text appended to the system prompt. */
export interface PromptBlockCapability {
  /** The dispatch key. */
  readonly kind: "prompt";
  /** Unique across the harness. */
  readonly name: string;
  /** Lower comes first; amber's own blocks use 100, 200 and 300. */
  readonly priority: number;
  /** The block's text now; pure and fast. */
  render(): string;
}

/** What this package contributes. */
export type Capability = ToolCapability | CommandCapability | PromptBlockCapability;

/** The part of the context \`initialize\` receives that this package uses. */
export interface PluginContext {
  /** The plugin's own id. */
  readonly pluginId: string;
  /** This plugin's section of amber's config.yaml (\`plugins.<id>\`), read live. */
  section(): unknown;
}

/** An amber plugin. */
export interface Plugin {
  /** A slug, \`[a-z0-9_]+\`, unique in the harness. */
  readonly id: string;
  /** A semver version. */
  readonly version: string;
  /** The display name. */
  readonly name: string;
  /** One line shown in the plugin list. */
  readonly description?: string;
  /** Groups the plugin in the list. */
  readonly category?: string;
  /** What it may contribute. */
  readonly bound?: CapabilityBound;
  /** Captures the context; false marks the plugin failed. */
  initialize(context: PluginContext): boolean | Promise<boolean>;
  /** Releases what the plugin holds; its contributions are removed by amber. */
  shutdown(): void | Promise<void>;
  /** Called once per activation; amber installs each capability and can remove it again. */
  capabilities(): readonly Capability[];
}
`;

const README_MD = `# __PACKAGE__

__NAME__: an amber plugin with a \`__TOOL__\` tool and a
\`/__ID__ greet <name>\` command.

## Use it in amber

\`\`\`sh
amber plugins add ./mod.ts          # or the directory; from JSR: amber plugins add jsr:__PACKAGE__
amber tools                         # __TOOL__ is listed, owned by __ID__
amber cmd __ID__ greet amber        # Hello, amber!
amber plugins disable __ID__        # and it is gone; enable brings it back
\`\`\`

amber records the file's sha256 in \`plugins.lock.json\`; after you edit \`mod.ts\`, run
\`amber plugins add ./mod.ts\` again to accept the change (until then amber refuses to load it).

Configure it in amber's \`config.yaml\`:

\`\`\`yaml
plugins:
  __ID__:
    greeting: Hi
\`\`\`

## How it is built

\`mod.ts\` exports a factory as its default export. amber calls it with its host API (\`exact\`,
\`any\`, \`namespace\`, \`namespacedExact\`, \`PluginCategory\`, amber's \`version\`), so the plugin needs no
import of amber at run time; \`amber_types.ts\` holds the types of amber's plugin contract it uses,
vendored from amber __AMBER_VERSION__. A module you add to amber should import only relative files,
\`npm:\` packages and \`node:\` modules: bare names resolve through amber's own import map, not this
package's.

## Develop

\`\`\`sh
deno test                          # mod_test.ts activates the plugin without amber
deno publish --dry-run             # what JSR would receive (tests are excluded)
deno publish                       # publish to JSR as __PACKAGE__
\`\`\`

Change the scope in \`deno.json\` (\`__PACKAGE__\`) to yours before publishing.

## License

MIT
`;

const LICENSE = `MIT License

Copyright (c) __YEAR__ the __ID__ authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`;

/**
 * Every file of the scaffold, in the order they are written.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TEMPLATE_FILES } from "./templates.ts";
 * assert.deepEqual(TEMPLATE_FILES.map((file) => file.path), [
 *   "deno.json",
 *   "mod.ts",
 *   "mod_test.ts",
 *   "amber_types.ts",
 *   "README.md",
 *   "LICENSE",
 * ]);
 * ```
 */
export const TEMPLATE_FILES: readonly TemplateFile[] = [
  { path: "deno.json", text: DENO_JSON },
  { path: "mod.ts", text: MOD_TS },
  { path: "mod_test.ts", text: MOD_TEST_TS },
  { path: "amber_types.ts", text: AMBER_TYPES_TS },
  { path: "README.md", text: README_MD },
  { path: "LICENSE", text: LICENSE },
];
