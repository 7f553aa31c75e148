/**
 * `@amber/providers/testing`: a fake model service on loopback that speaks every dialect's wire
 * protocol byte for byte, for tests, the demo and plugin authors.
 *
 * @example
 * ```ts
 * import { allEncoders, FakeProvider } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * await using server = await FakeProvider.start({ encoders: allEncoders });
 * server.script({ text: "Hi!", usage: { promptTokens: 3, completionTokens: 2 } });
 * assert.ok(server.url.startsWith("http://127.0.0.1:"));
 * ```
 *
 * @module
 */

import { anthropicEncoder } from "./anthropic.ts";
import type { WireEncoder } from "./encoder.ts";
import { geminiEncoder } from "./gemini.ts";
import { openaiEncoder } from "./openai.ts";
import { openaiResponsesEncoder } from "./openai_responses.ts";

export { anthropicEncoder } from "./anthropic.ts";
export { sseFrame, type WireEncoder } from "./encoder.ts";
export { geminiEncoder } from "./gemini.ts";
export { openaiEncoder } from "./openai.ts";
export { openaiResponsesEncoder } from "./openai_responses.ts";
export {
  argumentsText,
  chunkText,
  type Fault,
  finishOf,
  type ScriptedToolCall,
  type ScriptedTurn,
} from "./script.ts";
export {
  type FakeBalances,
  FakeProvider,
  type FakeProviderOptions,
  type RecordedRequest,
} from "./server.ts";

/**
 * Every protocol the fake provider speaks.
 *
 * @example
 * ```ts
 * import { allEncoders } from "@amber/providers/testing";
 * import assert from "node:assert/strict";
 * assert.deepEqual(allEncoders.map((e) => e.flavor), ["openai", "openai_responses", "anthropic", "gemini"]);
 * ```
 */
export const allEncoders: readonly WireEncoder[] = [
  openaiEncoder,
  openaiResponsesEncoder,
  anthropicEncoder,
  geminiEncoder,
];
