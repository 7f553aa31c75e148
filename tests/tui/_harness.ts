// The TUI in-process, for tests that need no real terminal: the real host, plugins, kernel and
// fake provider, with a terminal whose output is applied to a virtual screen the test reads.

import type { Plugin } from "@amber/core";
import { makeBundledPlugins } from "@amber/plugins";
import { FakeProvider, openaiEncoder, type ScriptedTurn } from "@amber/providers/testing";
import { buildTui, type Tui } from "../../cli/commands/tui.ts";
import { openHost } from "../../cli/host.ts";
import type { Terminal, TerminalHandlers } from "../../cli/tui/terminal.ts";
import { VirtualTerminal } from "./_vt.ts";
import { switchHelloOn } from "../_hello_on.ts";

export class FakeTerminal implements Terminal {
  vt: VirtualTerminal;
  handlers: TerminalHandlers | undefined;
  restored = false;

  constructor(public columns: number, public rows: number) {
    this.vt = new VirtualTerminal(columns, rows);
  }

  size(): { columns: number; rows: number } {
    return { columns: this.columns, rows: this.rows };
  }

  write(text: string): void {
    this.vt.write(text);
  }

  start(handlers: TerminalHandlers): void {
    this.handlers = handlers;
  }

  restore(): void {
    this.restored = true;
  }

  type(text: string): void {
    this.handlers!.onInput(new TextEncoder().encode(text));
  }

  resize(columns: number, rows: number): void {
    this.columns = columns;
    this.rows = rows;
    this.vt.resize(columns, rows);
    this.handlers!.onResize();
  }

  text(): string {
    return this.vt.text();
  }
}

export interface Running extends AsyncDisposable {
  readonly tui: Tui;
  readonly terminal: FakeTerminal;
  readonly server: FakeProvider;
  readonly configDir: string;
  readonly workspace: string;
  readonly exit: Promise<number>;
  waitFor(test: RegExp | ((screen: string) => boolean), what?: string): Promise<string>;
  /** Resolves once no turn is running. */
  idle(): Promise<string>;
}

export async function startTui(
  options: {
    turns?: ScriptedTurn[];
    columns?: number;
    rows?: number;
    model?: string;
    plugins?: readonly Plugin[];
    env?: (name: string) => string | undefined;
  } = {},
): Promise<Running> {
  const configDir = await Deno.makeTempDir({ prefix: "amber-tui-" });
  // The worked example plugin is off by default; these tests use its tool and command.
  await switchHelloOn(configDir);
  const workspace = await Deno.makeTempDir({ prefix: "amber-tui-ws-" });
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(...(options.turns ?? []));
  const terminal = new FakeTerminal(options.columns ?? 80, options.rows ?? 24);
  const tui = await buildTui({
    openHost: (extras) =>
      openHost({
        ...extras,
        configDir,
        workspace,
        thirdParty: false,
        plugins: [...makeBundledPlugins(), ...(options.plugins ?? [])],
      }),
    terminal,
    overrides: { baseUrl: `${server.url}/v1`, model: options.model ?? "fake-model" },
    env: options.env ?? (() => "sk-test-key-1234"),
    frameMs: 1,
    tickMs: 50,
  });
  const exit = tui.app.run();
  const waitFor = async (
    test: RegExp | ((screen: string) => boolean),
    what = String(test),
  ): Promise<string> => {
    const deadline = Date.now() + 10_000;
    const check = typeof test === "function" ? test : (s: string) => test.test(s);
    while (Date.now() < deadline) {
      const screen = terminal.text();
      if (check(screen)) return screen;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`timed out waiting for ${what}; the screen:\n${terminal.text()}`);
  };
  // An answer is on screen a moment before its turn ends (the step is committed after); keys
  // typed before then go to a busy session. Tests wait for this before the next prompt.
  const idle = () => waitFor(() => !tui.app.busy, "the turn to end");
  return {
    tui,
    terminal,
    server,
    configDir,
    workspace,
    exit,
    waitFor,
    idle,
    async [Symbol.asyncDispose]() {
      tui.app.quit();
      await exit;
      tui.close();
      await tui.host.close();
      await server.close();
      await Deno.remove(configDir, { recursive: true });
      await Deno.remove(workspace, { recursive: true });
    },
  };
}
