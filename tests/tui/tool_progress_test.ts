import assert from "node:assert/strict";
import { INITIAL_VIEW, reduce } from "../../cli/tui/reducer.ts";

const call = { id: "c1", name: "fetch_docs", arguments: "{}" };

Deno.test("a running tool's progress shows on the spinner line, its first line only, without escapes", () => {
  let state =
    reduce(INITIAL_VIEW, { type: "toolStart", step: 0, call, verb: "running", summary: "x" }, 0)
      .state;
  assert.equal(state.runningTool, "fetch_docs");
  const progress = reduce(
    state,
    { type: "toolProgress", step: 0, call, message: "page 2 of 5\x1b[2J\nsecond line" },
    1,
  );
  assert.deepEqual(progress.changes, []);
  state = progress.state;
  assert.equal(state.runningTool, "fetch_docs: page 2 of 5[2J");
  state = reduce(state, {
    type: "toolEnd",
    step: 0,
    call,
    result: { ok: true, output: "" },
    durationMs: 3,
  }, 2)
    .state;
  assert.equal(state.runningTool, "");
});
