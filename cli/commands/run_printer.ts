/**
 * The front end of `amber run` and `amber demo`: a session's events written as text (the answer
 * streams to stdout; tool activity and everything else go to stderr, so `amber run ... >
 * answer.md` captures just the answer) or, with `--json`, as JSON lines on stdout.
 *
 * @module
 */

import type { Io } from "../command.ts";
import { describeEnd, type SessionListener } from "../session/mod.ts";

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
export function runPrinter(io: Io, json: boolean): SessionListener {
  return json ? jsonPrinter(io) : textPrinter(io);
}

function textPrinter(io: Io): SessionListener {
  const write = io.write ?? ((text: string) => io.out(text));
  let midLine = false;
  const endLine = () => {
    if (midLine) write("\n");
    midLine = false;
  };
  return (event) => {
    switch (event.type) {
      case "text":
        write(event.delta);
        midLine = !event.delta.endsWith("\n");
        break;
      case "toolStart":
        endLine();
        io.err(`⚙ ${event.summary}`);
        break;
      case "toolEnd":
        io.err(
          event.result.ok
            ? `  ✓ ${event.call.name} (${Math.round(event.durationMs)} ms)`
            : `  ✗ ${event.call.name}: ${firstLine(event.result.error ?? "failed")}`,
        );
        break;
      case "steer":
        endLine();
        io.err(`↻ ${event.guard}: ${event.feedback}`);
        break;
      case "end":
        endLine();
        break;
      case "retry":
      case "torn":
        io.err(notice(event));
        break;
    }
  };
}

function jsonPrinter(io: Io): SessionListener {
  return (event) => {
    switch (event.type) {
      case "session":
        io.out(JSON.stringify({ type: "session", id: event.id }));
        return;
      case "retry":
      case "torn":
        // Said on stderr as in text mode: they are not events of the run.
        io.err(notice(event));
        return;
      case "end":
        if (event.cause.kind === "error") {
          // A CapabilityBoundError does not serialise on its own; its message says it all.
          io.out(
            JSON.stringify({
              type: "end",
              cause: { kind: "error", message: describeEnd(event.cause) },
            }),
          );
          return;
        }
    }
    io.out(JSON.stringify(event));
  };
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
