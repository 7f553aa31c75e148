/**
 * The sub-agent service of a command that runs outside a session (`amber tools`, `amber plugins
 * list`, `amber status`...). The `task` tool installs only where there is a sub-agent service;
 * without one here, those commands would list a different set of tools than a session has. No
 * sub-agent ever starts from it: a command outside a session runs no model.
 *
 * @module
 */

import { AmberError, type SubagentService } from "@amber/core";

/**
 * A sub-agent was asked for where there is no session to run it on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NoSessionError } from "./outside_session.ts";
 * assert.equal(new NoSessionError().name, "NoSessionError");
 * ```
 */
export class NoSessionError extends AmberError {
  /** Creates the error. */
  constructor() {
    super("a sub-agent runs only inside a session (amber run, or amber in a terminal)");
    this.name = "NoSessionError";
  }
}

/**
 * The sub-agent service of a command's host: present, so `task` is listed as a session has it,
 * and refusing with a {@linkcode NoSessionError} should anything call it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NoSessionError, outsideSession } from "./outside_session.ts";
 * const signal = new AbortController().signal;
 * await assert.rejects(outsideSession.run("look around", { signal }), NoSessionError);
 * ```
 */
export const outsideSession: SubagentService = {
  run: () => Promise.reject(new NoSessionError()),
};
