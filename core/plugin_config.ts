/**
 * Decoding a plugin's section of config.yaml with the schema it declares. One function serves
 * validation (`amber config check`) and activation, so the two can never disagree.
 *
 * @module
 */

import type { Plugin } from "./plugin.ts";
import { ResolutionError } from "./resolution_error.ts";
import type { StandardResult } from "./tool.ts";

/** What decoding a section gave: the decoded value, or one error per problem. */
export type DecodedSection =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly errors: readonly ResolutionError[] };

/**
 * Decodes `section` (the raw `plugins.<id>` value; absent reads as `{}`) with the plugin's
 * `config` schema. Without a schema the section passes as it is. Synchronous schemas decode
 * synchronously. Each problem is a {@linkcode ResolutionError} with rule `config`, its path
 * starting at `plugins.<id>`, and a message like `plugins.hello.greeting: expected string,
 * received number`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodePluginConfig, type Plugin } from "@amber/core";
 * import { z } from "zod";
 * const plugin = {
 *   id: "hello",
 *   config: z.object({ greeting: z.string().default("Hello") }),
 * } as unknown as Plugin;
 * const decoded = await decodePluginConfig(plugin, { greeting: 42 });
 * assert.equal(decoded.ok, false);
 * assert.equal(
 *   decoded.ok ? "" : decoded.errors[0].message,
 *   "plugins.hello.greeting: expected string, received number",
 * );
 * ```
 */
export function decodePluginConfig(
  plugin: Plugin,
  section: unknown,
): DecodedSection | Promise<DecodedSection> {
  const schema = plugin.config;
  if (schema === undefined) return { ok: true, value: section };
  const input = section === undefined || section === null ? {} : section;
  let result: StandardResult | Promise<StandardResult>;
  try {
    result = schema["~standard"].validate(input);
  } catch (error) {
    return failure(plugin.id, [], `the schema threw: ${(error as Error)?.message ?? error}`);
  }
  if (result instanceof Promise) {
    return result.then(
      (settled) => decoded(plugin.id, settled),
      (error) => failure(plugin.id, [], `the schema threw: ${(error as Error)?.message ?? error}`),
    );
  }
  return decoded(plugin.id, result);
}

function decoded(id: string, result: StandardResult): DecodedSection {
  if (result.issues === undefined) return { ok: true, value: result.value };
  return {
    ok: false,
    errors: result.issues.map((issue) => {
      const path = ["plugins", id, ...(issue.path ?? []).map(segment)];
      // zod prefixes most messages with "Invalid input: ", which says nothing the path does not.
      const message = issue.message.replace(/^Invalid input: /, "");
      return new ResolutionError({
        rule: "config",
        pluginIds: [id],
        message: `${path.join(".")}: ${message}`,
        axis: "config",
        path,
      });
    }),
  };
}

function failure(id: string, path: string[], message: string): DecodedSection {
  const full = ["plugins", id, ...path];
  return {
    ok: false,
    errors: [
      new ResolutionError({
        rule: "config",
        pluginIds: [id],
        message: `${full.join(".")}: ${message}`,
        axis: "config",
        path: full,
      }),
    ],
  };
}

function segment(part: PropertyKey | { key: PropertyKey }): string {
  const key = typeof part === "object" ? part.key : part;
  return String(key);
}
