// One frame composed the way the app composes it, from parts a test names; the rest are an idle
// session's (a status of "model-x", no question, an empty input, no turn, no panel).

import { Dialogs } from "../../cli/tui/dialogs.ts";
import { Drawer } from "../../cli/tui/drawer.ts";
import { FrameComposer, type FrameParts } from "../../cli/tui/frame.ts";
import { LineEditor } from "../../cli/tui/line_editor.ts";
import type { Screen } from "../../cli/tui/screen.ts";
import { TranscriptView } from "../../cli/tui/transcript_view.ts";

/** Composes one frame into `screen`: an idle session's parts, overridden by `parts`. */
export function composeFrame(screen: Screen, parts: Partial<FrameParts> = {}): void {
  new FrameComposer(screen).compose({
    status: () => [{ text: "model-x", style: 0 }],
    dialogs: new Dialogs(),
    editor: new LineEditor(),
    drawer: new Drawer(),
    tree: [],
    panel: undefined,
    transcript: new TranscriptView(),
    scroll: 0,
    hint: "",
    turn: undefined,
    ...parts,
  });
}
