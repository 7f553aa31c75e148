/**
 * Plugin diagnostics a front end prints, held back until it is known which keys to redact from
 * them. That is known once the session has resolved its provider: the key in use is read from a
 * variable named by a preset, and presets come from plugins, so it cannot be known before the
 * plugins have started, which is exactly when most diagnostics (a failed `initialize`, a hung
 * import, processes an earlier amber left running) are said.
 *
 * @module
 */

import type { Diagnostic } from "@amber/core";
import { childEnvironment } from "@amber/plugins/process_group";
import { SecretRedactor } from "./redact.ts";

/**
 * Holds diagnostics until {@linkcode HeldDiagnostics.release} says how to redact them, then
 * prints them, in order, and every later one at once; each string field (the plugin, where,
 * the message) is redacted before `print` sees it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HeldDiagnostics } from "./held_diagnostics.ts";
 * const printed: string[] = [];
 * const diagnostics = new HeldDiagnostics((d) => printed.push(`${d.pluginId}: ${d.message}`));
 * diagnostics.receive({ pluginId: "leaky", where: "initialize", message: "bad key sk-12345678" });
 * assert.deepEqual(printed, [], "nothing is printed before the keys are known");
 * diagnostics.release((text) => text.replaceAll("sk-12345678", "[redacted]"));
 * diagnostics.receive({ pluginId: "leaky", where: "tick", message: "still sk-12345678" });
 * assert.deepEqual(printed, ["leaky: bad key [redacted]", "leaky: still [redacted]"]);
 * ```
 */
export class HeldDiagnostics {
  readonly #print: (diagnostic: Diagnostic) => void;
  #held: Diagnostic[] | undefined = [];
  #redact: (text: string) => string = (text) => text;

  /** Prints each diagnostic, redacted, with `print`. */
  constructor(print: (diagnostic: Diagnostic) => void) {
    this.#print = print;
  }

  /** Takes a diagnostic (a host's `onDiagnostic`): held until released, else printed. */
  readonly receive = (diagnostic: Diagnostic): void => {
    if (this.#held !== undefined) this.#held.push(diagnostic);
    else this.#deliver(diagnostic);
  };

  /**
   * Redacts with `redact` from now on (a session's `redact`, which follows a switch of provider)
   * and prints what was held. Without `redact`, as when the session could not be opened and so
   * cannot say which keys it holds, the value of every environment variable named like a secret
   * (as `bash` withholds them: `*_KEY`, `*_TOKEN`, ...) is redacted.
   */
  release(redact: (text: string) => string = environmentRedaction()): void {
    this.#redact = redact;
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const diagnostic of held) this.#deliver(diagnostic);
  }

  #deliver(diagnostic: Diagnostic): void {
    const redact = this.#redact;
    this.#print({
      ...diagnostic,
      pluginId: redact(diagnostic.pluginId),
      where: redact(diagnostic.where),
      message: redact(diagnostic.message),
    });
  }
}

function environmentRedaction(): (text: string) => string {
  const redactor = new SecretRedactor(childEnvironment().secrets);
  return (text) => redactor.redact(text);
}
