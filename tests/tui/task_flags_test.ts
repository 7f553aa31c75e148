// `deno task amber` is how amber runs from a checkout, and how the terminal tests run it. On a
// terminal, Deno's module loader writes "clear to the end of the screen" to stderr whenever a module
// it had not read yet is imported; one imported after the interactive session's first frame (the
// model catalog's, by a computed specifier) wiped the prompt and the status bar, and nothing redrew
// them until Ctrl-L (7 of 48 starts under load). `--quiet` keeps the loader off the terminal.

import assert from "node:assert/strict";
import { TASK_FLAGS } from "./_tmux.ts";

Deno.test("deno task amber runs amber with --quiet, so Deno's module loader never writes over the screen", () => {
  assert.ok(TASK_FLAGS.includes("--quiet"), `the task's flags: ${TASK_FLAGS.join(" ")}`);
});
