/**
 * Private helpers of the file tools for an editor that drives amber (`HostServices.editor`):
 * which of its file members a tool that changes files may use, and the text it holds.
 *
 * @module
 */

import type { EditorService } from "@amber/core";

/** An editor's reading and writing of whole text files, both offered. */
export interface EditorFiles {
  /** The text of `path` as the editor has it, unsaved changes included. */
  read(path: string, signal?: AbortSignal): Promise<string>;
  /** Replaces the text of `path` through the editor. */
  write(path: string, text: string, signal?: AbortSignal): Promise<void>;
}

/**
 * The editor's files for a tool that changes them, or undefined when the editor does not offer
 * both reading and writing: what such a tool writes must be made from what it read, so an editor
 * that only reads (or only writes) leaves the tool on the disk for both.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { editorFiles } from "./_editor_files.ts";
 * assert.equal(editorFiles(undefined), undefined);
 * assert.equal(editorFiles({ readTextFile: () => Promise.resolve("") }), undefined);
 * const texts = new Map([["/w/a.txt", "unsaved\n"]]);
 * const files = editorFiles({
 *   readTextFile: (path) => Promise.resolve(texts.get(path) ?? ""),
 *   writeTextFile: (path, text) => Promise.resolve(void texts.set(path, text)),
 * });
 * assert.equal(await files?.read("/w/a.txt"), "unsaved\n");
 * await files?.write("/w/a.txt", "saved\n");
 * assert.equal(texts.get("/w/a.txt"), "saved\n");
 * ```
 */
export function editorFiles(editor: EditorService | undefined): EditorFiles | undefined {
  const readTextFile = editor?.readTextFile;
  const writeTextFile = editor?.writeTextFile;
  if (readTextFile === undefined || writeTextFile === undefined) return undefined;
  return {
    async read(path, signal) {
      const text: unknown = await readTextFile.call(editor, path, { signal });
      if (typeof text !== "string") throw new EditorAnswerError("fs/read_text_file", text);
      return text;
    },
    write: (path, text, signal) => writeTextFile.call(editor, path, text, { signal }),
  };
}

/** An editor answered with something of the wrong shape. */
export class EditorAnswerError extends Error {
  /** Names the request that got `answer`. */
  constructor(request: string, answer: unknown, options?: ErrorOptions) {
    super(`the editor answered ${request} with ${describe(answer)}, not text`, options);
    this.name = "EditorAnswerError";
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * A text the editor gave, split into its body and whether it began with a byte order mark: the
 * mark is no line of the file, but writing back keeps it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitBom } from "./_editor_files.ts";
 * assert.deepEqual(splitBom("\uFEFFhi"), { body: "hi", bom: true });
 * assert.deepEqual(splitBom("hi"), { body: "hi", bom: false });
 * ```
 */
export function splitBom(text: string): { readonly body: string; readonly bom: boolean } {
  return text.startsWith("\uFEFF")
    ? { body: text.slice(1), bom: true }
    : { body: text, bom: false };
}
