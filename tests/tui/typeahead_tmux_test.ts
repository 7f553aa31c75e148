// What the user types while amber is still starting, in a real terminal: tmux starts amber and the
// keys are sent at once, long before the interactive session has its screen up (Deno alone takes
// tens of milliseconds to start), so they wait in the terminal's line mode, where Enter is a line
// feed. Enter typed ahead still sends the prompt; Ctrl-J pressed once the session is up is still a
// new line in the prompt. Every wait polls the screen with a generous deadline.

import assert from "node:assert/strict";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { typedAhead } from "../../cli/tui/typeahead.ts";
import { hasTmux, sessionDirs, startAmber } from "./_tmux.ts";

const ignore = !hasTmux();

Deno.test({
  name: "tmux: a prompt typed while amber starts, Enter included, is sent once the session is up",
  ignore,
  async fn() {
    await using d = await sessionDirs("typeahead");
    await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
    server.script({ text: "Answered the early prompt." });
    await using tmux = await startAmber({ baseUrl: `${server.url}/v1`, ...d });
    await tmux.type("typed before the screen");
    await tmux.keys("Enter");
    const screen = await tmux.waitFor(/Answered the early prompt\./, "the model's answer");
    assert.match(screen, /typed before the screen/);
    const request = server.chats.at(-1)?.body as { messages: { content: string }[] };
    assert.equal(request.messages.at(-1)?.content, "typed before the screen");
  },
});

Deno.test({
  name: "tmux: once the session is up, Ctrl-J is a new line in the prompt and Enter sends both",
  ignore,
  async fn() {
    await using d = await sessionDirs("typeahead");
    await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
    server.script({ text: "Two lines read." });
    await using tmux = await startAmber({ baseUrl: `${server.url}/v1`, ...d });
    await tmux.waitFor(/^›\s*$/m, "the prompt");
    await tmux.type("first line");
    await tmux.keys("C-j");
    await tmux.type("second line");
    await tmux.waitFor(/second line/, "the second line in the prompt");
    assert.equal(server.chats.length, 0, "Ctrl-J sent nothing");
    await tmux.keys("Enter");
    await tmux.waitFor(/Two lines read\./, "the model's answer");
    const request = server.chats.at(-1)?.body as { messages: { content: string }[] };
    assert.equal(request.messages.at(-1)?.content, "first line\nsecond line");
  },
});

Deno.test("the first read's line feeds are Enter only when it is text typed ahead", () => {
  const bytes = (text: string) => new TextEncoder().encode(text);
  const text = (read: Uint8Array) => new TextDecoder().decode(read);
  assert.equal(text(typedAhead(bytes("one\ntwo\n"))), "one\rtwo\r");
  assert.equal(text(typedAhead(bytes("no enter yet"))), "no enter yet");
  assert.equal(text(typedAhead(bytes("\n"))), "\n");
  // Read in raw mode: Enter is already a carriage return, a line feed there is Ctrl-J.
  assert.equal(text(typedAhead(bytes("a\r\n"))), "a\r\n");
  assert.equal(text(typedAhead(bytes("\x1b[200~a\nb\x1b[201~"))), "\x1b[200~a\nb\x1b[201~");
});
