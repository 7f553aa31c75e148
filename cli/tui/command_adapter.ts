/**
 * The interactive session's command adapter: what the TUI's core commands (`/model`,
 * `/provider`, `/sessions`, `/resume`, `/compact`, `/clear`, `/panel`, `/mcp`, ...) do, as calls
 * on the agent session, the host's registries and the few things of the screen they touch. A
 * command whose outcome carries a prompt (an MCP server's prompt, `/mcp__srv__prompt args`)
 * starts a turn with it as the user's message. `/model`, `/provider` and `/resume` without an
 * argument open a picker; their arguments complete in the drawer from the same lists, fetched in
 * the background and kept for a while.
 *
 * @module
 */

import { loadModule } from "../lazy_modules.ts";
import type { CommandOutcome, CommandRoot, CommandTurn, ToolCall } from "@amber/core";
import { listSessions } from "@amber/core/kernel";
import type { AgentSession } from "../session/mod.ts";
import type { CommandTarget } from "./core_commands.ts";
import { dispatchWithin } from "../command_deadline.ts";
import type { ArgumentEntry } from "./drawer.ts";
import { MCP_PANEL_ID, McpConsole } from "./mcp_panel.ts";
import type { PanelSource } from "./panel_view.ts";
import {
  MODEL_HEADER,
  modelList,
  type PickList,
  PROVIDER_HEADER,
  providerList,
  SESSION_HEADER,
  sessionList,
} from "./pick_lists.ts";
import { Picker } from "./picker.ts";
import { parseSlash } from "./slash.ts";
import type { ToolLabel, TranscriptView } from "./transcript_view.ts";

/** What the commands need of the running app. */
export interface AppControls {
  /** The transcript. */
  readonly transcript: TranscriptView;
  /** Whether a turn is running. */
  busy(): boolean;
  /**
   * Opens a panel full screen (it exists): one of the panel registry's, or, with `source`, a
   * view of the TUI's own.
   */
  showPanel(id: string, source?: PanelSource): void;
  /**
   * Starts a turn with `prompt` as the user's message (shown as the user's row), run with what
   * the command that gave it asks of that turn (its model, its tools).
   */
  startTurn(prompt: string, command?: CommandTurn): void;
  /** Starts compacting the conversation, as a turn runs: Ctrl-C cancels it. */
  startCompaction(instructions: string): void;
  /** The conversation shown is gone: the bar's figures of its last request go too. */
  forget(): void;
  /** Back to the bottom of the transcript, and a full repaint when `repaint`. */
  scrollHome(repaint: boolean): void;
  /** The session's settings may have changed: recompose the bar (and refetch the wallet). */
  settingsChanged(wallet: boolean): void;
  /** A call's label, from its tool. */
  label(call: ToolCall): ToolLabel;
  /** Leaves. */
  quit(): void;
  /** Something the screen shows changed outside a key or an event (a list arrived). */
  redraw(): void;
}

// How long a fetched list is offered before it is fetched again, ms.
const LIST_FRESH_MS = 30_000;

// A list fetched for a picker or the drawer: for what (the provider and model it was asked
// with), when, and the fetch still running.
interface CachedList {
  readonly key: string;
  list?: PickList;
  at: number;
  loading?: Promise<PickList>;
}

/**
 * The TUI's commands over a session and an app.
 *
 * @example
 * ```ts ignore
 * const commands = new SessionCommands(session, app);
 * transcript.notice(await commands.resume(id));
 * ```
 */
export class SessionCommands implements CommandTarget {
  readonly #session: AgentSession;
  readonly #app: AppControls;
  #mcp: McpConsole | undefined;
  readonly #lists = new Map<string, CachedList>();

  /** Commands acting on `session` and `app`. */
  constructor(session: AgentSession, app: AppControls) {
    this.#session = session;
    this.#app = app;
  }

  /**
   * Runs a slash command line typed at the prompt, within its `command` deadline: it is echoed,
   * and its output (or its error) follows in the transcript. A prompt it answers with is sent
   * to the model as the user's message, unless a turn is running.
   */
  async dispatch(line: string): Promise<void> {
    const transcript = this.#app.transcript;
    transcript.notice(`› ${line}`, "dim");
    const { runtime, registries } = this.#session.host;
    // Between turns is a step boundary: a command file edited since the last step is read again
    // before its command runs (while a turn runs, its steps do this).
    if (!this.#app.busy()) runtime.refresh();
    const parsed = parseSlash(line, registries.command.tree());
    const outcome: CommandOutcome = parsed === undefined
      ? { ok: false, error: "type a command after /" }
      : await dispatchWithin(runtime, registries.command, parsed.root, parsed.path, parsed.arg);
    if (outcome.ok) {
      if (outcome.text !== "") transcript.notice(outcome.text);
      if (outcome.prompt !== undefined && outcome.prompt.trim() !== "") {
        if (this.#app.busy()) {
          transcript.notice(
            "a turn is running: its prompt was not sent; try again after it",
            "error",
          );
        } else this.#app.startTurn(outcome.prompt, outcome.turn);
      }
    } else transcript.notice(outcome.error, "error");
    this.#app.settingsChanged(false);
  }

  /** The live command tree. */
  tree(): readonly CommandRoot[] {
    return this.#session.host.registries.command.tree();
  }

  /** Opens a panel full screen. */
  openPanel(id: string): string {
    const panels = this.#session.host.registries.panel.list();
    if (!panels.some((panel) => panel.id === id)) {
      return `no panel '${id}'; panels: ${panels.map((p) => p.id).join(", ") || "(none)"}`;
    }
    this.#app.showPanel(id);
    return "";
  }

  /** The panels, one per line. */
  panels(): string {
    const panels = this.#session.host.registries.panel.list();
    if (panels.length === 0) return "no panels";
    return panels.map((p) => `${p.id}  ${p.title}  (${p.owner})`).join("\n") +
      "\nopen one with /panel <id>";
  }

  /** `/mcp ARG`: the MCP console (a panel), or a subcommand's answer. */
  async mcp(arg: string): Promise<string> {
    const host = this.#session.host;
    this.#mcp ??= new McpConsole(host, async (spec) => {
      const { approveServer } = await loadModule<typeof import("../mcp_sources.ts")>(
        "./mcp_sources.ts",
      );
      await approveServer(host.configDir, host.workspace, spec);
    });
    const result = await this.#mcp.command(arg);
    if ("text" in result) return result.text;
    this.#app.showPanel(MCP_PANEL_ID, result.panel);
    return "";
  }

  /** Switches the model, or opens the picker of the provider's models. */
  model(name: string): string {
    const session = this.#session;
    if (name === "") {
      this.#pick("models", `Models of ${session.provider}`, MODEL_HEADER, (model) => {
        this.#app.transcript.notice(this.model(model));
      });
      return "";
    }
    const said = session.setModel(name);
    this.#app.settingsChanged(false);
    return said;
  }

  /** Switches the provider, or opens the picker of the presets. */
  provider(name: string): string {
    const session = this.#session;
    if (name === "") {
      this.#pick("providers", "Providers", PROVIDER_HEADER, (preset) => {
        this.#app.transcript.notice(this.provider(preset));
      });
      return "";
    }
    const said = session.setProvider(name);
    this.#app.settingsChanged(true);
    return said;
  }

  /**
   * The values the drawer completes the argument of `command` from: models after `/model`,
   * presets after `/provider`, session ids after `/resume`; what is known now (the list is
   * fetched in the background the first time, and again once stale).
   */
  complete(command: string): readonly ArgumentEntry[] | undefined {
    if (command !== "model" && command !== "provider" && command !== "resume") return undefined;
    const cached = this.#list(listKind(command));
    return cached.list?.values ?? [];
  }

  /** The saved sessions. */
  async sessions(): Promise<string> {
    const sessions = await listSessions(this.#session.host.configDir);
    if (sessions.length === 0) return "no saved sessions";
    return sessions.slice(0, 20).map((s) =>
      `${s.id}  ${String(s.steps).padStart(3)} steps  ${s.model ?? "-"}  ${
        s.problem ? `(${s.problem}) ` : ""
      }${s.title}`
    ).join("\n") + "\ncontinue one with /resume <id>";
  }

  /**
   * Continues a saved session (its conversation is replayed into the transcript), or opens the
   * picker of the saved sessions.
   */
  async resume(id: string): Promise<string> {
    if (this.#app.busy()) throw new Error("a turn is running; Ctrl-C cancels it first");
    if (id === "") {
      this.#pick("sessions", "Sessions, newest first", SESSION_HEADER, (picked) => {
        this.resume(picked).then(
          (said) => this.#app.transcript.notice(said),
          (error: unknown) =>
            this.#app.transcript.notice(
              error instanceof Error ? error.message : String(error),
              "error",
            ),
        ).finally(() => this.#app.redraw());
      });
      return "";
    }
    const resumed = await this.#session.resume(id);
    const transcript = this.#app.transcript;
    transcript.clear();
    this.#app.forget();
    transcript.replay(resumed.messages, (call) => this.#app.label(call));
    const torn = resumed.tornTo === undefined
      ? ""
      : `\nits last line was cut off; it was moved to ${resumed.tornTo}`;
    this.#app.scrollHome(false);
    return `resumed session ${id} (${resumed.messages.length} messages)${torn}`;
  }

  /** Clears the screen and starts a new session. */
  clear(): string {
    if (this.#app.busy()) throw new Error("a turn is running; Ctrl-C cancels it first");
    this.#session.reset();
    this.#app.transcript.clear();
    this.#app.forget();
    this.#app.scrollHome(true);
    return "";
  }

  /** Starts compacting the conversation; says why not when there is none, or a turn runs. */
  compact(instructions: string): string {
    if (this.#app.busy()) {
      throw new Error("a turn is running; compact after it (Ctrl-C cancels it)");
    }
    const session = this.#session;
    if (session.problem !== undefined) throw new Error(session.problem);
    if (session.messages.length === 0) return "there is no conversation to compact yet";
    this.#app.startCompaction(instructions);
    return "";
  }

  /** Leaves. */
  quit(): string {
    this.#app.quit();
    return "";
  }

  // Opens a picker of the list `kind`: filled at once with the list kept, if any, and again
  // when the fetch running ends.
  #pick(kind: ListKind, title: string, header: readonly string[], pick: (value: string) => void) {
    const picker = new Picker({ id: `pick-${kind}`, title, header, onPick: pick });
    this.#app.showPanel(picker.id, picker.source());
    // Sessions are read again each time: one may have been saved a moment ago.
    const cached = this.#list(kind, kind === "sessions");
    const fill = (list: PickList) => {
      picker.setItems(list.items, list.notes);
      this.#app.redraw();
    };
    if (cached.list !== undefined) fill(cached.list);
    cached.loading?.then(fill, (error: unknown) => {
      picker.setItems(
        cached.list?.items ?? [],
        [error instanceof Error ? error.message : String(error)],
      );
      this.#app.redraw();
    });
  }

  // The list `kind` as kept; a fetch starts when there is none for the session as it is now
  // (its provider and model; for sessions, the one in use, which is left out), or it is stale,
  // or `fresh` asks for one.
  #list(kind: ListKind, fresh: boolean = false): CachedList {
    const session = this.#session;
    const key = kind === "sessions"
      ? session.id ?? ""
      : JSON.stringify([session.overrides, session.provider, session.model]);
    let cached = this.#lists.get(kind);
    if (cached === undefined || cached.key !== key) {
      cached = { key, at: 0 };
      this.#lists.set(kind, cached);
    }
    const age = performance.now() - cached.at;
    const due = cached.list === undefined || fresh || age > LIST_FRESH_MS;
    if (cached.loading === undefined && due) {
      const entry = cached;
      entry.loading = this.#fetch(kind);
      entry.loading.then((list) => {
        entry.list = list;
        entry.at = performance.now();
        this.#app.redraw();
      }, () => {
        // The picker says what failed; the drawer offers nothing until a later try works.
      }).finally(() => entry.loading = undefined);
    }
    return cached;
  }

  #fetch(kind: ListKind): Promise<PickList> {
    const session = this.#session;
    const host = session.host;
    switch (kind) {
      case "models":
        return modelList({ host, overrides: session.overrides, model: session.model });
      case "providers":
        return Promise.resolve(providerList(host, session.provider));
      case "sessions":
        return sessionList(host.configDir, session.id);
    }
  }
}

// The lists there are.
type ListKind = "models" | "providers" | "sessions";

function listKind(command: "model" | "provider" | "resume"): ListKind {
  return command === "model" ? "models" : command === "provider" ? "providers" : "sessions";
}
