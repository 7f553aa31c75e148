/**
 * What an MCP server's content becomes for the model: the text it can read, the images a tool
 * result carries, and a line for anything left out. Tool results, prompts and resource reads all
 * go through here, so the model sees one kind of content the same way wherever it came from.
 *
 * @module
 */

import type { ToolImage } from "@amber/core";
// @ts-types="@modelcontextprotocol/sdk/types"
import type {
  BlobResourceContents,
  ContentBlock,
  TextResourceContents,
} from "@modelcontextprotocol/sdk/types.js";

/** Content rendered for the model: text parts in order, and the images beside them. */
export interface RenderedContent {
  /** The parts of text, in the server's order; joined with a newline by the reader. */
  readonly parts: string[];
  /** Images, for a reader that can carry them. */
  readonly images: ToolImage[];
  /** How many parts came from the server's own text (not from lines amber wrote). */
  texts: number;
}

/** An empty {@linkcode RenderedContent} to render into. */
export function emptyContent(): RenderedContent {
  return { parts: [], images: [], texts: 0 };
}

// Media types every provider that takes images accepts; another image type is noted, not sent.
const SENT_IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/**
 * Renders one content block into `into`: text as it is, images as images (or a line when
 * `images` is false, e.g. for a prompt that becomes a user message), audio as a line saying it was
 * left out, a resource link as `resource: <uri> (<name>, <mimeType>)`, an embedded resource as
 * its text or a line for a blob.
 */
export function renderBlock(block: ContentBlock, into: RenderedContent, images: boolean): void {
  switch (block.type) {
    case "text":
      into.parts.push(block.text);
      into.texts++;
      return;
    case "image":
      addImage(block.mimeType, block.data, into, images, "image");
      return;
    case "audio":
      into.parts.push(
        `[${block.mimeType} audio, ${sizeText(block.data)}, left out: amber sends no audio to ` +
          "the model]",
      );
      return;
    case "resource_link":
      into.parts.push(resourceLinkLine(block.uri, block.name, block.mimeType));
      return;
    case "resource":
      renderResourceContents(block.resource, into, images);
      return;
  }
}

/**
 * Renders the contents of a resource (embedded in a result, or read): its text, an image blob as
 * an image, any other blob as a line with its type and size.
 */
export function renderResourceContents(
  contents: TextResourceContents | BlobResourceContents,
  into: RenderedContent,
  images: boolean,
): void {
  const mimeType = contents.mimeType ?? "application/octet-stream";
  if ("text" in contents) {
    into.parts.push(contents.text);
    into.texts++;
  } else {
    if (SENT_IMAGE_TYPES.has(mimeType)) {
      addImage(mimeType, contents.blob, into, images, contents.uri);
    } else {
      into.parts.push(
        `[${contents.uri}: ${mimeType} data, ${sizeText(contents.blob)}, not shown]`,
      );
    }
  }
}

function addImage(
  mimeType: string,
  data: string,
  into: RenderedContent,
  images: boolean,
  what: string,
): void {
  if (images && SENT_IMAGE_TYPES.has(mimeType)) {
    into.images.push({ mimeType, data });
  } else {
    const why = images ? "a type amber does not send" : "an image cannot go in this message";
    into.parts.push(`[${what}: ${mimeType}, ${sizeText(data)}, left out: ${why}]`);
  }
}

// The line for a resource link: `resource: <uri> (<name>, <mimeType>)`.
function resourceLinkLine(uri: string, name: string, mimeType?: string): string {
  return `resource: ${uri} (${mimeType === undefined ? name : `${name}, ${mimeType}`})`;
}

// The size of base64 `data` once decoded, in bytes.
function decodedSize(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor(data.length * 3 / 4) - padding);
}

function sizeText(data: string): string {
  const bytes = decodedSize(data);
  return bytes < 1024 ? `${bytes} bytes` : `${Math.round(bytes / 1024)} KB`;
}

/**
 * `text` cut to its first `cap` characters, with the cut stated on a line of its own after it;
 * `text` itself when it fits.
 */
export function capText(text: string, cap: number): string {
  if (text.length <= cap) return text;
  return `${text.slice(0, cap)}\n[output cut: ${cap} of ${text.length} characters shown]`;
}
