// The scrollback print is the one way transcript lines reach the terminal without the screen's
// cell writer: a hostile prompt, answer, tool output, diff or notice leaves no control
// character in it, with colour on only the print's own colour codes.

import assert from "node:assert/strict";
import { scrollbackText } from "../../cli/tui/scrollback.ts";
import { TranscriptView } from "../../cli/tui/transcript_view.ts";

// A clipboard write (OSC 52), a screen clear, a C1 CSI, a bell and a carriage return.
const HOSTILE = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x9b31m\u0007\r";

Deno.test("scrollbackText: nothing a model, a tool or a file printed reaches the terminal raw", () => {
  const view = new TranscriptView();
  view.addUser(`hi${HOSTILE}`);
  view.appendReasoning(`thinking${HOSTILE}`);
  view.appendText(`# T${HOSTILE}\n\n\`code${HOSTILE}\`\n\n\`\`\`\nblock${HOSTILE}\n\`\`\`\n`);
  const call = { id: `c${HOSTILE}`, name: `bash${HOSTILE}`, arguments: "{}" };
  view.toolStart({ step: 0, call }, { verb: `run${HOSTILE}`, summary: `$ x${HOSTILE}` });
  view.toolOutput({ step: 0, call }, `out${HOSTILE}\nline${HOSTILE}\n`);
  view.toolEnd({ step: 0, call }, { ok: false, output: "", error: `err${HOSTILE}\nmore` }, 5);
  const write = { id: "w", name: "write", arguments: "{}" };
  view.toolStart({ step: 0, call: write }, { verb: "writing", summary: `p${HOSTILE}` });
  view.toolEnd({ step: 0, call: write }, {
    ok: true,
    output: `wrote${HOSTILE}`,
    change: { path: `p${HOSTILE}`, before: `a${HOSTILE}\n`, after: `b${HOSTILE}\nä${HOSTILE}\n` },
  }, 5);
  view.toggleLastTool();
  view.notice(`notice${HOSTILE}`, "warn");
  for (const color of [false, true]) {
    const text = scrollbackText(view, 60, color);
    // deno-lint-ignore no-control-regex -- the print's own colour codes are taken out
    const bare = color ? text.replace(/\x1b\[[0-9;]*m/g, "") : text;
    assert.match(bare, /out\]52;c;ZXZpbA==\[2J31m/, "the text of the output stays");
    assert.match(bare, /thinking\]52/, "the reasoning shows");
    assert.match(bare, /\+ b\]52/, "the diff shows");
    // deno-lint-ignore no-control-regex -- finding control characters is the point
    assert.doesNotMatch(bare, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/, JSON.stringify(bare));
  }
});
