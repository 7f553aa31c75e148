/**
 * The interactive session's loop. Input bytes become keys; keys go to exactly one place (the
 * question showing, else the open panel, else the drawer and the input line); the session's
 * events (through the reducer) and keys only change state and ask for a frame. A frame is
 * composed at most once per frame period however many tokens arrived: the transcript renders
 * what changed, the status bar is composed for the width from a snapshot of the live session,
 * and the screen writes only the cells that differ from the last frame. `runtime.tick()` runs on
 * the same loop, on a timer, so plugins' render callables can stay pure reads. A resize
 * recomposes at once. The slash commands are the command adapter's.
 *
 * Ctrl-C cancels the running turn (the kernel commits what was done, marked cancelled); at an
 * idle prompt a second Ctrl-C within two seconds leaves (the hint says so, and goes when the
 * time is up). While a turn runs, the rule above the input says how long it has run, the tool
 * running and for how long, and the live tokens and tokens per second of a streaming response.
 *
 * @module
 */

import type { CommandTurn, StatusSnapshot, ToolCall } from "@amber/core";
import type { ApprovalAnswer, ApprovalRequest } from "@amber/core/kernel";
import type { AgentSession, SessionEvent } from "../session/mod.ts";
import { todosFromMessages } from "../todos.ts";
import type { Approvals } from "./approvals.ts";
import { attachFiles } from "./attachments.ts";
import { SessionCommands } from "./command_adapter.ts";
import type { Dialogs } from "./dialogs.ts";
import { Drawer, editKey } from "./drawer.ts";
import { FrameComposer, SPINNER_FRAMES } from "./frame.ts";
import { FileIndex } from "./file_index.ts";
import { type Key, KeyDecoder } from "./input.ts";
import { type History, LineEditor } from "./line_editor.ts";
import { PanelView } from "./panel_view.ts";
import {
  applyChanges,
  forgetConversation,
  INITIAL_VIEW,
  reduce,
  type ViewState,
  withLabel,
} from "./reducer.ts";
import { Screen } from "./screen.ts";
import { TurnActivity } from "./turn_activity.ts";
import { composeStatus, StatusFeed } from "./status_line.ts";
import type { Terminal } from "./terminal.ts";
import { TodoPanel } from "./todo_panel.ts";
import { type ToolLabel, toolLabel, TranscriptView } from "./transcript_view.ts";

/** How long a first Ctrl-C at the prompt keeps the second one quitting, ms. */
export const QUIT_ARM_MS = 2000;

/** What the app runs with. */
export interface TuiAppOptions {
  /** The terminal. */
  readonly terminal: Terminal;
  /** The agent session (and through it, the host). */
  readonly session: AgentSession;
  /** The dialog queue (the plugins' UI services). */
  readonly dialogs: Dialogs;
  /** Approval questions, asked in a dialog. */
  readonly approvals: Approvals;
  /** The input history. */
  readonly history: History;
  /** Draw colours (false with NO_COLOR). */
  readonly color?: boolean;
  /** The shortest time between two frames, ms (16 by default: at most ~60 frames a second). */
  readonly frameMs?: number;
  /** How often `runtime.tick()` runs and the bar refreshes, ms (250 by default). */
  readonly tickMs?: number;
  /** How long a first Ctrl-C at the prompt keeps the second one quitting, ms (2000 by default). */
  readonly quitArmMs?: number;
  /** How long a lone Esc waits for the rest of a sequence, ms (30 by default). */
  readonly escapeMs?: number;
  /** A line shown when the session starts. */
  readonly greeting?: string;
  /** Called once the first frame is drawn (the MCP servers start connecting then). */
  readonly onFirstFrame?: () => void;
}

/**
 * The running TUI.
 *
 * @example
 * ```ts ignore
 * const app = new TuiApp({ terminal, session, dialogs, approvals, history });
 * const code = await app.run();
 * ```
 */
export class TuiApp {
  /** The slash commands' side: what `/model`, `/resume`, `/clear`... do. */
  readonly commands: SessionCommands;
  readonly #o: TuiAppOptions;
  readonly #terminal: Terminal;
  readonly #session: AgentSession;
  readonly #screen: Screen;
  readonly #frames: FrameComposer;
  readonly #decoder = new KeyDecoder();
  readonly #editor: LineEditor;
  readonly #drawer: Drawer;
  readonly #transcript = new TranscriptView();
  // The todo panel over the host's todo list (Ctrl-T).
  readonly #todos: TodoPanel;
  #view: ViewState = INITIAL_VIEW;
  #panel: PanelView | undefined;
  // The turn running, or the compaction (`/compact`): one at a time, Ctrl-C cancels either.
  #turn: { controller: AbortController; done: Promise<void> } | undefined;
  // Whether the compaction running said how it ended (its `compactionFinished`).
  #compactionSaid = false;
  #scroll = 0;
  #hint = "";
  // Whether the next Ctrl-C quits: set by one at the prompt (or by a cancel, once the turn has
  // ended), until `#armTimer` runs out or another key is typed.
  #exitArmed = false;
  #armTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #quitHint: string;
  readonly #activity = new TurnActivity();
  #spinner = 0;
  readonly #status: StatusFeed;
  #frameTimer: ReturnType<typeof setTimeout> | undefined;
  #escapeTimer: ReturnType<typeof setTimeout> | undefined;
  #tickTimer: ReturnType<typeof setInterval> | undefined;
  #refreshTimer: ReturnType<typeof setTimeout> | undefined;
  #lastFrame = 0;
  #closed = false;
  #finish: ((code: number) => void) | undefined;
  /** Bytes written to the terminal so far (for the benchmark and tests). */
  written = 0;
  /** Frames that wrote anything. */
  frames = 0;

  /** An app over `options`; nothing happens until `run`. */
  constructor(options: TuiAppOptions) {
    this.#o = options;
    this.#quitHint = `Ctrl-C again to quit (within ${
      Number(((options.quitArmMs ?? QUIT_ARM_MS) / 1000).toFixed(1))
    }s)`;
    this.#terminal = options.terminal;
    this.#session = options.session;
    const size = options.terminal.size();
    this.#screen = new Screen(size.columns, size.rows, options.color ?? true);
    this.#frames = new FrameComposer(this.#screen);
    this.#editor = new LineEditor(options.history);
    const mcp = options.session.host.mcp;
    // `@server:uri` completes from the resources of the servers connected at that moment.
    // `@path` completes from the workspace's files, listed at the first `@` and kept.
    const files = new FileIndex(options.session.host.workspace, {
      onUpdate: () => this.#invalidate(),
    });
    this.#drawer = new Drawer({
      ...(mcp === undefined ? {} : {
        resources: () =>
          mcp.list().flatMap((server) =>
            server.state.status === "connected"
              ? server.resources.map((resource) => ({ server: server.name, ...resource }))
              : []
          ),
      }),
      files: () => files.paths(),
      arguments: (command) => this.commands.complete(command),
    });
    this.#status = new StatusFeed(options.session, () => this.#invalidate());
    this.#todos = new TodoPanel(options.session.host.services.todos, () => this.#invalidate());
    options.dialogs.attach(() => this.#invalidate(), (message, tone) => {
      this.#transcript.notice(message, tone === "info" ? "info" : tone);
      this.#invalidate();
    });
    options.session.subscribe((event) => this.#event(event));
    // A server connecting, failing or changing its lists: the bar's count and an open /mcp
    // console show it at the next frame, and between turns its tools and prompt commands are
    // applied at once (a turn applies them at its next step boundary).
    options.session.host.mcp?.onChange(() => {
      this.#status.refresh();
      this.#refreshIdle();
      this.#invalidate();
    });
    this.commands = new SessionCommands(options.session, {
      transcript: this.#transcript,
      busy: () => this.busy,
      showPanel: (id, source) => {
        this.#panel = new PanelView(id, source ?? this.#session.host.registries.panel);
        this.#invalidate();
      },
      startTurn: (prompt, command) => this.#startTurn(prompt, command),
      startCompaction: (instructions) => this.#startCompaction(instructions),
      forget: () => {
        this.#view = forgetConversation(this.#view);
        // The plan is the conversation's: none after /clear, the resumed one's after /resume.
        this.#todos.restart(todosFromMessages(this.#session.messages));
        this.#invalidate();
      },
      scrollHome: (repaint) => {
        this.#scroll = 0;
        if (repaint) this.#screen.invalidate();
      },
      settingsChanged: (wallet) => {
        this.#status.refresh();
        if (wallet) this.#status.refreshWallet();
        this.#invalidate();
      },
      label: (call) => this.#label(call),
      quit: () => this.quit(),
      redraw: () => this.#invalidate(),
    });
  }

  /** The transcript (tests look at it). */
  get transcript(): TranscriptView {
    return this.#transcript;
  }

  /** The screen (tests and the benchmark read it). */
  get screen(): Screen {
    return this.#screen;
  }

  /** Whether a turn is running. */
  get busy(): boolean {
    return this.#turn !== undefined;
  }

  /**
   * Starts the terminal and the loop; resolves with the exit code once the user leaves. A
   * running turn is cancelled and allowed to commit before it resolves.
   */
  run(): Promise<number> {
    const done = new Promise<number>((resolve) => this.#finish = resolve);
    this.#terminal.start({
      onInput: (bytes) => this.input(bytes),
      onResize: () => this.resize(),
      onEnd: () => this.quit(),
    });
    if (this.#o.greeting) this.#transcript.notice(this.#o.greeting, "dim");
    if (this.#session.problem !== undefined) {
      this.#transcript.notice(
        `${this.#session.problem}\n(commands work; /provider or /model switches, /quit leaves)`,
        "error",
      );
    }
    this.#status.refresh();
    this.#status.refreshWallet();
    this.#tickTimer = setInterval(() => this.#tick(), this.#o.tickMs ?? 250);
    this.#frame();
    this.#o.onFirstFrame?.();
    return done;
  }

  /** Feeds input bytes (the terminal calls this; tests may too). */
  input(bytes: Uint8Array): void {
    if (this.#escapeTimer !== undefined) clearTimeout(this.#escapeTimer);
    this.#escapeTimer = undefined;
    for (const key of this.#decoder.feed(bytes)) this.#key(key);
    if (this.#decoder.pending) {
      this.#escapeTimer = setTimeout(() => {
        this.#escapeTimer = undefined;
        for (const key of this.#decoder.flush()) this.#key(key);
        this.#invalidate();
      }, this.#o.escapeMs ?? 30);
    }
    this.#invalidate();
  }

  /** The terminal changed size: recompose at once. */
  resize(): void {
    const size = this.#terminal.size();
    this.#screen.resize(size.columns, size.rows);
    this.#frame();
  }

  /** Ctrl-C: cancel the turn, else close what is open, else arm (then do) the exit. */
  interrupt(): void {
    const dialogs = this.#o.dialogs;
    if (this.#turn !== undefined) {
      dialogs.cancelAll();
      this.#turn.controller.abort();
      this.#hint = "cancelling… (Ctrl-C again at the prompt quits)";
      this.#exitArmed = true;
      if (this.#armTimer !== undefined) clearTimeout(this.#armTimer);
      this.#armTimer = undefined;
    } else if (dialogs.active) {
      dialogs.cancelAll();
    } else if (this.#panel !== undefined) {
      this.#panel = undefined;
    } else if (this.#exitArmed) {
      this.quit();
      return;
    } else {
      if (this.#editor.text !== "") this.#editor.take();
      this.#armQuit();
    }
    this.#invalidate();
  }

  /** Leaves: cancels a running turn, lets it commit, then resolves `run`. */
  quit(code: number = 0): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#o.dialogs.cancelAll();
    if (this.#tickTimer !== undefined) clearInterval(this.#tickTimer);
    if (this.#frameTimer !== undefined) clearTimeout(this.#frameTimer);
    if (this.#escapeTimer !== undefined) clearTimeout(this.#escapeTimer);
    if (this.#refreshTimer !== undefined) clearTimeout(this.#refreshTimer);
    if (this.#armTimer !== undefined) clearTimeout(this.#armTimer);
    this.#todos.close();
    const turn = this.#turn;
    if (turn === undefined) {
      this.#finish?.(code);
      return;
    }
    // The kernel commits the cancelled step before the run ends; wait for that, not forever.
    turn.controller.abort();
    let timer: ReturnType<typeof setTimeout> | undefined;
    Promise.race([
      turn.done,
      new Promise<void>((resolve) => timer = setTimeout(resolve, 3000)),
    ]).then(() => {
      clearTimeout(timer);
      this.#finish?.(code);
    });
  }

  /** The snapshot the bar is composed from this frame. */
  snapshot(): StatusSnapshot {
    const { meter, runningTool, prompt } = this.#view;
    return this.#status.snapshot({
      scrollMode: this.#scroll > 0,
      meter,
      runningTool,
      ...(prompt === undefined ? {} : { prompt }),
    });
  }

  /** Composes one frame into the screen (the benchmark calls this directly). */
  compose(): void {
    // A question asked while a panel is open shows over the session; the panel comes back after.
    let panel = this.#o.dialogs.active ? undefined : this.#panel;
    if (panel !== undefined && !panel.exists) {
      this.#transcript.notice(`panel '${panel.id}' closed: its plugin went away`, "warn");
      this.#panel = panel = undefined;
    }
    const registries = this.#session.host.registries;
    this.#frames.compose({
      status: (width) => composeStatus(registries.status, width, this.snapshot()),
      dialogs: this.#o.dialogs,
      editor: this.#editor,
      drawer: this.#drawer,
      tree: registries.command.tree(),
      panel,
      transcript: this.#transcript,
      scroll: this.#scroll,
      hint: this.#hint,
      turn: this.#turn === undefined
        ? undefined
        : { ...this.#activity.label(this.#view.meter, performance.now()), spinner: this.#spinner },
      todos: (width, rows) => this.#todos.lines(width, rows),
    });
  }

  // ---- keys ----

  #key(key: Key): void {
    if (this.#closed) return;
    if (key.ctrl && key.name === "c") {
      this.interrupt();
      return;
    }
    this.#disarmQuit();
    if (this.#turn === undefined) this.#hint = "";
    const dialogs = this.#o.dialogs;
    // Typed text arrives in runs; a question's hotkeys and a panel's keys are single characters.
    if (
      key.name === "text" && key.text !== undefined && key.text.length > 1 &&
      (dialogs.active || this.#panel !== undefined)
    ) {
      const chars = [...key.text];
      if (chars.length > 1) {
        for (const char of chars) this.#key({ ...key, text: char });
        return;
      }
    }
    if (dialogs.key(key)) return;
    if (this.#panel !== undefined) {
      if (this.#panel.key(key) === "close") this.#panel = undefined;
      return;
    }
    if (key.ctrl && key.name === "l") {
      this.#screen.invalidate();
    } else if (key.ctrl && key.name === "o") {
      this.#transcript.toggleReasoning();
    } else if (key.ctrl && key.name === "x") {
      this.#transcript.toggleLastTool();
    } else if (key.ctrl && key.name === "y") {
      const viewer = this.#transcript.lastToolViewer();
      if (viewer !== undefined) this.#panel = new PanelView(viewer.id, viewer);
    } else if (key.ctrl && key.name === "t") {
      this.#todos.toggle();
    } else if (key.ctrl && key.name === "d" && this.#editor.text === "") {
      this.quit();
    } else if (key.name === "pageup" || key.name === "pagedown") {
      this.#scrollBy(key.name === "pageup" ? 1 : -1);
    } else if (
      editKey({
        drawer: this.#drawer,
        editor: this.#editor,
        tree: () => this.#session.host.registries.command.tree(),
        submit: () => this.#submit(),
      }, key) === "escape"
    ) {
      this.#scroll = 0;
    }
  }

  // The next Ctrl-C quits, for `quitArmMs`; then the hint goes and a Ctrl-C arms again.
  #armQuit(): void {
    this.#exitArmed = true;
    this.#hint = this.#quitHint;
    if (this.#armTimer !== undefined) clearTimeout(this.#armTimer);
    this.#armTimer = setTimeout(() => {
      this.#armTimer = undefined;
      this.#disarmQuit();
      this.#invalidate();
    }, this.#o.quitArmMs ?? QUIT_ARM_MS);
  }

  #disarmQuit(): void {
    this.#exitArmed = false;
    if (this.#armTimer !== undefined) clearTimeout(this.#armTimer);
    this.#armTimer = undefined;
    if (this.#hint === this.#quitHint) this.#hint = "";
  }

  #scrollBy(pages: number): void {
    const rows = Math.max(1, this.#screen.height - 3);
    const page = Math.max(1, rows - 2);
    const max = Math.max(0, this.#transcript.totalLines(this.#screen.width) - rows);
    this.#scroll = Math.max(0, Math.min(max, this.#scroll + pages * page));
  }

  #submit(): void {
    const text = this.#editor.text;
    if (text.trim() === "") return;
    const command = text.trimStart().startsWith("/") && !text.includes("\n");
    if (!command && this.#turn !== undefined) {
      this.#hint = "a turn is running: wait for it, or Ctrl-C to cancel it";
      return;
    }
    this.#editor.take();
    this.#o.history.add(text).catch(() => {
      // The history is a convenience: a read-only config dir must not stop the session.
    });
    this.#scroll = 0;
    if (command) this.commands.dispatch(text.trim());
    else this.#startTurn(text);
  }

  // ---- turns ----

  #startTurn(prompt: string, command?: CommandTurn): void {
    this.#transcript.addUser(prompt);
    // The last answer's figures are not this turn's, from the moment it is sent: its first step
    // may wait for attached files to be read, or for the provider.
    this.#view = { ...this.#view, meter: INITIAL_VIEW.meter };
    if (this.#session.problem !== undefined) {
      this.#transcript.notice(this.#session.problem, "error");
      return;
    }
    const controller = new AbortController();
    // The model gets the files the prompt mentions (`@path`); the transcript, a note of each.
    const attached = attachFiles(prompt, this.#session.host.workspace, {
      redact: (text) => this.#session.redact(text),
    }).then((sent) => {
      for (const { note, attached } of sent.notes) {
        this.#transcript.notice(note, attached ? "dim" : "warn");
      }
      return sent.prompt;
    });
    this.#track(
      controller,
      attached.then((sent) =>
        this.#session.turn(sent, {
          ...(command === undefined ? {} : { command }),
          signal: controller.signal,
          ask: (request, signal) => this.#ask(request, signal),
        })
      ).then(() => {}),
    );
  }

  // `/compact`: runs like a turn (the spinner shows, Ctrl-C cancels it); the transcript says
  // how it goes from its events, or from its outcome when it ended without one.
  #startCompaction(instructions: string): void {
    const controller = new AbortController();
    this.#compactionSaid = false;
    this.#track(
      controller,
      this.#session.compact(instructions, { signal: controller.signal }).then((outcome) => {
        if (this.#compactionSaid || outcome.compacted) return;
        this.#transcript.notice(outcome.message ?? "the conversation was not compacted", "warn");
      }),
    );
    this.#invalidate();
  }

  // The running work (a turn, a compaction): Ctrl-C aborts `controller`; a failure is said in
  // the transcript; its end brings the prompt back.
  #track(controller: AbortController, work: Promise<void>): void {
    const done = work.then(
      () => {},
      (error: unknown) => {
        this.#transcript.notice(
          `error: ${error instanceof Error ? error.message : String(error)}`,
          "error",
        );
      },
    ).finally(() => this.#ended());
    this.#turn = { controller, done };
    this.#activity.start(performance.now());
  }

  #ended(): void {
    this.#turn = undefined;
    this.#refreshIdle();
    this.#view = { ...this.#view, runningTool: "" };
    this.#activity.end();
    // A cancel armed the quit; it runs for its time from when the prompt is back.
    if (this.#hint.startsWith("cancelling")) {
      if (this.#exitArmed) this.#armQuit();
      else this.#hint = "";
    }
    this.#status.refreshWallet();
    this.#invalidate();
  }

  // Between turns is a step boundary: what live plugins (an MCP server that connected) changed
  // is applied, so their commands and tools are there before the next prompt. Deferred: the
  // change is announced from inside the plugin's own update.
  #refreshIdle(): void {
    if (this.#refreshTimer !== undefined || this.#closed) return;
    this.#refreshTimer = setTimeout(() => {
      this.#refreshTimer = undefined;
      if (this.#turn !== undefined || this.#closed) return;
      this.#session.host.runtime.refresh();
      this.#invalidate();
    }, 0);
  }

  // The session's approval question, put to the user in a dialog.
  #ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const label = { verb: this.#label(request.call).verb, summary: request.summary };
    this.#view = withLabel(this.#view, request.call.id, label);
    return this.#o.approvals.ask(request, signal);
  }

  #label(call: ToolCall): ToolLabel {
    const tool = this.#session.host.runtime.environment().tools.get(call.name)?.tool;
    return this.#view.labels.get(call.id) ?? toolLabel(tool, call);
  }

  #event(event: SessionEvent): void {
    if (event.type === "compactionFinished") this.#compactionSaid = true;
    const now = performance.now();
    const { state, changes } = reduce(this.#view, event, now);
    this.#view = state;
    this.#activity.event(event, now);
    applyChanges(this.#transcript, changes, (call) => this.#label(call));
    this.#invalidate();
  }

  // ---- frames ----

  #invalidate(): void {
    if (this.#frameTimer !== undefined || this.#closed) return;
    const wait = Math.max(0, (this.#o.frameMs ?? 16) - (performance.now() - this.#lastFrame));
    this.#frameTimer = setTimeout(() => {
      this.#frameTimer = undefined;
      this.#frame();
    }, wait);
  }

  #tick(): void {
    this.#session.host.runtime.tick();
    this.#spinner = (this.#spinner + 1) % SPINNER_FRAMES;
    if (this.#spinner % 4 === 0) this.#status.refresh();
    this.#invalidate();
  }

  #frame(): void {
    if (this.#closed) return;
    if (this.#frameTimer !== undefined) {
      clearTimeout(this.#frameTimer);
      this.#frameTimer = undefined;
    }
    this.compose();
    const out = this.#screen.render();
    this.#lastFrame = performance.now();
    if (out === "") return;
    this.written += out.length;
    this.frames++;
    this.#terminal.write(out);
  }
}
