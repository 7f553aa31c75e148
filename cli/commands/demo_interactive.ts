/**
 * `amber demo --interactive`: the interactive session on amber's fake provider, in a scratch
 * workspace, with the hello plugin switched on and the scripted model of `demo_script.ts`
 * answering each prompt. Loaded only when asked for, like the TUI.
 *
 * @module
 */

import type { FakeProvider } from "@amber/providers/testing";
import { UsageError } from "../args.ts";
import type { CommandContext } from "../command.ts";
import { openHost } from "../host.ts";
import { DenoTerminal, type Terminal } from "../tui/terminal.ts";
import { buildTui, runInTerminal, type Tui } from "./tui.ts";
import { DEMO_KEY, demoGreeting, DemoScript, makeDemoPlace } from "./demo_script.ts";

/** The model the demo's fake provider says it is. */
export const DEMO_MODEL = "amber-demo";

/** What {@linkcode openInteractiveDemo} opened. */
export interface InteractiveDemo extends AsyncDisposable {
  /** The TUI, ready to run. */
  readonly tui: Tui;
  /** Feeds the scripted answers. */
  readonly script: DemoScript;
  /** The fake provider the session talks to (what it was sent is in its `requests`). */
  readonly server: FakeProvider;
  /** The scratch directory: `root`, `workspace`, `configDir`. */
  readonly root: string;
  /** The demo's workspace. */
  readonly workspace: string;
  /** The demo's config directory (its sessions are kept there). */
  readonly configDir: string;
}

/** How {@linkcode openInteractiveDemo} opens the demo. */
export interface InteractiveDemoOptions {
  /** The terminal to draw on. */
  readonly terminal: Terminal;
  /** The plugins to open the host with (the bundled ones in `amber demo`). */
  readonly plugins: CommandContext["plugins"];
  /** Draw colours. */
  readonly color?: boolean;
  /** Frame and tick periods, for tests. */
  readonly frameMs?: number;
  /** How often the app ticks, ms. */
  readonly tickMs?: number;
}

/**
 * Makes the scratch workspace, starts the fake provider, opens the session with the TUI over
 * `terminal` (approvals asked, the hello plugin on) and subscribes the script; disposing it
 * closes the TUI's services and the provider, and keeps the files.
 *
 * @example
 * ```ts ignore
 * await using demo = await openInteractiveDemo({ terminal, plugins: makeBundledPlugins });
 * await demo.tui.app.run();
 * ```
 */
export async function openInteractiveDemo(
  options: InteractiveDemoOptions,
): Promise<InteractiveDemo> {
  const { root, workspace, configDir } = await makeDemoPlace();
  // The fake provider is loaded only here: no other command needs it.
  const { FakeProvider, openaiEncoder } = await import("@amber/providers/testing");
  const server = await FakeProvider.start({ encoders: [openaiEncoder], models: [DEMO_MODEL] });
  let tui: Tui;
  try {
    tui = await buildTui({
      openHost: (extras) =>
        openHost({ ...extras, plugins: options.plugins(), configDir, workspace }),
      terminal: options.terminal,
      overrides: { provider: "openai", model: DEMO_MODEL, baseUrl: `${server.url}/v1` },
      approve: "ask",
      maxSteps: 10,
      env: (name) => name === "OPENAI_API_KEY" ? DEMO_KEY : undefined,
      color: options.color,
      frameMs: options.frameMs,
      tickMs: options.tickMs,
      greeting: demoGreeting(workspace),
    });
  } catch (error) {
    await server.close();
    throw error;
  }
  // Off everywhere else; the demo shows a plugin's tool and its switch. Saved in the demo's own
  // config directory only.
  await tui.host.runtime.setState("hello", true);
  const script = new DemoScript(server);
  tui.session.subscribe(script.listener);
  return {
    tui,
    script,
    server,
    root,
    workspace,
    configDir,
    async [Symbol.asyncDispose]() {
      tui.close();
      await tui.host.close();
      await server.close();
    },
  };
}

/**
 * Runs `amber demo --interactive` in the process's terminal; resolves to the exit code.
 *
 * @example
 * ```ts ignore
 * const code = await runInteractiveDemo(context);
 * ```
 */
export async function runInteractiveDemo(context: CommandContext): Promise<number> {
  if (!Deno.stdin.isTerminal() || !Deno.stdout.isTerminal()) {
    throw new UsageError("demo --interactive needs a terminal; `amber demo` runs without one");
  }
  const terminal = new DenoTerminal();
  const color = (Deno.env.get("NO_COLOR") ?? "") === "";
  await using demo = await openInteractiveDemo({ terminal, plugins: context.plugins, color });
  return await runInTerminal(demo.tui, terminal, context.io, {
    color,
    after: (id) =>
      `amber demo: session ${id}; its transcript and the workspace stay in ${demo.root}\n` +
      "(with a real model: amber --provider <preset>; amber providers lists them)",
  });
}
