// The sandboxed "box" plugin the stand-in tests drive (one of every capability kind), and the
// scene they run it in: a real PluginRuntime over the real registries, the box's "process" in
// memory (`_memory_connection.ts`) beside an in-process plugin "other".

import { deepStrictEqual } from "node:assert/strict";
import type {
  AmberConfig,
  Capability,
  HostServices,
  Plugin,
  PluginContext,
  PluginRuntime,
  Registries,
  ToolResult,
} from "@amber/core";
import { loadSandboxedPlugin, type SandboxedPlugin, type SandboxFault } from "@amber/core/sandbox";
import { makePlugin, makeRuntime, OPEN_BOUND } from "../_helpers.ts";
import { type MemoryConnection, memoryProcesses } from "./_memory_connection.ts";

export const SPAWN = {
  specifier: "file:///plugins/box/mod.ts",
  pluginId: "box",
  grant: {},
  workspace: "/ws",
  dataDir: "/cfg/plugins/box/data",
  readFolders: [],
  hostVersion: "1.0.0",
  importTimeoutMs: 2_000,
};

export const OBJECT = { type: "object" } as const;

export function result(output: string): ToolResult {
  return { ok: true, output };
}

// The plugin as its author writes it: one of every capability kind.
export function boxPlugin(overrides: Partial<Plugin> = {}): Plugin {
  let context: PluginContext | undefined;
  const seen: string[] = [];
  let ticks = 0;
  let cursor = 0;
  let steered = false;
  let version = 1;
  const capabilities = (): Capability[] => [
    {
      kind: "tool",
      name: "box_tools",
      tools: [
        {
          name: "echo",
          description: "Echoes its text.",
          parameters: {
            type: "object",
            properties: { text: { type: "string" } },
            required: ["text"],
          },
          verb: "echoing",
          readOnly: true,
          requiresApproval: (args) => (args as { text?: unknown }).text === "rm",
          execute: (args, call) => {
            call.progress?.("half way");
            return result(`echo ${(args as { text: string }).text}`);
          },
        },
        {
          name: "seen",
          description: "The events it saw.",
          parameters: OBJECT,
          execute: () => result(seen.join(",")),
        },
        {
          name: "section",
          description: "Its section.",
          parameters: OBJECT,
          execute: () => result(JSON.stringify(context?.section())),
        },
        {
          name: "others",
          description: "The tools it sees.",
          parameters: OBJECT,
          execute: () => result(context!.tools.list().map((e) => e.tool.name).join(",")),
        },
        {
          name: "hang",
          description: "Never answers.",
          parameters: OBJECT,
          execute: () => new Promise<ToolResult>(() => {}),
        },
        {
          name: "wait",
          description: "Waits for its cancel.",
          parameters: OBJECT,
          execute: (_, call) =>
            new Promise<ToolResult>((resolve) =>
              call.signal.addEventListener(
                "abort",
                () => resolve({ ok: false, output: "", error: "stopped by its cancel" }),
              )
            ),
        },
        {
          name: "later",
          description: "Scheduled by the gate.",
          parameters: OBJECT,
          execute: () => result("ran now"),
        },
        ...(version > 1
          ? [{
            name: "grown",
            description: "Appears at version 2.",
            parameters: OBJECT,
            execute: () => result("grown"),
          }]
          : []),
        {
          name: "grow",
          description: "Moves the live version.",
          parameters: OBJECT,
          execute: () => (version++, result(`version ${version}`)),
        },
      ],
    },
    { kind: "prompt", name: "box_prompt", priority: 400, render: () => `ticks ${ticks}` },
    {
      kind: "status",
      name: "box_model",
      priority: 10,
      dropPriority: 10,
      render: (snapshot) => ({
        text: snapshot.model === "" ? "no model" : `model ${snapshot.model}`,
        tone: "accent",
      }),
    },
    {
      kind: "panel",
      name: "box_panel",
      id: "box_panel",
      title: "Box",
      lines: (width) => [`width ${width} cursor ${cursor}`],
      onKey: (key) => key === "j" && (cursor++, true),
    },
    {
      kind: "command",
      name: "box_command",
      root: "box",
      help: "Box things.",
      subtree: { hello: { help: "Says hello." }, quiet: { help: "Inert." } },
      handlers: { hello: (arg) => `hello ${arg}` },
    },
    {
      kind: "hook",
      name: "box_hook",
      point: "AfterTool",
      run: (input) => ({
        state: [{
          op: "set",
          key: "box_calls",
          value: ((input.state.get("box_calls") as number) ?? 0) + 1,
        }],
      }),
    },
    {
      kind: "gate",
      name: "box_gate",
      check: (input) => {
        if (input.call.name === "later") {
          return { kind: "schedule", correlationId: "c1", actionKind: "box_action" };
        }
        return (input.args as { text?: unknown }).text === "forbidden"
          ? { kind: "block", reason: "box says no" }
          : { kind: "allow" };
      },
    },
    {
      kind: "guard",
      name: "box_guard",
      decide: (input) => {
        if (steered) return { kind: "complete" };
        steered = true;
        return { kind: "steer", feedback: `calls so far: ${input.state.get("box_calls")}` };
      },
    },
    {
      kind: "action",
      name: "box_action",
      run: (input) => Promise.resolve(result(`scheduled ${input.correlationId} by box`)),
    },
    { kind: "state", name: "box_calls", initial: 0 },
    { kind: "wallet", name: "box_wallet", provider: "boxai", fetch: () => Promise.resolve(12.34) },
    {
      kind: "allowance",
      name: "box_allowance",
      provider: "boxai",
      fetch: () => Promise.resolve({ windows: [{ label: "5h", percentUsed: 42 }] }),
    },
    {
      kind: "provider",
      name: "boxai",
      flavor: "openai",
      presets: [{
        name: "boxai",
        flavor: "openai",
        baseUrl: "http://127.0.0.1:9/v1",
        defaultModel: "box-1",
        requiresKey: false,
      }],
    },
  ];
  return {
    id: "box",
    version: "1.0.0",
    name: "Box",
    description: "A plugin with one of everything.",
    bound: OPEN_BOUND,
    initialize(ctx) {
      context = ctx;
      ctx.events.subscribe("turnEnded", (event) => seen.push(`turnEnded:${event.cancelled}`));
      return true;
    },
    shutdown() {},
    tick() {
      ticks++;
    },
    liveVersion: () => version,
    capabilities,
    ...overrides,
  };
}

export interface Scene extends AsyncDisposable {
  readonly runtime: PluginRuntime;
  readonly registries: Registries;
  readonly sandboxed: SandboxedPlugin;
  readonly made: MemoryConnection[];
  readonly faults: SandboxFault[];
  readonly diagnostics: string[];
}

// The sandboxed box beside an in-process plugin "other" with a tool of its own, started.
export async function scene(
  options: {
    readonly plugin?: () => Plugin;
    readonly config?: AmberConfig;
    readonly others?: readonly Plugin[];
    readonly host?: HostServices;
  } = {},
): Promise<Scene> {
  const processes = memoryProcesses(options.plugin ?? (() => boxPlugin()));
  const faults: SandboxFault[] = [];
  const diagnostics: string[] = [];
  const { runtime, registries } = makeRuntime({
    config: options.config ?? { plugins: {} },
    onDiagnostic: (d) => diagnostics.push(`${d.pluginId}: ${d.where}: ${d.message}`),
    ...(options.host === undefined ? {} : { host: options.host }),
  });
  const sandboxed = await loadSandboxedPlugin({
    ...SPAWN,
    connect: processes.connect,
    onFault: (fault) => {
      faults.push(fault);
      runtime.fail(fault.pluginId, fault.where, fault.message);
    },
  });
  runtime.register(sandboxed.plugin);
  runtime.register(otherPlugin());
  for (const plugin of options.others ?? []) runtime.register(plugin);
  await runtime.start();
  return {
    runtime,
    registries,
    sandboxed,
    made: processes.made,
    faults,
    diagnostics,
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await sandboxed.close();
    },
  };
}

/** Another plugin beside the box, with one tool (`ping`, answering "pong") the box may call. */
export function otherPlugin(): Plugin {
  return makePlugin("other", [{
    kind: "tool",
    name: "other_tools",
    tools: [{
      name: "ping",
      description: "Pings.",
      parameters: OBJECT,
      execute: () => result("pong"),
    }],
  }]);
}

// A round trip to the plugin process: everything it pushed before answering has arrived.
export async function roundTrip(registries: Registries): Promise<void> {
  const outcome = await registries.command.dispatch("box", ["hello"], "x");
  deepStrictEqual(outcome, { ok: true, text: "hello x" });
}

// Lets the process's verdict reach the runtime, and the runtime act on it.
export async function verdictIn(
  connection: MemoryConnection,
  runtime: PluginRuntime,
): Promise<void> {
  await connection.ended;
  await Promise.resolve();
  await runtime.settled();
}
