/**
 * `@amber/core/testing`: a test host for one plugin. {@linkcode testPlugin} activates the plugin
 * through a real {@linkcode PluginRuntime} over real registries, with test host services (an
 * in-memory todo list; background jobs only when you pass them), then lets a test run its tools,
 * render its status segments and panels, dispatch its commands and reach its provider presets.
 * Disabling it (explicitly, or when the host is disposed) checks the ledger invariant: every
 * registry is back to exactly what it held before the plugin was enabled, and the ledger holds
 * nothing of the plugin, subscriptions included.
 *
 * `@amber/core` imports no other amber package, so the registries are an argument: pass
 * `createRegistries()` from `@amber/registries` (with `coreFlavors: { openai: openaiDialect }`
 * from `@amber/providers/openai` when a provider plugin uses the shared `openai` flavor).
 *
 * Provider plugins: start the fake provider of `@amber/providers/testing` on loopback, take the
 * plugin's preset with {@linkcode TestHost.provider} and its `baseUrl` pointed at the fake
 * server, and stream through `ProviderClient` from `@amber/providers/client`:
 *
 * ```ts ignore
 * await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
 * server.script({ text: "Hi!" });
 * const { dialect, settings, preset } = await host.provider("my-preset", {
 *   baseUrl: `${server.url}/v1`,
 * });
 * const client = new ProviderClient(dialect, settings);
 * await client.stream({ model: preset.defaultModel, messages: [...], tools: [] }, onEvent);
 * ```
 *
 * Third-party plugins: amber runs them in a process of their own with only the permissions the
 * user granted, unless the user trusts them. The plugin is the same object either way, but a
 * plugin object cannot be sent to a process, so {@linkcode testPluginModule} takes the module:
 * `sandboxed: true` starts its plugin process exactly as amber does, `false` imports it here.
 * {@linkcode bothWays} runs the same checks both ways; {@linkcode TestHost.settle} waits for the
 * renders a sandboxed plugin pushes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exact } from "@amber/core";
 * import { testPlugin } from "@amber/core/testing";
 * import { createRegistries } from "@amber/registries";
 *
 * await using host = await testPlugin({
 *   id: "echo",
 *   version: "1.0.0",
 *   name: "Echo",
 *   bound: { tools: exact("echo") },
 *   initialize: () => true,
 *   shutdown: () => {},
 *   capabilities: () => [{
 *     kind: "tool",
 *     name: "echo",
 *     tools: [{
 *       name: "echo",
 *       description: "Echo the text.",
 *       parameters: { type: "object", properties: { text: { type: "string" } } },
 *       execute: (args) => ({ ok: true, output: (args as { text: string }).text }),
 *     }],
 *   }],
 * }, { registries: createRegistries() });
 * assert.equal((await host.execute("echo", { text: "hi" })).output, "hi");
 * ```
 *
 * @module
 */

import type { ComposedStatus } from "./status.ts";
import { emptyStatusSnapshot, type StatusSnapshot } from "./status.ts";
import { type CommandOutcome, walkCommandTree } from "./command.ts";
import type { Contribution } from "./contribution.ts";
import type { Dialect, ProviderSettings } from "./dialect.ts";
import { AmberError } from "./errors.ts";
import { LedgerInvariantError, registryContents } from "./_ledger_invariant.ts";

export { LedgerInvariantError, registryContents };
import type { Plugin, PluginPermissions, PluginState } from "./plugin.ts";
import { createPluginHostApi, type PluginFactory, pluginFromExport } from "./plugin_module.ts";
import type { PresetEntry } from "./provider.ts";
import type { Registries } from "./registries.ts";
import { PluginRuntime } from "./runtime.ts";
import type { Diagnostic } from "./runtime_types.ts";
import type { HostServices, TodoItem, TodoService } from "./services.ts";
import type { ToolResult } from "./tool.ts";

/** Options of {@linkcode testPlugin}. */
export interface TestPluginOptions {
  /** Fresh registries, e.g. `createRegistries()` from `@amber/registries`. */
  readonly registries: Registries;
  /** The plugin's section of config.yaml (`plugins.<id>`), decoded by its schema as usual. */
  readonly config?: unknown;
  /** Host services; an in-memory todo list by default, merged under what you pass. */
  readonly services?: HostServices;
  /** Plugins the plugin requires; registered and activated before it, part of the baseline. */
  readonly requires?: readonly Plugin[];
  /** The workspace root; the current directory by default. */
  readonly workspace?: string;
  /** The host version a plugin factory's API reports; `0.0.0-test` by default. */
  readonly hostVersion?: string;
  /** How long `initialize` and `shutdown` may take (ms); 5 s by default. */
  readonly timeoutMs?: number;
  /** Receives every diagnostic (contained faults) as it happens. */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
}

/** A provider preset of the plugin, ready for a `ProviderClient`. */
export interface TestProvider {
  /** The preset, with `baseUrl` replaced when you gave one. */
  readonly preset: PresetEntry;
  /** A fresh dialect of the preset's flavor. */
  readonly dialect: Dialect;
  /** The settings to build a client with. */
  readonly settings: ProviderSettings;
}

/** The test host {@linkcode testPlugin} returns; `await using` disables and checks it. */
export interface TestHost extends AsyncDisposable {
  /**
   * The plugin (a factory's product, when a factory was given); sandboxed, the host's stand-in
   * for the plugin process.
   */
  readonly plugin: Plugin;
  /** Whether the plugin runs in the test's process or in a plugin process. */
  readonly way: TestWay;
  /** Sandboxed, the id of the plugin's process while one runs; in-process, undefined. */
  readonly pid: number | undefined;
  /** The runtime it runs in. */
  readonly runtime: PluginRuntime;
  /** The registries. */
  readonly registries: Registries;
  /** The host services the plugin was given. */
  readonly services: HostServices;
  /** The plugin's state. */
  state(): PluginState;
  /** The plugin's live contributions, oldest first. */
  contributions(): readonly Contribution[];
  /** The names of the plugin's tools. */
  tools(): readonly string[];
  /** Validates `args` and runs tool `name`; every failure is an error result. */
  execute(name: string, args: unknown, signal?: AbortSignal): Promise<ToolResult>;
  /**
   * The status bar `width` cells wide: the plugin's segments (and its requirements'). Sandboxed,
   * a segment shows what its process last pushed: after a new snapshot, {@linkcode settle}
   * before reading the new render.
   */
  status(width?: number, snapshot?: StatusSnapshot): ComposedStatus;
  /**
   * Panel `id`'s lines at `width`, or undefined when there is no such panel. Sandboxed, at a new
   * width, {@linkcode settle} before reading the new render.
   */
  panel(id: string, width?: number): readonly string[] | undefined;
  /** Runs a slash command line such as `/hello greet amber` (the slash is optional). */
  command(line: string): Promise<CommandOutcome>;
  /**
   * Resolves once the plugin has handled everything sent to it, and what it pushed because of
   * it (prompt, status and panel renders) is in. A render in the host is synchronous, so a
   * sandboxed plugin's renders are the last ones its process pushed; in-process this resolves at
   * once. Never rejects: a process that died shows in {@linkcode TestHost.state}.
   */
  settle(): Promise<void>;
  /**
   * Preset `name` with its dialect (loaded, where the flavor loads it lazily), for a
   * `ProviderClient`; `baseUrl` points it at a fake provider. Rejects with a
   * {@linkcode TestHostError} for an unknown preset.
   */
  provider(name: string, settings?: Partial<ProviderSettings>): Promise<TestProvider>;
  /** The diagnostics so far. */
  diagnostics(): readonly Diagnostic[];
  /**
   * Switches the plugin off and checks the ledger invariant; throws a
   * {@linkcode LedgerInvariantError} when something of it is left or something else went.
   */
  disable(): Promise<void>;
  /** Switches it on again; resolves to its state. */
  enable(): Promise<PluginState>;
}

/**
 * The test host could not do what was asked: the plugin did not activate, or a preset is
 * unknown.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TestHostError } from "@amber/core/testing";
 * assert.equal(new TestHostError("plugin 'x' failed: boom").name, "TestHostError");
 * ```
 */
export class TestHostError extends AmberError {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TestHostError";
  }
}

/**
 * An in-memory todo list, the test host's default todo service.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createTestTodos } from "@amber/core/testing";
 * const todos = createTestTodos();
 * todos.write([{ content: "write tests", status: "pending" }]);
 * assert.equal(todos.list().length, 1);
 * ```
 */
export function createTestTodos(): TodoService {
  let items: readonly TodoItem[] = [];
  return {
    list: () => items,
    write(next: readonly TodoItem[]): void {
      items = Object.freeze(next.map((item) => Object.freeze({ ...item })));
    },
  };
}

/**
 * Activates one plugin (or the plugin a factory returns, given the host API) in a test host.
 * Rejects with a {@linkcode TestHostError} naming the reason when it does not activate (after
 * checking that the failed activation left the registries as they were), or with a
 * `PluginShapeError` when the value is not a plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { testPlugin } from "@amber/core/testing";
 * import { createRegistries } from "@amber/registries";
 * const host = await testPlugin((api) => ({
 *   id: "hi",
 *   version: "1.0.0",
 *   name: "Hi",
 *   bound: { commands: api.exact("hi") },
 *   initialize: () => true,
 *   shutdown: () => {},
 *   capabilities: () => [{
 *     kind: "command",
 *     name: "hi",
 *     root: "hi",
 *     help: "Say hi",
 *     subtree: {},
 *     handlers: { "": (arg) => `hi ${arg}` },
 *   }],
 * }), { registries: createRegistries() });
 * assert.deepEqual(await host.command("/hi there"), { ok: true, text: "hi there" });
 * await host.disable(); // throws if anything of the plugin is left
 * ```
 */
export async function testPlugin(
  plugin: Plugin | PluginFactory,
  options: TestPluginOptions,
): Promise<TestHost> {
  const resolved = await pluginFromExport(
    plugin,
    createPluginHostApi(options.hostVersion ?? "0.0.0-test"),
  );
  return await hostPlugin(resolved, options, {}, "in-process");
}

// What a sandboxed test host adds to the in-process one (`_testing_sandbox.ts`): the plugin
// process's id, settling on it, the runtime to fail the plugin in when the process dies, and
// ending the process at disposal even when the plugin did not shut down.
interface HostHooks {
  readonly pid?: () => number | undefined;
  readonly settle?: () => Promise<void>;
  readonly started?: (runtime: PluginRuntime) => void;
  readonly closed?: () => Promise<void>;
}

async function hostPlugin(
  resolved: Plugin,
  options: TestPluginOptions,
  hooks: HostHooks,
  way: TestWay,
): Promise<TestHost> {
  const id = resolved.id;
  const { registries } = options;
  const services: HostServices = { todos: createTestTodos(), ...options.services };
  const runtime = new PluginRuntime({
    registries,
    allOn: true,
    config: { plugins: options.config === undefined ? {} : { [id]: options.config } },
    workspace: { root: options.workspace ?? Deno.cwd() },
    host: services,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.onDiagnostic ? { onDiagnostic: options.onDiagnostic } : {}),
  });
  hooks.started?.(runtime);
  for (const requirement of options.requires ?? []) runtime.register(requirement);
  await runtime.start();
  for (const requirement of options.requires ?? []) {
    const state = runtime.state(requirement.id);
    if (state.status !== "active") {
      throw new TestHostError(
        `requirement '${requirement.id}' did not activate: ${describe(state)}`,
      );
    }
  }
  // The baseline is taken with the requirements up, so only the plugin's own entries count.
  const baseline = registryContents(registries);
  runtime.register(resolved);
  const check = (): void => {
    const now = registryContents(registries);
    const leftBehind = now.filter((entry) => !baseline.includes(entry));
    const missing = baseline.filter((entry) => !now.includes(entry));
    const ledgered = runtime.ledger.contributions(id).map((c) => `${c.kind}:${id}:${c.name}`);
    if (leftBehind.length > 0 || missing.length > 0 || ledgered.length > 0) {
      throw new LedgerInvariantError(id, [...new Set([...leftBehind, ...ledgered])], missing);
    }
  };
  const first = await runtime.setState(id, true);
  if (first.state.status !== "active") {
    check();
    await runtime.stop();
    throw new TestHostError(`plugin '${id}' did not activate: ${describe(first.state)}`);
  }
  let closed = false;
  const host: TestHost = {
    plugin: resolved,
    way,
    get pid() {
      return hooks.pid?.();
    },
    runtime,
    registries,
    services,
    state: () => runtime.state(id),
    contributions: () => runtime.ledger.contributions(id),
    tools: () =>
      registries.tool.list().filter((entry) => entry.owner === id).map((entry) => entry.tool.name),
    execute: (name, args, signal) =>
      registries.tool.execute(name, args, { signal: signal ?? new AbortController().signal }),
    status: (width = 80, snapshot) =>
      registries.status.compose(width, snapshot ?? emptyStatusSnapshot()),
    panel: (panelId, width = 80) => registries.panel.render(panelId, width),
    command: (line) => dispatchLine(registries, line),
    settle: () => hooks.settle?.() ?? Promise.resolve(),
    provider: async (name, settings = {}) => {
      const preset = registries.provider.preset(name);
      if (preset === undefined) {
        const known = registries.provider.presets().map((p) => p.name).join(", ") || "(none)";
        throw new TestHostError(`unknown preset '${name}'; presets: ${known}`);
      }
      const dialect = await registries.provider.resolveFlavor(preset.flavor).dialect();
      const baseUrl = settings.baseUrl ?? preset.baseUrl;
      return {
        preset: { ...preset, baseUrl },
        dialect,
        settings: {
          baseUrl,
          ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
        },
      };
    },
    diagnostics: () => runtime.diagnostics(),
    async disable(): Promise<void> {
      await runtime.setState(id, false);
      check();
    },
    async enable(): Promise<PluginState> {
      return (await runtime.setState(id, true)).state;
    },
    async [Symbol.asyncDispose](): Promise<void> {
      if (closed) return;
      closed = true;
      try {
        if (runtime.state(id).status === "active") await host.disable();
      } finally {
        try {
          await runtime.stop();
        } finally {
          await hooks.closed?.();
        }
      }
    },
  };
  return host;
}

/** How a test host runs the plugin: in the test's own process, or in a plugin process. */
export type TestWay = "in-process" | "sandboxed";

/** Options of {@linkcode testPluginModule}. */
export interface TestPluginModuleOptions extends TestPluginOptions {
  /**
   * True: the module runs in a plugin process of its own, with only the permissions granted, as
   * amber runs a third-party plugin; false: it is imported into the test's process, as amber
   * runs a bundled or `trusted` plugin.
   */
  readonly sandboxed: boolean;
  /**
   * What the plugin process may touch. By default the plugin's own `permissions`: the author is
   * testing their own plugin, so it gets what it asks for, as after `amber plugins add --grant`.
   * Pass less to test how it copes without.
   */
  readonly grant?: PluginPermissions;
  /** The folder `data:` paths of the grant mean; a temporary one, removed at disposal, by default. */
  readonly dataDir?: string;
  /**
   * Folders the plugin process may read to import the module: the module file's folder by
   * default (nothing for a module that is not a file, e.g. `npm:`).
   */
  readonly readFolders?: readonly string[];
  /**
   * How long the plugin process has to import the module and describe it (ms); 30 s by default,
   * since a first run compiles the module graph and a test machine may be busy.
   */
  readonly importTimeoutMs?: number;
  /** Receives each line the plugin process logs (its `console` and stderr). */
  readonly onLog?: (line: string) => void;
}

/**
 * Activates the plugin a module exports by default (a plugin or a factory), either imported into
 * the test's process or in a plugin process of its own, and returns the same
 * {@linkcode TestHost} as {@linkcode testPlugin}. A plugin object cannot be sent to a process,
 * so this takes the module's URL. Sandboxed, disposal (or `runtime.stop()`) ends the plugin
 * process; the plugin process dying is a contained fault that fails the plugin, as in amber.
 * Rejects like {@linkcode testPlugin}; sandboxed, a module that does not import or describe is
 * a {@linkcode TestHostError} with the plugin process's words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { testPluginModule } from "@amber/core/testing";
 * import { createRegistries } from "@amber/registries";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${dir}/pid.js`,
 *   `export default (api) => ({
 *     id: "pid", version: "1.0.0", name: "Pid", bound: { tools: api.exact("pid") },
 *     initialize: () => true, shutdown() {},
 *     capabilities: () => [{ kind: "tool", name: "pid", tools: [{
 *       name: "pid", description: "The process it runs in.", parameters: { type: "object" },
 *       execute: () => ({ ok: true, output: String(Deno.pid) }),
 *     }] }],
 *   });`,
 * );
 * await using host = await testPluginModule(new URL(`file://${dir}/pid.js`), {
 *   registries: createRegistries(),
 *   sandboxed: true,
 * });
 * assert.equal(host.way, "sandboxed");
 * assert.equal((await host.execute("pid", {})).output, String(host.pid));
 * assert.notEqual(host.pid, Deno.pid);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function testPluginModule(
  module: string | URL,
  options: TestPluginModuleOptions,
): Promise<TestHost> {
  const specifier = module instanceof URL ? module.href : module;
  if (!options.sandboxed) {
    const loaded = await import(specifier) as { readonly default?: unknown };
    const resolved = await pluginFromExport(
      loaded.default,
      createPluginHostApi(options.hostVersion ?? "0.0.0-test"),
    );
    return await hostPlugin(resolved, options, {}, "in-process");
  }
  const { startSandboxed } = await import("./_testing_sandbox.ts");
  let sandboxed: Awaited<ReturnType<typeof startSandboxed>>;
  try {
    sandboxed = await startSandboxed(specifier, options);
  } catch (error) {
    if (error instanceof AmberError) {
      throw new TestHostError(`${specifier} did not load in a plugin process: ${error.message}`, {
        cause: error,
      });
    }
    throw error;
  }
  try {
    return await hostPlugin(sandboxed.plugin, options, sandboxed, "sandboxed");
  } catch (error) {
    await sandboxed.closed();
    throw error;
  }
}

/** Options of {@linkcode bothWays}: those of {@linkcode testPluginModule} for each way. */
export interface BothWaysOptions extends Omit<TestPluginModuleOptions, "registries" | "sandboxed"> {
  /** Fresh registries for each way, e.g. `createRegistries` from `@amber/registries`. */
  readonly registries: () => Registries;
}

/**
 * Runs the same checks against a plugin module in-process and then sandboxed: `check` gets a
 * {@linkcode TestHost} for each way, which is disposed (its plugin process ended) after it.
 * A failing check rejects with a {@linkcode TestHostError} whose message starts with the way
 * and whose `cause` is what the check threw.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bothWays } from "@amber/core/testing";
 * import { createRegistries } from "@amber/registries";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${dir}/echo.js`,
 *   `export default {
 *     id: "echo", version: "1.0.0", name: "Echo",
 *     bound: { tools: { kind: "exact", ids: ["echo"] } },
 *     initialize: () => true, shutdown() {},
 *     capabilities: () => [{ kind: "tool", name: "echo", tools: [{
 *       name: "echo", description: "Echo the text.",
 *       parameters: { type: "object", properties: { text: { type: "string" } } },
 *       execute: (args) => ({ ok: true, output: args.text }),
 *     }] }],
 *   };`,
 * );
 * const ways: string[] = [];
 * await bothWays(new URL(`file://${dir}/echo.js`), { registries: createRegistries }, async (host, way) => {
 *   assert.equal((await host.execute("echo", { text: "hi" })).output, "hi");
 *   ways.push(way);
 * });
 * assert.deepEqual(ways, ["in-process", "sandboxed"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function bothWays(
  module: string | URL,
  options: BothWaysOptions,
  check: (host: TestHost, way: TestWay) => void | Promise<void>,
): Promise<void> {
  for (const way of ["in-process", "sandboxed"] as const) {
    await using host = await testPluginModule(module, {
      ...options,
      registries: options.registries(),
      sandboxed: way === "sandboxed",
    });
    try {
      await check(host, way);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new TestHostError(`${way}: ${message}`, { cause: error });
    }
  }
}

function describe(state: PluginState): string {
  return state.status === "failed" || state.status === "blocked"
    ? `${state.status}: ${state.reason}`
    : state.status;
}

// The words of a slash command line walked down the command tree as far as they name nodes;
// what is left is the argument, as `amber cmd` and the TUI read a line.
function dispatchLine(registries: Registries, line: string): Promise<CommandOutcome> {
  const words = line.trim().replace(/^\//, "").split(/\s+/).filter((word) => word !== "");
  const rootWord = words[0];
  const roots = registries.command.tree();
  const { root, path, used } = walkCommandTree(roots, words);
  if (root === undefined) {
    const names = roots.map((r) => r.name).join(", ") || "(none)";
    return Promise.resolve({
      ok: false,
      error: `unknown command root '${rootWord ?? ""}'; roots: ${names}`,
    });
  }
  return registries.command.dispatch(root.name, path, words.slice(used).join(" "));
}
