/**
 * The interactive session's loop. Input bytes become keys; keys go to exactly one place (the
 * question showing, else the open panel, else the drawer and the input line); run events and
 * keys only change state and ask for a frame. A frame is composed at most once per frame period
 * however many tokens arrived: the transcript renders what changed, the status bar is composed
 * for the width from a snapshot of the live session, and the screen writes only the cells that
 * differ from the last frame. `runtime.tick()` runs on the same loop, on a timer, so plugins'
 * render callables can stay pure reads. A resize recomposes at once.
 *
 * Ctrl-C cancels the running turn (the kernel commits what was done, marked cancelled); at an
 * idle prompt a second Ctrl-C in a row leaves.
 *
 * @module
 */

import {
  type ApprovalAnswer,
  type ApprovalRequest,
  type CommandRoot,
  emptyStatusSnapshot,
  listSessions,
  type RunEvent,
  type StatusSnapshot,
  type ToolCall,
} from "@amber/core";
import { truncateToCells } from "@amber/registries/cells";
import { describeEnd } from "../agent.ts";
import type { Host } from "../host.ts";
import type { Approvals } from "./approvals.ts";
import type { CommandTarget } from "./core_commands.ts";
import type { Dialogs } from "./dialogs.ts";
import { Drawer } from "./drawer.ts";
import { type Key, KeyDecoder } from "./input.ts";
import { type History, layoutInput, LineEditor } from "./line_editor.ts";
import type { StyledLine } from "./lines.ts";
import { PanelView } from "./panel_view.ts";
import { Screen } from "./screen.ts";
import type { AgentSession } from "./session.ts";
import { runSlash } from "./slash.ts";
import { composeStatus, TurnMeter } from "./status_line.ts";
import { Styles } from "./style.ts";
import type { Terminal } from "./terminal.ts";
import { type ToolLabel, TranscriptView } from "./transcript_view.ts";

/** What the app runs with. */
export interface TuiAppOptions {
  /** The terminal. */
  readonly terminal: Terminal;
  /** The started host. */
  readonly host: Host;
  /** The agent session. */
  readonly session: AgentSession;
  /** The dialog queue (the plugins' UI services). */
  readonly dialogs: Dialogs;
  /** The session's approvals. */
  readonly approvals: Approvals;
  /** The input history. */
  readonly history: History;
  /** Draw colours (false with NO_COLOR). */
  readonly color?: boolean;
  /** The shortest time between two frames, ms (16 by default: at most ~60 frames a second). */
  readonly frameMs?: number;
  /** How often `runtime.tick()` runs and the bar refreshes, ms (250 by default). */
  readonly tickMs?: number;
  /** How long a lone Esc waits for the rest of a sequence, ms (30 by default). */
  readonly escapeMs?: number;
  /** A line shown when the session starts. */
  readonly greeting?: string;
}

const SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
const PROMPT = [{ text: "› ", style: Styles.accent }];

/**
 * The running TUI.
 *
 * @example
 * ```ts ignore
 * const app = new TuiApp({ terminal, host, session, dialogs, approvals, history });
 * const code = await app.run();
 * ```
 */
export class TuiApp implements CommandTarget {
  readonly #o: TuiAppOptions;
  readonly #terminal: Terminal;
  readonly #host: Host;
  readonly #session: AgentSession;
  readonly #screen: Screen;
  readonly #decoder = new KeyDecoder();
  readonly #editor: LineEditor;
  readonly #drawer = new Drawer();
  readonly #transcript = new TranscriptView();
  readonly #meter = new TurnMeter();
  readonly #labels = new Map<string, ToolLabel>();
  #panel: PanelView | undefined;
  #turn: { controller: AbortController; done: Promise<void> } | undefined;
  #runningTool = "";
  #scroll = 0;
  #hint = "";
  #exitArmed = false;
  #spinner = 0;
  #base: StatusSnapshot = emptyStatusSnapshot();
  #jobs = 0;
  #frameTimer: ReturnType<typeof setTimeout> | undefined;
  #escapeTimer: ReturnType<typeof setTimeout> | undefined;
  #tickTimer: ReturnType<typeof setInterval> | undefined;
  #lastFrame = 0;
  #closed = false;
  // The transcript lines of the last frame, to tell when the new frame shows them scrolled up.
  #lastView: readonly StyledLine[] = [];
  #lastWidth = 0;
  #finish: ((code: number) => void) | undefined;
  /** Bytes written to the terminal so far (for the benchmark and tests). */
  written = 0;
  /** Frames that wrote anything. */
  frames = 0;

  /** An app over `options`; nothing happens until `run`. */
  constructor(options: TuiAppOptions) {
    this.#o = options;
    this.#terminal = options.terminal;
    this.#host = options.host;
    this.#session = options.session;
    const size = options.terminal.size();
    this.#screen = new Screen(size.columns, size.rows, options.color ?? true);
    this.#editor = new LineEditor(options.history);
    options.dialogs.attach(() => this.#invalidate(), (message, tone) => {
      this.#transcript.notice(message, tone === "info" ? "info" : tone);
      this.#invalidate();
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
    this.#refreshBase();
    this.#refreshWallet();
    this.#tickTimer = setInterval(() => this.#tick(), this.#o.tickMs ?? 250);
    this.#frame();
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
    if (this.#turn !== undefined) {
      this.#o.dialogs.cancelAll();
      this.#turn.controller.abort();
      this.#hint = "cancelling… (Ctrl-C again at the prompt quits)";
      this.#exitArmed = true;
    } else if (this.#o.dialogs.active) {
      this.#o.dialogs.cancelAll();
    } else if (this.#panel !== undefined) {
      this.#panel = undefined;
    } else if (this.#exitArmed) {
      this.quit();
      return;
    } else {
      if (this.#editor.text !== "") this.#editor.take();
      this.#exitArmed = true;
      this.#hint = "Ctrl-C again to quit";
    }
    this.#invalidate();
  }

  // ---- commands (the core roots the TUI adds) ----

  /** The live command tree. */
  tree(): readonly CommandRoot[] {
    return this.#host.registries.command.tree();
  }

  /** Opens a panel full screen. */
  openPanel(id: string): string {
    const panels = this.#host.registries.panel.list();
    if (!panels.some((panel) => panel.id === id)) {
      return `no panel '${id}'; panels: ${panels.map((p) => p.id).join(", ") || "(none)"}`;
    }
    this.#panel = new PanelView(id, this.#host.registries.panel);
    this.#invalidate();
    return "";
  }

  /** The panels, one per line. */
  panels(): string {
    const panels = this.#host.registries.panel.list();
    if (panels.length === 0) return "no panels";
    return panels.map((p) => `${p.id}  ${p.title}  (${p.owner})`).join("\n") +
      "\nopen one with /panel <id>";
  }

  /** Shows or switches the model. */
  model(name: string): string {
    if (name === "") return `model ${this.#session.model} (provider ${this.#session.provider})`;
    const said = this.#session.setModel(name);
    this.#refreshBase();
    return said;
  }

  /** Shows or switches the provider. */
  provider(name: string): string {
    if (name === "") {
      const presets = this.#host.registries.provider.presets().map((p) => p.name);
      return `provider ${this.#session.provider}, model ${this.#session.model}\npresets: ${
        presets.join(", ")
      }`;
    }
    const said = this.#session.setProvider(name);
    this.#refreshBase();
    this.#refreshWallet();
    return said;
  }

  /** The saved sessions. */
  async sessions(): Promise<string> {
    const sessions = await listSessions(this.#host.configDir);
    if (sessions.length === 0) return "no saved sessions";
    return sessions.slice(0, 20).map((s) =>
      `${s.id}  ${String(s.steps).padStart(3)} steps  ${s.model ?? "-"}  ${
        s.problem ? `(${s.problem}) ` : ""
      }${s.title}`
    ).join("\n") + "\ncontinue one with /resume <id>";
  }

  /** Continues a saved session. */
  async resume(id: string): Promise<string> {
    if (id === "") throw new Error("usage: /resume <id> (see /sessions)");
    if (this.#turn !== undefined) throw new Error("a turn is running; Ctrl-C cancels it first");
    const resumed = await this.#session.resume(id);
    this.#o.approvals.reset();
    this.#transcript.clear();
    this.#transcript.replay(resumed.messages, (call) => this.#label(call));
    const torn = resumed.tornTo === undefined
      ? ""
      : `\nits last line was cut off; it was moved to ${resumed.tornTo}`;
    this.#scroll = 0;
    return `resumed session ${id} (${resumed.messages.length} messages)${torn}`;
  }

  /** Clears the screen and starts a new session. */
  clear(): string {
    if (this.#turn !== undefined) throw new Error("a turn is running; Ctrl-C cancels it first");
    this.#session.reset();
    this.#o.approvals.reset();
    this.#transcript.clear();
    this.#scroll = 0;
    this.#screen.invalidate();
    return "";
  }

  /** Leaves: cancels a running turn, lets it commit, then resolves `run`. */
  quit(code: number = 0): string {
    if (this.#closed) return "";
    this.#closed = true;
    this.#o.dialogs.cancelAll();
    if (this.#tickTimer !== undefined) clearInterval(this.#tickTimer);
    if (this.#frameTimer !== undefined) clearTimeout(this.#frameTimer);
    if (this.#escapeTimer !== undefined) clearTimeout(this.#escapeTimer);
    const turn = this.#turn;
    if (turn === undefined) {
      this.#finish?.(code);
      return "";
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
    return "";
  }

  // ---- keys ----

  #key(key: Key): void {
    if (this.#closed) return;
    if (key.ctrl && key.name === "c") {
      this.interrupt();
      return;
    }
    this.#exitArmed = false;
    if (this.#turn === undefined) this.#hint = "";
    // Typed text arrives in runs; a question's hotkeys and a panel's keys are single characters.
    if (
      key.name === "text" && key.text !== undefined && key.text.length > 1 &&
      (this.#o.dialogs.active || this.#panel !== undefined)
    ) {
      const chars = [...key.text];
      if (chars.length > 1) {
        for (const char of chars) this.#key({ ...key, text: char });
        return;
      }
    }
    if (this.#o.dialogs.key(key)) return;
    if (this.#panel !== undefined) {
      if (this.#panel.key(key) === "close") this.#panel = undefined;
      return;
    }
    if (key.ctrl && key.name === "l") {
      this.#screen.invalidate();
      return;
    }
    if (key.ctrl && key.name === "o") {
      this.#transcript.toggleReasoning();
      return;
    }
    if (key.ctrl && key.name === "d" && this.#editor.text === "") {
      this.quit();
      return;
    }
    if (key.name === "pageup" || key.name === "pagedown") {
      this.#scrollBy(key.name === "pageup" ? 1 : -1);
      return;
    }
    const drawer = this.#drawer;
    drawer.update(this.tree(), this.#editor.text);
    if (drawer.open && key.name === "escape") {
      drawer.dismiss();
      return;
    }
    if (drawer.open && drawer.match.entries.length > 0) {
      if (key.name === "up" || key.name === "down") {
        drawer.move(key.name === "up" ? -1 : 1);
        return;
      }
      if (key.name === "tab") {
        const completion = drawer.completion();
        if (completion !== undefined) this.#editor.set(`${completion} `);
        drawer.update(this.tree(), this.#editor.text);
        return;
      }
      if (key.name === "enter" && !key.alt) {
        // A partial word completes to the selection, which then runs.
        const completion = drawer.completion();
        const typed = this.#editor.text.trim();
        const exact = drawer.match.entries.some((e) => e.line === typed);
        if (completion !== undefined && !exact && completion.startsWith(typed)) {
          this.#editor.set(completion);
        }
      }
    } else if (key.name === "escape") {
      if (this.#scroll > 0) this.#scroll = 0;
      return;
    }
    if (this.#editor.handle(key) === "submit") this.#submit();
    drawer.update(this.tree(), this.#editor.text);
  }

  #scrollBy(pages: number): void {
    const page = Math.max(1, this.#transcriptRows() - 2);
    const width = this.#screen.width;
    const max = Math.max(0, this.#transcript.totalLines(width) - this.#transcriptRows());
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
    if (command) this.#command(text.trim());
    else this.#startTurn(text);
  }

  #command(line: string): void {
    this.#transcript.notice(`› ${line}`, "dim");
    runSlash(this.#host.registries.command, line).then((outcome) => {
      if (outcome.ok) {
        if (outcome.text !== "") this.#transcript.notice(outcome.text);
      } else this.#transcript.notice(outcome.error, "error");
      this.#refreshBase();
      this.#invalidate();
    });
  }

  // ---- turns ----

  #startTurn(prompt: string): void {
    if (this.#session.problem !== undefined) {
      this.#transcript.addUser(prompt);
      this.#transcript.notice(this.#session.problem, "error");
      return;
    }
    this.#transcript.addUser(prompt);
    const controller = new AbortController();
    const done = this.#session.turn(prompt, controller.signal, (event) => this.#event(event))
      .then(
        () => {},
        (error: unknown) => {
          this.#transcript.notice(
            `error: ${error instanceof Error ? error.message : String(error)}`,
            "error",
          );
        },
      )
      .finally(() => {
        this.#turn = undefined;
        this.#runningTool = "";
        if (this.#hint.startsWith("cancelling")) this.#hint = "Ctrl-C again to quit";
        this.#refreshWallet();
        this.#invalidate();
      });
    this.#turn = { controller, done };
  }

  /** The kernel's `ask`: the approval goes to the user in a dialog. */
  ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalAnswer> {
    this.#labels.set(request.call.id, {
      verb: this.#label(request.call).verb,
      summary: request.summary,
    });
    return this.#o.approvals.ask(request, signal);
  }

  #label(call: ToolCall): ToolLabel {
    const known = this.#labels.get(call.id);
    if (known !== undefined) return known;
    const entry = this.#host.runtime.environment().tools.get(call.name);
    let summary = call.name;
    try {
      const args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
      summary = entry?.tool.summarize?.(args) ?? call.name;
    } catch {
      // A summary is cosmetic.
    }
    return { verb: entry?.tool.verb ?? call.name, summary };
  }

  #event(event: RunEvent): void {
    const now = performance.now();
    switch (event.type) {
      case "stepStart":
        this.#meter.stepStart(now);
        break;
      case "text":
        this.#meter.delta(now);
        this.#transcript.appendText(event.delta);
        break;
      case "reasoning":
        this.#meter.delta(now);
        this.#transcript.appendReasoning(event.delta);
        break;
      case "toolCallStart":
        this.#meter.delta(now);
        break;
      case "stepEnd":
        this.#meter.stepEnd(event.usage, now);
        this.#transcript.endStream();
        break;
      case "toolStart":
        this.#runningTool = event.call.name;
        this.#transcript.toolStart(event.call, { verb: event.verb, summary: event.summary });
        break;
      case "toolEnd":
        this.#runningTool = "";
        this.#transcript.toolEnd(
          event.call,
          event.result,
          event.durationMs,
          this.#label(event.call),
        );
        this.#labels.delete(event.call.id);
        break;
      case "steer":
        this.#transcript.notice(`↻ ${event.guard}: ${event.feedback}`, "dim");
        break;
      case "end": {
        const cause = event.cause;
        if (cause.kind === "cancelled") {
          this.#transcript.notice("cancelled (every committed step is kept)", "warn");
        } else if (cause.kind !== "completed") {
          this.#transcript.notice(describeEnd(cause), "error");
        }
        break;
      }
    }
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
    this.#host.runtime.tick();
    this.#spinner = (this.#spinner + 1) % SPINNER.length;
    if (this.#spinner % 4 === 0) this.#refreshBase();
    this.#invalidate();
  }

  #refreshBase(): void {
    this.#base = this.#host.snapshot(this.#session.overrides);
    this.#jobs = this.#host.services.jobs?.list().filter((job) => job.running).length ?? 0;
  }

  #refreshWallet(): void {
    const account = this.#session.account();
    if (account === undefined) return;
    // Off the frame path; the bar shows the new readout once it lands.
    this.#host.registries.wallet.refresh(account).then(() => {
      this.#refreshBase();
      this.#invalidate();
    }, () => {});
  }

  /** The snapshot the bar is composed from this frame. */
  snapshot(): StatusSnapshot {
    return {
      ...this.#base,
      model: this.#session.model,
      scrollMode: this.#scroll > 0,
      latencyMs: this.#meter.latencyMs,
      promptTokens: this.#meter.promptTokens,
      completionTokens: this.#meter.completionTokens,
      tps: this.#meter.tps,
      runningJobs: this.#jobs,
      runningTool: this.#runningTool,
    };
  }

  #transcriptRows(): number {
    return Math.max(1, this.#screen.height - 3);
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

  /** Composes one frame into the screen (the benchmark calls this directly). */
  compose(): void {
    const screen = this.#screen;
    const width = screen.width;
    const height = screen.height;
    screen.clear();
    // A question asked while a panel is open shows over the session; the panel comes back after.
    if (this.#panel !== undefined && !this.#o.dialogs.active) {
      if (!this.#panel.exists) {
        this.#transcript.notice(`panel '${this.#panel.id}' closed: its plugin went away`, "warn");
        this.#panel = undefined;
      } else {
        this.#panel.draw(screen);
        screen.setCursor(0, 0, false);
        return;
      }
    }
    // From the bottom up: status bar, input (or a question), hint, drawer, rule; the transcript
    // gets the rows left.
    let bottom = height - 1;
    screen.writeLine(
      bottom,
      0,
      composeStatus(this.#host.registries.status, width, this.snapshot()),
    );
    const dialog = this.#o.dialogs.layout(width);
    let cursor: { row: number; col: number } | undefined;
    const maxInput = Math.max(1, Math.floor(height / 3));
    let lines: StyledLine[];
    if (dialog !== undefined) {
      lines = dialog.lines.slice(-Math.max(1, height - 3));
      const top = bottom - lines.length;
      if (dialog.cursor !== undefined) {
        cursor = {
          row: top + dialog.cursor.row - (dialog.lines.length - lines.length),
          col: dialog.cursor.col,
        };
      }
    } else {
      const input = layoutInput(this.#editor.text, this.#editor.cursor, width, PROMPT);
      // Keep the cursor's row in view when the text is taller than the input area may be.
      const first = Math.max(0, Math.min(input.row - maxInput + 1, input.lines.length - maxInput));
      lines = input.lines.slice(first, first + maxInput);
      cursor = { row: bottom - lines.length + (input.row - first), col: input.col };
    }
    for (let i = 0; i < lines.length; i++) screen.writeLine(bottom - lines.length + i, 0, lines[i]);
    bottom -= lines.length;
    if (this.#hint !== "") {
      bottom--;
      screen.write(bottom, 2, truncateToCells(this.#hint, width - 2), Styles.warn);
    }
    if (dialog === undefined) {
      this.#drawer.update(this.tree(), this.#editor.text);
      if (this.#drawer.open) {
        const rows = Math.max(0, Math.min(Math.floor(height / 2), bottom - 2));
        const drawerLines = this.#drawer.lines(width, rows);
        bottom -= drawerLines.length;
        for (let i = 0; i < drawerLines.length; i++) {
          screen.writeLine(bottom + i, 0, drawerLines[i]);
        }
      }
    }
    bottom--;
    this.#rule(bottom, width);
    const rows = Math.max(0, bottom);
    const view = this.#transcript.view(width, rows, this.#scroll);
    const shift = scrolledBy(this.#lastView, view);
    if (shift > 0 && this.#lastView.length === rows && this.#lastWidth === width) {
      screen.scrollUp(0, rows, shift);
    }
    this.#lastView = view;
    this.#lastWidth = width;
    for (let i = 0; i < view.length; i++) screen.writeLine(i, 0, view[i]);
    if (cursor !== undefined) screen.setCursor(cursor.row, cursor.col, true);
    else screen.setCursor(height - 1, 0, false);
  }

  #rule(row: number, width: number): void {
    if (row < 0) return;
    this.#screen.fill(row, 0, width, "─", Styles.dim);
    let label = "";
    if (this.#turn !== undefined) {
      label = ` ${SPINNER[this.#spinner]} ${
        this.#runningTool ? `running ${this.#runningTool}` : "working"
      } · Ctrl-C cancels `;
    } else if (this.#scroll > 0) {
      label = " scrolled back · PgDn or Esc returns ";
    }
    if (label !== "") this.#screen.write(row, 2, truncateToCells(label, width - 4), Styles.accent);
  }
}

/**
 * How many rows `next` shows `previous` scrolled up by: the shift at which the most lines from
 * the top are the same line objects (rendered lines are cached, so an unchanged line is the same
 * object from frame to frame), when they are at least half of what the two frames share. The
 * last lines may differ: the line streaming in, and the ones it pushed, are rendered anew. 0
 * when the text did not move. A wrong answer only costs bytes: the screen still compares every
 * cell.
 *
 * @example
 * ```ts
 * import { scrolledBy } from "./app.ts";
 * const line = (text: string) => [{ text, style: 0 }];
 * const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map(line);
 * console.log(scrolledBy([a, b, c, d], [b, c, d, e]), scrolledBy([a, b, c, d], [a, b, c, e])); // 1 0
 * ```
 */
export function scrolledBy(
  previous: readonly StyledLine[],
  next: readonly StyledLine[],
): number {
  const rows = next.length;
  if (previous.length !== rows || rows < 2) return 0;
  let best = 0;
  let bestSame = 0;
  for (let shift = 0; shift < rows; shift++) {
    if (next[0] !== previous[shift]) continue;
    const overlap = rows - shift;
    let same = 0;
    // Blank lines are shared objects: only a line with text anchors a position.
    let anchored = false;
    while (same < overlap && next[same] === previous[same + shift]) {
      if (next[same].length > 0) anchored = true;
      same++;
    }
    if (anchored && same * 2 >= overlap && same > bestSame) {
      best = shift;
      bestSame = same;
    }
  }
  return best;
}
