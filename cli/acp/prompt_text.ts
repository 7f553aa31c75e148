/**
 * An ACP prompt as the text amber's model is sent. Amber's turns take text, so the editor's
 * blocks become text: a resource link becomes a line naming the file (the model reads it with
 * its tools if it needs to), an embedded resource (an open buffer, a selection) comes whole,
 * fenced and named by its URI, since it may differ from the file on disk.
 *
 * @module
 */

import type { ContentBlock } from "@agentclientprotocol/sdk";

/**
 * The text of the prompt `blocks`, one block after another separated by a blank line; images
 * and audio, which amber's turns do not take, are named, not dropped silently.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { promptText } from "./prompt_text.ts";
 * const text = promptText([
 *   { type: "text", text: "Explain this." },
 *   { type: "resource_link", uri: "file:///w/a.ts", name: "a.ts" },
 *   { type: "resource", resource: { uri: "file:///w/b.ts", text: "let b = 1;" } },
 * ]);
 * assert.equal(
 *   text,
 *   "Explain this.\n\n[file: /w/a.ts]\n\n<file uri=\"file:///w/b.ts\">\nlet b = 1;\n</file>",
 * );
 * ```
 */
export function promptText(blocks: readonly ContentBlock[]): string {
  return blocks.map(blockText).filter((part) => part !== "").join("\n\n");
}

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "resource_link":
      return `[file: ${filePath(block.uri)}]`;
    case "resource": {
      const resource = block.resource;
      if ("text" in resource) return `<file uri="${resource.uri}">\n${resource.text}\n</file>`;
      return `[binary resource: ${resource.uri}]`;
    }
    case "image":
      return `[an image${block.uri ? `: ${block.uri}` : ""} (not sent: amber takes text)]`;
    case "audio":
      return "[an audio clip (not sent: amber takes text)]";
  }
}

// A file: URI as the path the model's tools take; any other URI as it is.
function filePath(uri: string): string {
  if (!uri.startsWith("file://")) return uri;
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return uri;
  }
}
