// Images in tool results, shared by the dialects: which ones go on the wire, and the line that
// takes the place of each one that does not, so the model knows something was left out.

import type { Message, ProviderSettings, ToolImage } from "@amber/core";

/** The image types the OpenAI APIs (Chat Completions, Responses) and Anthropic's take. */
export const WEB_IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
]);

/** A tool message's images split into those sent and the text of the tool result. */
export interface ToolImages {
  /** The images to put on the wire, in order. */
  readonly sent: readonly ToolImage[];
  /** The tool's text, with a line for each image left out. */
  readonly text: string;
}

/**
 * Splits `message`'s images: with `settings.images` each one whose media type is in `accepted`
 * is sent; every other one becomes a line of the text, e.g.
 * `[image/png image, 12 KB, not sent: this model takes no images]`.
 */
export function toolImages(
  message: Extract<Message, { readonly role: "tool" }>,
  settings: Pick<ProviderSettings, "images"> | undefined,
  accepted: ReadonlySet<string>,
): ToolImages {
  const images = message.images;
  if (images === undefined || images.length === 0) return { sent: [], text: message.content };
  const sent: ToolImage[] = [];
  const lines: string[] = [];
  for (const image of images) {
    if (settings?.images !== true) {
      lines.push(omitted(image, "this model takes no images"));
    } else if (!accepted.has(image.mimeType.toLowerCase())) {
      lines.push(omitted(image, `this API takes no ${image.mimeType}`));
    } else {
      sent.push(image);
    }
  }
  if (lines.length === 0) return { sent, text: message.content };
  const text = message.content === ""
    ? lines.join("\n")
    : `${message.content}\n${lines.join("\n")}`;
  return { sent, text };
}

/** The image as a `data:` URL, as the OpenAI APIs take it. */
export function dataUrl(image: ToolImage): string {
  return `data:${image.mimeType};base64,${image.data}`;
}

function omitted(image: ToolImage, why: string): string {
  return `[${image.mimeType} image, ${kilobytes(image.data)} KB, not sent: ${why}]`;
}

// The decoded size, rounded up: a tiny image is "1 KB", never "0 KB".
function kilobytes(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  const bytes = Math.max(0, Math.floor(base64.length * 3 / 4) - padding);
  return Math.ceil(bytes / 1024);
}
