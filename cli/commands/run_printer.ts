/**
 * The front end of `amber run` and `amber demo`: a session's events written as text (the answer
 * streams to stdout; tool activity, compactions and everything else go to stderr, so `amber run
 * ... > answer.md` captures just the answer) or, with `--json`, as JSON lines on stdout (a
 * call's `usage` with its `cost` in dollars when the prices are known, each `request` with its
 * estimated size, `compactionStarted` and `compactionFinished`).
 *
 * Every tool call gets its `⚙` line, as the interactive session's row reads (`⚙ read notes.txt`),
 * also one that never ran (denied, blocked, unknown: the tool's name alone), then its outcome;
 * a line on stderr never lands in the middle of the answer's line on stdout. A running tool's
 * streamed output (`toolOutput`) is not printed in text mode: its outcome line follows, and
 * `--json` carries every chunk.
 *
 * What a model or a tool wrote reaches the terminal with its control characters removed
 * (newlines and tabs kept), so it cannot write the clipboard, clear the screen or move the
 * cursor; JSON lines escape them instead. The session's events already have its keys redacted.
 *
 * @module
 */

import type { Io } from "../command.ts";
import { describeCompaction, describeEnd, type SessionListener } from "../session/mod.ts";
import { sanitizeText } from "../tui/lines.ts";
import { formatDuration, toolTitle } from "../tui/tool_title.ts";

/**
 * Writes a session's events as `amber run` does.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runPrinter } from "./run_printer.ts";
 * const out: string[] = [];
 * const err: string[] = [];
 * const print = runPrinter({ out: (t) => out.push(t), err: (t) => err.push(t) }, false);
 * print({ type: "text", delta: "Hi" });
 * print({ type: "end", cause: { kind: "completed" } });
 * assert.deepEqual(out, ["Hi", "\n"]);
 * assert.deepEqual(err, []);
 * ```
 */
export function runPrinter(
  io: Io,
  json: boolean,
  options: RunPrinterOptions = {},
): SessionListener {
  return json ? jsonPrinter(io) : textPrinter(io, options);
}

/** Options of {@linkcode runPrinter}'s text mode. */
export interface RunPrinterOptions {
  /**
   * How the model's reasoning is shown on stdout, each stretch on lines of its own: `dim` (a
   * terminal), `plain` (a terminal with NO_COLOR); left out by default, so that
   * `amber run ... > answer.md` captures just the answer.
   */
  readonly reasoning?: "dim" | "plain";
}

const DIM = "\x1b[2m";
const UNDIM = "\x1b[22m";

function textPrinter(io: Io, options: RunPrinterOptions): SessionListener {
  const write = io.write ?? ((text: string) => io.out(text));
  let midLine = false;
  // What stdout shows now: the answer's text, or the model's reasoning.
  let showing: "text" | "reasoning" = "text";
  const endLine = () => {
    if (showing === "reasoning") {
      if (options.reasoning === "dim") write(UNDIM);
      showing = "text";
    }
    if (midLine) write("\n");
    midLine = false;
  };
  const show = (text: string) => {
    write(text);
    midLine = !text.endsWith("\n");
  };
  // The calls whose `⚙` line is out, by step and id (an id is unique only within one reply).
  const started = new Set<string>();
  return (event) => {
    switch (event.type) {
      case "stepStart":
        // Each step's text on lines of its own, also after a step whose tool calls printed
        // nothing (a denied one).
        endLine();
        break;
      case "reasoning": {
        if (options.reasoning === undefined) break;
        const text = sanitizeText(event.delta);
        if (text === "") break;
        if (showing !== "reasoning") {
          endLine();
          if (options.reasoning === "dim") write(DIM);
          showing = "reasoning";
        }
        show(text);
        break;
      }
      case "text": {
        const text = sanitizeText(event.delta);
        if (text === "") break;
        if (showing === "reasoning") endLine();
        show(text);
        break;
      }
      case "toolStart":
        endLine();
        started.add(`${event.step} ${event.call.id}`);
        io.err(`⚙ ${sanitizeText(toolTitle(event.call.name, event.summary))}`);
        break;
      case "toolEnd": {
        endLine();
        const name = sanitizeText(event.call.name);
        // A call that never ran (denied, blocked, unknown) had no line yet.
        if (!started.delete(`${event.step} ${event.call.id}`)) io.err(`⚙ ${name}`);
        io.err(
          event.result.ok
            ? `  ✓ ${name} (${formatDuration(event.durationMs)})`
            : `  ✗ ${name}: ${firstLine(sanitizeText(event.result.error ?? "failed"))}`,
        );
        break;
      }
      case "steer":
        endLine();
        io.err(`↻ ${sanitizeText(event.guard)}: ${sanitizeText(event.feedback)}`);
        break;
      case "compactionStarted":
      case "compactionFinished":
        endLine();
        io.err(`amber: ${sanitizeText(describeCompaction(event))}`);
        break;
      case "end":
        endLine();
        break;
      case "retry":
      case "torn":
        io.err(sanitizeText(notice(event)));
        break;
    }
  };
}

function jsonPrinter(io: Io): SessionListener {
  return (event) => {
    switch (event.type) {
      case "session":
        io.out(jsonLine({ type: "session", id: event.id }));
        return;
      case "retry":
      case "torn":
        // Said on stderr as in text mode: they are not events of the run.
        io.err(sanitizeText(notice(event)));
        return;
      case "end":
        if (event.cause.kind === "error") {
          // A CapabilityBoundError does not serialise on its own; its message says it all.
          io.out(
            jsonLine({ type: "end", cause: { kind: "error", message: describeEnd(event.cause) } }),
          );
          return;
        }
    }
    io.out(jsonLine(event));
  };
}

// JSON escapes C0 controls but not DEL and C1 (0x80-0x9f, an 8-bit CSI among them), which some
// terminals obey: escaped too, the line parses to the same value.
const UNESCAPED_CONTROLS = /[\u007f-\u009f]/g;

function jsonLine(value: unknown): string {
  const line = JSON.stringify(value);
  return line.replace(
    UNESCAPED_CONTROLS,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function notice(
  event: { type: "retry"; message: string } | { type: "torn"; movedTo: string },
): string {
  return event.type === "retry"
    ? `amber: ${event.message}`
    : `amber: the session's last line was cut off; it was moved to ${event.movedTo}`;
}

function firstLine(text: string): string {
  const line = text.split("\n")[0];
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
