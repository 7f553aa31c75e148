// Key decoding: what a terminal sends in raw mode, however the reads split it.

import assert from "node:assert/strict";
import fc from "fast-check";
import { type Key, KeyDecoder, keyName } from "../../cli/tui/input.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function names(keys: Key[]): string[] {
  return keys.map((k) =>
    k.name === "paste" ? `paste:${k.text}` : k.name === "text" ? `text:${k.text}` : keyName(k)
  );
}

function decode(text: string): string[] {
  const decoder = new KeyDecoder();
  return names([...decoder.feed(bytes(text)), ...decoder.flush()]);
}

Deno.test("printable runs arrive as one text key; controls as keys", () => {
  assert.deepEqual(decode("hello wörld"), ["text:hello wörld"]);
  assert.deepEqual(decode("a\rb"), ["text:a", "enter", "text:b"]);
  assert.deepEqual(decode("\t\x7f\x08"), ["tab", "backspace", "backspace"]);
  assert.deepEqual(decode("\x03\x04\x01\x05\x0b\x15\x17\x0c\x0f"), [
    "ctrl+c",
    "ctrl+d",
    "ctrl+a",
    "ctrl+e",
    "ctrl+k",
    "ctrl+u",
    "ctrl+w",
    "ctrl+l",
    "ctrl+o",
  ]);
  assert.deepEqual(decode("\n"), ["ctrl+j"]);
  assert.deepEqual(decode("\x00"), ["ctrl+space"]);
});

Deno.test("arrows, editing and function keys in CSI and SS3 forms", () => {
  assert.deepEqual(decode("\x1b[A\x1b[B\x1b[C\x1b[D"), ["up", "down", "right", "left"]);
  assert.deepEqual(decode("\x1bOA\x1bOH\x1bOF\x1bOP"), ["up", "home", "end", "f1"]);
  assert.deepEqual(decode("\x1b[H\x1b[F\x1b[1~\x1b[4~\x1b[7~\x1b[8~"), [
    "home",
    "end",
    "home",
    "end",
    "home",
    "end",
  ]);
  assert.deepEqual(decode("\x1b[3~\x1b[2~\x1b[5~\x1b[6~"), [
    "delete",
    "insert",
    "pageup",
    "pagedown",
  ]);
  assert.deepEqual(decode("\x1b[15~\x1b[24~"), ["f5", "f12"]);
  assert.deepEqual(decode("\x1b[Z"), ["shift+tab"]);
});

Deno.test("modifiers on CSI keys", () => {
  assert.deepEqual(decode("\x1b[1;5C\x1b[1;3D\x1b[1;2A\x1b[3;5~"), [
    "ctrl+right",
    "alt+left",
    "shift+up",
    "ctrl+delete",
  ]);
});

Deno.test("Alt is Esc before the key", () => {
  assert.deepEqual(decode("\x1bb\x1bf"), ["alt+b", "alt+f"]);
  assert.deepEqual(decode("\x1b\r"), ["alt+enter"]);
  assert.deepEqual(decode("\x1b\x7f"), ["alt+backspace"]);
  // Only the first character after Esc is modified; the rest is typed text.
  assert.deepEqual(decode("\x1bxyz"), ["alt+x", "text:yz"]);
});

Deno.test("a lone Esc waits for a pause, then is Esc", () => {
  const decoder = new KeyDecoder();
  assert.deepEqual(decoder.feed(bytes("\x1b")), []);
  assert.equal(decoder.pending, true);
  assert.deepEqual(names(decoder.flush()), ["escape"]);
  assert.equal(decoder.pending, false);
  assert.deepEqual(decode("\x1b\x1b[A"), ["escape", "up"]);
});

Deno.test("a sequence split across reads is one key", () => {
  const decoder = new KeyDecoder();
  assert.deepEqual(decoder.feed(bytes("\x1b[")), []);
  assert.deepEqual(decoder.feed(bytes("1;5")), []);
  assert.deepEqual(names(decoder.feed(bytes("C"))), ["ctrl+right"]);
});

Deno.test("a UTF-8 character split across reads is one character", () => {
  const decoder = new KeyDecoder();
  const all = bytes("中");
  assert.deepEqual(decoder.feed(all.subarray(0, 1)), []);
  assert.deepEqual(names(decoder.feed(all.subarray(1))), ["text:中"]);
});

Deno.test("bracketed paste is one key holding the text verbatim, split anywhere", () => {
  const pasted = "line one\r\nline\ttwo \x1b[A not a key\nend";
  const stream = `x\x1b[200~${pasted}\x1b[201~y`;
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 5 }),
      (cuts) => {
        const decoder = new KeyDecoder();
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const keys: Key[] = [];
        let from = 0;
        for (const point of [...points, stream.length]) {
          keys.push(...decoder.feed(bytes(stream.slice(from, point))));
          from = point;
        }
        assert.deepEqual(names(keys), [
          "text:x",
          "paste:line one\nline\ttwo \x1b[A not a key\nend",
          "text:y",
        ]);
      },
    ),
  );
});

Deno.test("unknown sequences are swallowed, not typed", () => {
  assert.deepEqual(decode("\x1b[99Xa"), ["text:a"]);
  assert.deepEqual(decode("\x1b[?1;2c"), []);
});

Deno.test("keyName is what panels and bindings see", () => {
  const k = (name: string, mods: Partial<Key> = {}): Key => ({
    name,
    ctrl: false,
    alt: false,
    shift: false,
    ...mods,
  });
  assert.equal(keyName(k("text", { text: "r" })), "r");
  assert.equal(keyName(k("up")), "up");
  assert.equal(keyName(k("x", { ctrl: true, alt: true })), "ctrl+alt+x");
});
