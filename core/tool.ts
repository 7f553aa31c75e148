/**
 * Tools: what a model can call, what a call returns, and the read-only view of the registered
 * tools. The tool capability and the registry contract are in `tool_capability.ts`.
 *
 * @module
 */

/** A JSON Schema object, as the OpenAI `parameters` field takes it. */
export type JsonSchema = { readonly [key: string]: unknown };

/**
 * A Standard Schema (zod 4, valibot, ...) that can also describe itself as JSON Schema. Tools
 * may declare their parameters with one; the registry converts and validates without importing
 * the library that made it.
 */
export interface StandardJsonSchema {
  /** The Standard Schema interface. */
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) =>
      | StandardResult
      | Promise<StandardResult>;
    readonly jsonSchema?: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
    };
    /** The types the schema accepts and yields; type-level only, never read at run time. */
    readonly types?: { readonly input: unknown; readonly output: unknown } | undefined;
  };
}

/** What a Standard Schema's `validate` returns. */
export type StandardResult =
  | { readonly value: unknown; readonly issues?: undefined }
  | {
    readonly issues: ReadonlyArray<
      {
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>;
      }
    >;
  };

/**
 * An image a tool returns for the model to see (a screenshot, a chart), base64-encoded. A
 * dialect sends it to a model that takes images and states what was left out to one that
 * does not.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ToolImage, ToolResult } from "@amber/core";
 * const dot: ToolImage = { mimeType: "image/png", data: "iVBORw0KGgo=" };
 * const result: ToolResult = { ok: true, output: "one screenshot", images: [dot] };
 * assert.equal(result.images?.[0].mimeType, "image/png");
 * ```
 */
export interface ToolImage {
  /** The media type, e.g. `image/png`. */
  readonly mimeType: string;
  /** The image bytes, base64-encoded (no `data:` prefix). */
  readonly data: string;
}

/**
 * The outcome of running a tool. Errors are returned here, never thrown.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ToolResult } from "@amber/core";
 * const ok: ToolResult = { ok: true, output: "Hello, amber!" };
 * const bad: ToolResult = { ok: false, output: "", error: "name: expected string" };
 * assert.deepEqual([ok.ok, bad.ok], [true, false]);
 * ```
 */
export interface ToolResult {
  /** Whether the tool did what it was asked. */
  readonly ok: boolean;
  /** Text for the model. */
  readonly output: string;
  /** What went wrong, when `ok` is false. */
  readonly error?: string;
  /** Structured data for the host; never sent to the model. */
  readonly data?: unknown;
  /** Images for the model, sent after `output` to a model that takes images. */
  readonly images?: readonly ToolImage[];
  /** What the call did to a file, for the host to show as a diff; never sent to the model. */
  readonly change?: FileChange;
}

/**
 * A file's text before and after a call (an edit, a write): what a front end shows as a diff,
 * in the approval question before the call and in the transcript after it.
 */
export interface FileChange {
  /** The file, as the call named it (relative to the workspace, or absolute). */
  readonly path: string;
  /** Its text before; "" for a file the call creates. */
  readonly before: string;
  /** Its text after. */
  readonly after: string;
  /** Set when the file lies outside the workspace. */
  readonly outside?: boolean;
  /**
   * Set when `before` and `after` are only the changed region, not the whole file (a change
   * rebuilt from a call's arguments, when its result is gone): its line numbers are unknown.
   */
  readonly excerpt?: boolean;
}

/**
 * Whether `value` has the shape of a {@linkcode ToolResult}: a boolean `ok`, a string `output`,
 * `error`, when present, a string, `images`, when present, an array of
 * {@linkcode ToolImage}s, and `change`, when present, a {@linkcode FileChange}. What a plugin
 * returns is checked with it before anything else reads it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isToolResult } from "@amber/core";
 * assert.equal(isToolResult({ ok: true, output: "" }), true);
 * assert.equal(isToolResult({ ok: "yes", output: "" }), false);
 * assert.equal(isToolResult({ ok: false, output: "", error: 5 }), false);
 * assert.equal(isToolResult({ ok: true, output: "", images: [{ mimeType: "image/png" }] }), false);
 * assert.equal(isToolResult({ ok: true, output: "", change: { path: "a", before: "", after: 1 } }), false);
 * ```
 */
export function isToolResult(value: unknown): value is ToolResult {
  if (typeof value !== "object" || value === null) return false;
  const { ok, output, error, images, change } = value as Partial<
    Record<keyof ToolResult, unknown>
  >;
  return typeof ok === "boolean" && typeof output === "string" &&
    (error === undefined || typeof error === "string") &&
    (images === undefined || areToolImages(images)) &&
    (change === undefined || isFileChange(change));
}

/**
 * Whether `value` has the shape of a {@linkcode FileChange}: string `path`, `before` and
 * `after`, and `outside`, when present, a boolean.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isFileChange } from "@amber/core";
 * assert.equal(isFileChange({ path: "a.ts", before: "x", after: "y" }), true);
 * assert.equal(isFileChange({ path: "a.ts", before: "x" }), false);
 * ```
 */
export function isFileChange(value: unknown): value is FileChange {
  if (typeof value !== "object" || value === null) return false;
  const { path, before, after, outside } = value as Partial<Record<keyof FileChange, unknown>>;
  return typeof path === "string" && typeof before === "string" && typeof after === "string" &&
    (outside === undefined || typeof outside === "boolean");
}

// A dialect puts each image on the wire as it is, so a malformed one is refused here, with the
// rest of the result, rather than by the provider after the request was paid for.
function areToolImages(images: unknown): boolean {
  if (!Array.isArray(images)) return false;
  for (const image of images) {
    if (typeof image !== "object" || image === null) return false;
    const { mimeType, data } = image as Partial<Record<keyof ToolImage, unknown>>;
    if (typeof mimeType !== "string" || typeof data !== "string") return false;
  }
  return true;
}

/** What a tool receives besides its arguments. */
export interface ToolCallContext {
  /** Aborted when the run is cancelled; long work must stop when it fires. */
  readonly signal: AbortSignal;
  /**
   * The id of the model's call being run (the `id` of its `toolStart` and `toolEnd` events), so
   * work the tool hands to a front end (a command in an editor's terminal) shows in that call's
   * row. Unique within the model's reply, not across replies. Absent when the tool is run
   * outside a model's call (directly through the tool registry).
   */
  readonly callId?: string;
  /**
   * Reports how a long call is going ("indexed 40 of 120 files"): in a run, a `toolProgress`
   * event a front end may show beside the running tool. Absent when nobody listens, so call it
   * as `context.progress?.(...)`.
   */
  progress?(message: string): void;
  /**
   * Streams output as it comes (a command's stdout and stderr), for a front end to show in the
   * running call's row: in a run, a `toolOutput` event. The result still carries the whole
   * output. Absent when nobody listens, so call it as `context.output?.(...)`.
   */
  output?(chunk: string): void;
}

/**
 * A tool a model can call. `Args` is what `execute` receives: the arguments after the registry
 * has validated them against `parameters` (`unknown` for a tool that checks them itself).
 * {@linkcode defineTool} derives it from the parameters; a tool built by hand may leave it out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Tool } from "@amber/core";
 * const greet: Tool<{ readonly name: string }> = {
 *   name: "greet",
 *   description: "Greet someone by name.",
 *   parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
 *   readOnly: true,
 *   execute: (args) => ({ ok: true, output: `Hello, ${args.name}!` }),
 * };
 * const tools: readonly Tool[] = [greet];
 * const signal = new AbortController().signal;
 * assert.deepEqual(await tools[0].execute({ name: "amber" }, { signal }), {
 *   ok: true,
 *   output: "Hello, amber!",
 * });
 * ```
 */
export interface Tool<Args = unknown> {
  /** Unique across the harness: `[A-Za-z0-9_-]{1,64}`. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The arguments: a JSON Schema object or a Standard Schema that converts to one. */
  readonly parameters: JsonSchema | StandardJsonSchema;
  /** The word the host shows while it runs ("reading", "searching"). */
  readonly verb?: string;
  /** Whether the tool only reads. */
  readonly readOnly?: boolean;
  /**
   * Whether this call needs the user's approval; `args` are parsed, not yet validated. May
   * answer later (a sandboxed plugin's tool asks its process); a throw or a rejection means yes.
   */
  requiresApproval?(args: unknown): boolean | Promise<boolean>;
  /**
   * A one-line summary of the call for the host; `args` are parsed, not yet validated. The
   * host's row names the tool, then the summary without a first word that only repeats the
   * name (`read notes.txt` of `read` shows as `⚙ read notes.txt`, `$ ls` of `bash` as
   * `⚙ bash $ ls`).
   */
  summarize?(args: unknown): string;
  /**
   * What the call would do to a file, asked before an approval question so that the user sees
   * the diff; `args` are parsed, not yet validated. Undefined (or a throw) shows none; it must
   * not change anything.
   */
  preview?(
    args: unknown,
    context: { readonly signal: AbortSignal },
  ): FileChange | undefined | Promise<FileChange | undefined>;
  /**
   * Runs the tool with validated arguments. (Declared as a method, so a `Tool<{ path: string }>`
   * is a `Tool`: the registry validates before it calls, which makes that sound.)
   */
  execute(args: Args, context: ToolCallContext): ToolResult | Promise<ToolResult>;
}

/**
 * The TypeScript type of the values a JSON Schema accepts, derived from the schema's literal
 * type (declare it `as const`, or let {@linkcode defineTool} infer it): `type` (one name or a
 * list), `properties` with `required` and `additionalProperties: false`, `items`, `enum`,
 * `const`, `anyOf` and `oneOf`. Other keywords (`minimum`, `pattern`, `$ref`, ...) narrow the
 * values without changing the type, or are beyond it and give `unknown`. Costs nothing at run
 * time: validation stays with the tool registry.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { FromJsonSchema } from "@amber/core";
 * const schema = {
 *   type: "object",
 *   properties: { path: { type: "string" }, limit: { type: "integer" } },
 *   required: ["path"],
 *   additionalProperties: false,
 * } as const;
 * const args: FromJsonSchema<typeof schema> = { path: "notes.txt" };
 * assert.equal(args.limit ?? 2000, 2000);
 * ```
 */
export type FromJsonSchema<S> = S extends { readonly const: infer C } ? C
  : S extends { readonly enum: readonly (infer E)[] } ? E
  : S extends { readonly anyOf: readonly (infer A)[] } ? FromJsonSchema<A>
  : S extends { readonly oneOf: readonly (infer A)[] } ? FromJsonSchema<A>
  : S extends { readonly type: readonly (infer T)[] }
    ? T extends unknown ? FromJsonSchema<Omit<S, "type"> & { readonly type: T }> : never
  : S extends { readonly type: "string" } ? string
  : S extends { readonly type: "number" | "integer" } ? number
  : S extends { readonly type: "boolean" } ? boolean
  : S extends { readonly type: "null" } ? null
  : S extends { readonly type: "array" }
    ? S extends { readonly items: infer I } ? readonly FromJsonSchema<I>[] : readonly unknown[]
  : S extends { readonly type: "object"; readonly properties: infer P } ?
      & {
        readonly [
          K in keyof P as K extends (S extends { readonly required: readonly (infer R)[] } ? R
            : never) ? K
            : never
        ]-?: FromJsonSchema<P[K]>;
      }
      & {
        readonly [
          K in keyof P as K extends (S extends { readonly required: readonly (infer R)[] } ? R
            : never) ? never
            : K
        ]?: FromJsonSchema<P[K]>;
      }
      // Keys the schema does not name are allowed unless `additionalProperties` is false.
      & (S extends { readonly additionalProperties: false } ? unknown
        : { readonly [key: string]: unknown })
  : S extends { readonly type: "object" } ? { readonly [key: string]: unknown }
  : unknown;

/**
 * The arguments a tool with `parameters` of type `P` receives once they are validated: the
 * output type of a Standard Schema (zod 4, valibot, ...), else {@linkcode FromJsonSchema}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ToolArgs } from "@amber/core";
 * // What a zod 4 schema's `~standard` carries, reduced to its types.
 * type Count = { readonly "~standard": { readonly types?: { input: string; output: number } } };
 * const count: ToolArgs<Count> = 3;
 * const text: ToolArgs<{ readonly type: "string" }> = "three";
 * assert.equal(`${count} ${text}`, "3 three");
 * ```
 */
export type ToolArgs<P> = P extends { readonly "~standard": { readonly types?: infer T } }
  ? [NonNullable<T>] extends [never] ? unknown
  : NonNullable<T> extends { readonly output: infer O } ? O
  : unknown
  : FromJsonSchema<P>;

/**
 * The arguments as `summarize` and `requiresApproval` see them: parsed from the model's JSON but
 * not yet validated, so each named field may be missing or of any type.
 */
export type ToolInput<Args> = Args extends object ? { readonly [K in keyof Args]?: unknown }
  : unknown;

/**
 * A tool whose parameters are declared once: `execute` receives them typed, and `summarize` and
 * `requiresApproval` see their names (not yet their types).
 */
export interface ToolSpec<P extends JsonSchema | StandardJsonSchema> {
  /** Unique across the harness: `[A-Za-z0-9_-]{1,64}`. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The arguments, declared once: a JSON Schema object or a Standard Schema. */
  readonly parameters: P;
  /** The word the host shows while it runs ("reading", "searching"). */
  readonly verb?: string;
  /** Whether the tool only reads. */
  readonly readOnly?: boolean;
  /** Whether this call needs the user's approval. */
  requiresApproval?(args: ToolInput<ToolArgs<P>>): boolean | Promise<boolean>;
  /** A one-line summary of the call for the host. */
  summarize?(args: ToolInput<ToolArgs<P>>): string;
  /** What the call would do to a file, shown before approval (see `Tool.preview`). */
  preview?(
    args: ToolInput<ToolArgs<P>>,
    context: { readonly signal: AbortSignal },
  ): FileChange | undefined | Promise<FileChange | undefined>;
  /** Runs the tool with the validated arguments. */
  execute(args: ToolArgs<P>, context: ToolCallContext): ToolResult | Promise<ToolResult>;
}

/**
 * A tool whose `execute` receives its arguments typed from its `parameters`, with no cast: the
 * type is derived from the JSON Schema literal (or the Standard Schema's output type), and the
 * registry validates the model's arguments against the same schema before the call. Arguments
 * that are not a JSON object reach `summarize` and `requiresApproval` as `{}`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineTool } from "@amber/core";
 * const greet = defineTool({
 *   name: "greet",
 *   description: "Greet someone by name.",
 *   parameters: {
 *     type: "object",
 *     properties: { name: { type: "string" }, shout: { type: "boolean" } },
 *     required: ["name"],
 *     additionalProperties: false,
 *   },
 *   summarize: (args) => `greet ${String(args.name)}`,
 *   execute: (args) => {
 *     const text = `Hello, ${args.name}!`;
 *     return { ok: true, output: args.shout ? text.toUpperCase() : text };
 *   },
 * });
 * const signal = new AbortController().signal;
 * const result = await greet.execute({ name: "amber", shout: true }, { signal });
 * assert.equal(result.output, "HELLO, AMBER!");
 * assert.equal(greet.summarize?.(null), "greet undefined");
 * ```
 */
export function defineTool<const P extends JsonSchema | StandardJsonSchema>(
  spec: ToolSpec<P>,
): Tool<ToolArgs<P>> {
  const tool: { -readonly [K in keyof Tool<ToolArgs<P>>]: Tool<ToolArgs<P>>[K] } = {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    execute: (args, context) => spec.execute(args, context),
  };
  if (spec.verb !== undefined) tool.verb = spec.verb;
  if (spec.readOnly !== undefined) tool.readOnly = spec.readOnly;
  const { summarize, requiresApproval, preview } = spec;
  if (summarize !== undefined) tool.summarize = (args) => summarize.call(spec, inputOf(args));
  if (preview !== undefined) {
    tool.preview = (args, context) => preview.call(spec, inputOf(args), context);
  }
  if (requiresApproval !== undefined) {
    tool.requiresApproval = (args) => requiresApproval.call(spec, inputOf(args));
  }
  return tool;
}

// What the kernel parsed may be any JSON value; the hooks that run before validation get an
// object, so reading a field of `null` cannot throw. Every field of a `ToolInput` is optional
// and `unknown`, so any object is one.
function inputOf<Args>(args: unknown): ToolInput<Args> {
  const input = typeof args === "object" && args !== null && !Array.isArray(args) ? args : {};
  return input as ToolInput<Args>;
}

/** A tool's definition as a dialect sends it to the model. */
export interface ToolDefinition {
  /** The tool's name. */
  readonly name: string;
  /** The tool's description. */
  readonly description: string;
  /** The parameters as JSON Schema. */
  readonly parameters: JsonSchema;
}

/** One registered tool with its owner. */
export interface ToolEntry {
  /** The tool. */
  readonly tool: Tool;
  /** The plugin that contributed it. */
  readonly owner: string;
  /** Its parameters as JSON Schema. */
  readonly schema: JsonSchema;
}

/**
 * The read-only view of the tools a plugin's context gets. Through a plugin's context, each
 * entry is frozen and its `tool` a frozen stand-in: its fields read through to the tool, its
 * methods call the tool's own, and assigning to either throws a `TypeError`, so no plugin can
 * change how the host runs or approves another plugin's tool.
 */
export interface ToolView {
  /** The tool called `name`, if any. */
  get(name: string): ToolEntry | undefined;
  /** Every tool, in registration order. */
  list(): readonly ToolEntry[];
}
