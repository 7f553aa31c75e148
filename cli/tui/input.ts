/**
 * Key decoding: the bytes a terminal sends in raw mode, turned into keys. Printable text (runs of
 * it arrive as one key, so typing fast or a pasted line costs one event), Enter, Tab, Backspace,
 * Ctrl and Alt combinations, arrows and the editing keys in their CSI and SS3 forms with
 * modifiers, function keys, and bracketed paste as one `paste` key holding the text verbatim.
 *
 * A lone Esc cannot be told from the start of a sequence until a moment has passed, so the
 * decoder keeps it pending: call `flush()` when no byte followed it in time.
 *
 * @module
 */

/** One key (or paste). */
export interface Key {
  /**
   * `text` for printable text, `paste` for a bracketed paste, else the key: `enter`, `tab`,
   * `backspace`, `delete`, `escape`, `up`, `down`, `left`, `right`, `home`, `end`, `pageup`,
   * `pagedown`, `insert`, `f1`..`f12`, `space`, or a letter or symbol with `ctrl`/`alt`.
   */
  readonly name: string;
  /** The text of a `text` or `paste` key. */
  readonly text?: string;
  /** Ctrl was held. */
  readonly ctrl: boolean;
  /** Alt (Meta) was held. */
  readonly alt: boolean;
  /** Shift was held (only reported where the terminal tells). */
  readonly shift: boolean;
}

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

function key(name: string, mods: { ctrl?: boolean; alt?: boolean; shift?: boolean } = {}): Key {
  return { name, ctrl: mods.ctrl ?? false, alt: mods.alt ?? false, shift: mods.shift ?? false };
}

const TILDE: { readonly [code: number]: string } = {
  1: "home",
  2: "insert",
  3: "delete",
  4: "end",
  5: "pageup",
  6: "pagedown",
  7: "home",
  8: "end",
  11: "f1",
  12: "f2",
  13: "f3",
  14: "f4",
  15: "f5",
  17: "f6",
  18: "f7",
  19: "f8",
  20: "f9",
  21: "f10",
  23: "f11",
  24: "f12",
};

const LETTER: { readonly [final: string]: string } = {
  A: "up",
  B: "down",
  C: "right",
  D: "left",
  H: "home",
  F: "end",
  P: "f1",
  Q: "f2",
  R: "f3",
  S: "f4",
};

/**
 * The name a key is known by to panels and key bindings: `ctrl+c`, `alt+enter`, `up`, `x`,
 * `shift+tab`; a text key of one character is that character.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyName } from "./input.ts";
 * assert.equal(keyName({ name: "c", ctrl: true, alt: false, shift: false }), "ctrl+c");
 * assert.equal(keyName({ name: "text", text: "r", ctrl: false, alt: false, shift: false }), "r");
 * ```
 */
export function keyName(key: Key): string {
  const base = key.name === "text" ? (key.text ?? "") : key.name;
  return `${key.ctrl ? "ctrl+" : ""}${key.alt ? "alt+" : ""}${key.shift ? "shift+" : ""}${base}`;
}

/**
 * Decodes terminal input into keys, across reads that split a sequence or a UTF-8 character.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KeyDecoder, keyName } from "./input.ts";
 * const decoder = new KeyDecoder();
 * const keys = decoder.feed(new TextEncoder().encode("hi\x1b[A\x03\x1b[200~a\nb\x1b[201~"));
 * assert.deepEqual(
 *   keys.map((k) => k.name === "paste" ? `paste:${k.text}` : keyName(k)),
 *   ["hi", "up", "ctrl+c", "paste:a\nb"],
 * );
 * ```
 */
export class KeyDecoder {
  #decoder = new TextDecoder();
  #buffer = "";
  #paste: string | undefined;

  /** Whether bytes wait for more (a lone Esc, half a sequence): call `flush` after a pause. */
  get pending(): boolean {
    return this.#buffer !== "" && this.#paste === undefined;
  }

  /** Decodes `bytes`; returns the keys they complete. */
  feed(bytes: Uint8Array): Key[] {
    this.#buffer += this.#decoder.decode(bytes, { stream: true });
    return this.#parse(false);
  }

  /** Decodes what is pending as if no more bytes will follow: a lone Esc becomes `escape`. */
  flush(): Key[] {
    return this.#parse(true);
  }

  #parse(final: boolean): Key[] {
    const keys: Key[] = [];
    let buffer = this.#buffer;
    while (buffer !== "") {
      if (this.#paste !== undefined) {
        const end = buffer.indexOf(PASTE_END);
        if (end < 0) {
          // Keep a tail that may be the start of the end marker.
          let keep = 0;
          for (let n = Math.min(PASTE_END.length - 1, buffer.length); n > 0; n--) {
            if (PASTE_END.startsWith(buffer.slice(buffer.length - n))) {
              keep = n;
              break;
            }
          }
          this.#paste += buffer.slice(0, buffer.length - keep);
          buffer = buffer.slice(buffer.length - keep);
          break;
        }
        const text = this.#paste + buffer.slice(0, end);
        this.#paste = undefined;
        keys.push({ ...key("paste"), text: text.replace(/\r\n?/g, "\n") });
        buffer = buffer.slice(end + PASTE_END.length);
        continue;
      }
      const parsed = this.#one(buffer, final);
      if (parsed === undefined) break; // incomplete: wait for more bytes
      buffer = buffer.slice(parsed.length);
      if (parsed.key !== undefined) keys.push(parsed.key);
    }
    this.#buffer = buffer;
    return keys;
  }

  // One key from the front of `buffer`: the key (or none, for sequences that mean nothing here)
  // and how many code units it took; undefined when the buffer ends mid-sequence.
  #one(buffer: string, final: boolean): { key?: Key; length: number } | undefined {
    const first = buffer.charCodeAt(0);
    if (first === 0x1b) return this.#escape(buffer, final);
    if (first === 0x0d) return { key: key("enter"), length: 1 };
    if (first === 0x0a) return { key: key("j", { ctrl: true }), length: 1 };
    if (first === 0x09) return { key: key("tab"), length: 1 };
    if (first === 0x7f || first === 0x08) return { key: key("backspace"), length: 1 };
    if (first === 0x00) return { key: key("space", { ctrl: true }), length: 1 };
    if (first < 0x1b) {
      return { key: key(String.fromCharCode(first + 0x60), { ctrl: true }), length: 1 };
    }
    if (first < 0x20) {
      return { key: key(String.fromCharCode(first + 0x40), { ctrl: true }), length: 1 };
    }
    let end = 1;
    while (end < buffer.length) {
      const code = buffer.charCodeAt(end);
      if (code < 0x20 || code === 0x7f) break;
      end++;
    }
    return { key: { ...key("text"), text: buffer.slice(0, end) }, length: end };
  }

  #escape(buffer: string, final: boolean): { key?: Key; length: number } | undefined {
    if (buffer.length === 1) return final ? { key: key("escape"), length: 1 } : undefined;
    const second = buffer[1];
    if (second === "[") {
      if (buffer.startsWith(PASTE_START)) {
        this.#paste = "";
        return { length: PASTE_START.length };
      }
      // CSI: parameters 0x30-0x3f, intermediates 0x20-0x2f, one final byte 0x40-0x7e.
      let end = 2;
      while (end < buffer.length) {
        const code = buffer.charCodeAt(end);
        if (code >= 0x40 && code <= 0x7e) break;
        if (code < 0x20 || code > 0x3f) {
          // Not a sequence after all: Esc, then whatever follows.
          return { key: key("escape"), length: 1 };
        }
        end++;
      }
      if (end >= buffer.length) return final ? { key: key("escape"), length: 1 } : undefined;
      return { key: csi(buffer.slice(2, end), buffer[end]), length: end + 1 };
    }
    if (second === "O") {
      if (buffer.length < 3) return final ? { key: key("O", { alt: true }), length: 2 } : undefined;
      const name = LETTER[buffer[2]];
      return { key: name === undefined ? undefined : key(name), length: 3 };
    }
    if (second === "\x1b") return { key: key("escape"), length: 1 };
    // Alt + a key: Esc before the key's own bytes.
    const inner = this.#one(buffer.slice(1), final);
    if (inner === undefined) return undefined;
    if (inner.key === undefined) return { length: inner.length + 1 };
    const base = inner.key;
    if (base.name === "text") {
      // Only the first character is Alt-modified; the rest is typed text to parse again.
      const char = String.fromCodePoint(base.text!.codePointAt(0)!);
      return { key: key(char, { alt: true }), length: 1 + char.length };
    }
    return { key: { ...base, alt: true }, length: inner.length + 1 };
  }
}

function csi(params: string, final: string): Key | undefined {
  const parts = params.split(";");
  const modifier = parts.length > 1 ? Number(parts[1]) - 1 : 0;
  const mods = {
    shift: (modifier & 1) !== 0,
    alt: (modifier & 2) !== 0,
    ctrl: (modifier & 4) !== 0,
  };
  if (final === "~") {
    const name = TILDE[Number(parts[0])];
    return name === undefined ? undefined : key(name, mods);
  }
  if (final === "Z") return key("tab", { shift: true });
  const name = LETTER[final];
  return name === undefined ? undefined : key(name, mods);
}
