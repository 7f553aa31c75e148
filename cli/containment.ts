/**
 * What the process does about plugin code it cannot stop: errors nothing handled (a promise
 * nobody awaited that rejects, a throw from a timer callback) and work it gave up waiting for
 * (an import, `initialize` or command handler past its deadline).
 *
 * Stray errors: Deno ends the process on an unhandled rejection or an uncaught error, which
 * would lose the step in flight. While a {@linkcode StrayErrorSink} is open, both are prevented
 * from doing so and handed to the sink opened last: a host attributes them to a plugin by the
 * source paths in the error's stack and reports them; the process entry reports the rest.
 *
 * Abandoned work: a promise past its deadline cannot be cancelled, and what it still waits for
 * (a timer, a socket) keeps Deno's event loop alive after amber is done. Whoever abandons work
 * says so with {@linkcode noteAbandonedWork}; the process entry then ends the process once the
 * command has finished, rather than waiting for that work.
 *
 * @module
 */

/** How an error escaped. */
export type StrayKind = "rejection" | "error";

/** Receives stray errors; returns whether it took care of this one. */
export type StrayErrorSink = (error: unknown, kind: StrayKind) => boolean;

const sinks: StrayErrorSink[] = [];
let abandoned = 0;

function onRejection(event: PromiseRejectionEvent): void {
  if (deliver(event.reason, "rejection")) event.preventDefault();
}

function onError(event: ErrorEvent): void {
  if (deliver(event.error ?? event.message, "error")) event.preventDefault();
}

function deliver(error: unknown, kind: StrayKind): boolean {
  for (let i = sinks.length - 1; i >= 0; i--) {
    try {
      if (sinks[i](error, kind)) return true;
    } catch {
      // A sink that fails passes the error on to the one below it.
    }
  }
  return false;
}

/**
 * Hands stray errors to `sink` until the returned handle is disposed; the sink opened last is
 * asked first, and one that returns false passes the error on. With no sink taking it, Deno's
 * own behaviour applies (the process ends).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { containStrayErrors } from "./containment.ts";
 * const seen: string[] = [];
 * {
 *   using _ = containStrayErrors((error, kind) => {
 *     seen.push(`${kind}: ${(error as Error).message}`);
 *     return true;
 *   });
 *   Promise.reject(new Error("nobody awaited me"));
 *   await new Promise((resolve) => setTimeout(resolve, 10));
 * }
 * assert.deepEqual(seen, ["rejection: nobody awaited me"]);
 * ```
 */
export function containStrayErrors(sink: StrayErrorSink): Disposable {
  if (sinks.length === 0) {
    globalThis.addEventListener("unhandledrejection", onRejection);
    globalThis.addEventListener("error", onError);
  }
  sinks.push(sink);
  let open = true;
  return {
    [Symbol.dispose]() {
      if (!open) return;
      open = false;
      const at = sinks.lastIndexOf(sink);
      if (at >= 0) sinks.splice(at, 1);
      if (sinks.length === 0) {
        globalThis.removeEventListener("unhandledrejection", onRejection);
        globalThis.removeEventListener("error", onError);
      }
    },
  };
}

/**
 * Says that work past its deadline was left running; see {@linkcode hasAbandonedWork}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasAbandonedWork, noteAbandonedWork } from "./containment.ts";
 * noteAbandonedWork();
 * assert.equal(hasAbandonedWork(), true);
 * ```
 */
export function noteAbandonedWork(): void {
  abandoned++;
}

/**
 * Whether any work was abandoned in this process: the process entry then ends the process
 * when the command is done instead of waiting for the event loop to drain.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasAbandonedWork } from "./containment.ts";
 * assert.equal(typeof hasAbandonedWork(), "boolean");
 * ```
 */
export function hasAbandonedWork(): boolean {
  return abandoned > 0;
}

/**
 * The source files (URLs) in `error`'s stack, innermost first, without repeats; none for a
 * value that is not an Error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stackFiles } from "./containment.ts";
 * const error = new Error("x");
 * error.stack = "Error: x\n    at f (file:///p/a.ts:1:2)\n    at file:///p/b.ts:3:4\n" +
 *   "    at g (file:///p/a.ts:5:6)";
 * assert.deepEqual(stackFiles(error), ["file:///p/a.ts", "file:///p/b.ts"]);
 * assert.deepEqual(stackFiles("no stack"), []);
 * ```
 */
export function stackFiles(error: unknown): string[] {
  const stack = error instanceof Error ? error.stack ?? "" : "";
  const files: string[] = [];
  for (const match of stack.matchAll(/((?:file|https?):\/\/[^\s()]+?):\d+:\d+/g)) {
    if (!files.includes(match[1])) files.push(match[1]);
  }
  return files;
}
