// A plugin process's stdout is the protocol: one line of a plugin's own `console.log` there would
// be garbage the host kills the process for. So every console method writes to the plugin's log
// instead (`log` notifications, which the host shows as the plugin's), and what the plugin
// leaves unhandled (a rejected promise nobody awaited, a throw in a timer) is logged and the
// process goes on serving, as the host would contain the same fault in-process.

import { describeError } from "../errors.ts";

/** Writes one line to the plugin's log. */
export type LogLine = (level: string, message: string) => void;

// The methods that print; each maps to the level its line is logged at.
const LEVELS: Readonly<Record<string, string>> = Object.freeze({
  log: "log",
  info: "info",
  debug: "debug",
  warn: "warn",
  error: "error",
  trace: "debug",
  dir: "log",
  dirxml: "log",
  table: "log",
  group: "log",
  groupCollapsed: "log",
});

/** Routes every printing method of `console` to `log`; returns what puts the old ones back. */
export function routeConsole(target: Console, log: LogLine): () => void {
  const saved = new Map<string, unknown>();
  const methods = target as unknown as Record<string, unknown>;
  for (const [method, level] of Object.entries(LEVELS)) {
    saved.set(method, methods[method]);
    methods[method] = (...args: unknown[]) => log(level, formatLine(args));
  }
  saved.set("assert", methods.assert);
  methods.assert = (condition: unknown, ...args: unknown[]) => {
    if (!condition) log("error", `Assertion failed${args.length ? `: ${formatLine(args)}` : ""}`);
  };
  return () => {
    for (const [method, original] of saved) methods[method] = original;
  };
}

/** Logs what the plugin left unhandled instead of letting it end the process. */
export function containUnhandled(log: LogLine): void {
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    log("error", `unhandled rejection: ${describeError(event.reason)}`);
  });
  globalThis.addEventListener("error", (event) => {
    event.preventDefault();
    log("error", `uncaught error: ${describeError(event.error ?? event.message)}`);
  });
}

/** The arguments of a console call as one line: strings as they are, anything else inspected. */
export function formatLine(args: readonly unknown[]): string {
  return args.map((arg) => typeof arg === "string" ? arg : Deno.inspect(arg)).join(" ");
}
