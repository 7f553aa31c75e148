/**
 * JSON Schema (draft 7 / 2020-12, as tools declare parameters) to the OpenAPI 3.0 subset Gemini's
 * `functionDeclarations[].parameters` accepts. Private to the package; `toGeminiSchema` is
 * public through `@amber/providers/gemini`.
 *
 * @module
 */

import type { JsonSchema } from "@amber/core";

const KEPT_NUMBERS = [
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
] as const;

const FORMATS: { readonly [type: string]: readonly string[] } = {
  string: ["date-time", "enum"],
  integer: ["int32", "int64"],
  number: ["float", "double"],
};

/** A JSON object, as a schema node is read. */
export type Schema = { [key: string]: unknown };

/** Whether `value` is a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Schema {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** What `#/$defs/X` (or `#/definitions/X`) points at in the root schema. */
function resolveRef(root: Schema, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (!isObject(node)) return undefined;
    node = node[key];
  }
  return node;
}

function convertNode(node: unknown, root: Schema, refs: readonly string[]): Schema {
  if (node === true || node === undefined) return {};
  if (!isObject(node)) return {};
  const ref = node.$ref;
  if (typeof ref === "string") {
    // A recursive ref cannot be inlined; it becomes an object that says what it was.
    if (refs.includes(ref)) return { type: "object", description: `(recursive ${ref})` };
    const target = resolveRef(root, ref);
    if (target === undefined) return { type: "object" };
    const inlined = convertNode(target, root, [...refs, ref]);
    if (typeof node.description === "string") inlined.description = node.description;
    return inlined;
  }
  const out: Schema = {};
  let nullable = node.nullable === true;
  let type: unknown = node.type;
  if (Array.isArray(type)) {
    const types = type.filter((t) => t !== "null");
    if (types.length < type.length) nullable = true;
    if (types.length === 1) type = types[0];
    else if (types.length === 0) type = undefined;
    else {
      // Several types: Gemini has no type arrays, but it has anyOf.
      out.anyOf = types.map((t) =>
        convertNode({ ...node, type: t, nullable: undefined }, root, refs)
      );
      type = undefined;
    }
  }
  if (type === "null") {
    nullable = true;
    type = undefined;
  }
  if (typeof type === "string") out.type = type;
  if (typeof node.title === "string") out.title = node.title;
  if (typeof node.description === "string") out.description = node.description;

  const format = node.format;
  if (typeof format === "string" && typeof type === "string" && FORMATS[type]?.includes(format)) {
    out.format = format;
  }

  let values: unknown[] | undefined = Array.isArray(node.enum) ? node.enum : undefined;
  if (values === undefined && "const" in node) values = [node.const];
  if (values !== undefined) {
    const present = values.filter((value) => value !== null);
    if (present.length < values.length) nullable = true;
    if (present.length > 0 && present.every((value) => typeof value === "string")) {
      out.enum = present;
      if (out.type === undefined) out.type = "string";
    } else if (present.length > 0) {
      // Gemini takes only string enums; the allowed values survive in the description.
      const allowed = `Allowed values: ${
        present.map((value) => JSON.stringify(value)).join(", ")
      }.`;
      out.description = typeof out.description === "string"
        ? `${out.description} ${allowed}`
        : allowed;
    }
  }

  for (const key of KEPT_NUMBERS) {
    const value = node[key];
    if (typeof value === "number" && Number.isFinite(value)) out[key] = value;
  }
  if (typeof node.pattern === "string") out.pattern = node.pattern;

  if (isObject(node.properties)) {
    const properties: Schema = {};
    const names: string[] = [];
    for (const [name, value] of Object.entries(node.properties)) {
      properties[name] = convertNode(value, root, refs);
      names.push(name);
    }
    if (names.length > 0) {
      out.properties = properties;
      if (Array.isArray(node.required)) {
        const required = node.required.filter((name): name is string =>
          typeof name === "string" && names.includes(name)
        );
        if (required.length > 0) out.required = required;
      }
    }
    if (out.type === undefined) out.type = "object";
  }

  if (node.items !== undefined) {
    // A tuple (`items` as a list, or `prefixItems`) has no Gemini form; its first item stands in.
    const items = Array.isArray(node.items) ? node.items[0] : node.items;
    if (items !== undefined && items !== false) out.items = convertNode(items, root, refs);
  } else if (Array.isArray(node.prefixItems) && node.prefixItems.length > 0) {
    out.items = convertNode(node.prefixItems[0], root, refs);
  }
  if (out.type === "array" && out.items === undefined) out.items = {};

  const union = Array.isArray(node.anyOf)
    ? node.anyOf
    : Array.isArray(node.oneOf)
    ? node.oneOf
    : undefined;
  if (union !== undefined) {
    const branches: Schema[] = [];
    for (const branch of union) {
      if (isObject(branch) && branch.type === "null" && Object.keys(branch).length === 1) {
        nullable = true;
        continue;
      }
      branches.push(convertNode(branch, root, refs));
    }
    if (branches.length === 1) {
      // `anyOf: [X, {type: "null"}]`, the common optional-value shape, is X made nullable.
      const description = out.description;
      Object.assign(out, branches[0]);
      if (description !== undefined) out.description = description;
    } else if (branches.length > 1) {
      out.anyOf = branches;
    }
  }

  if (Array.isArray(node.allOf)) {
    // allOf intersects; for the object shapes tools use, merging properties is that.
    for (const part of node.allOf) {
      const converted = convertNode(part, root, refs);
      for (const [key, value] of Object.entries(converted)) {
        if (key === "properties" && isObject(value)) {
          out.properties = { ...(isObject(out.properties) ? out.properties : {}), ...value };
        } else if (key === "required" && Array.isArray(value)) {
          const required = Array.isArray(out.required) ? out.required : [];
          out.required = [...new Set([...required, ...value])];
        } else if (out[key] === undefined) {
          out[key] = value;
        }
      }
    }
  }

  if (nullable) out.nullable = true;
  return out;
}

/**
 * Converts a JSON Schema (draft 7 / 2020-12, as tools declare parameters) to the OpenAPI 3.0
 * subset Gemini's `functionDeclarations[].parameters` accepts. Keywords Gemini rejects are
 * dropped (`$schema`, `additionalProperties`, `default`, `examples`, unsupported `format`s, ...);
 * local `$ref`s are inlined (a recursive one becomes a plain object); `const` becomes a
 * one-value `enum`; `"null"` in a type list, a null `anyOf` branch or a null enum value become
 * `nullable: true`; other type lists become `anyOf`; `oneOf` becomes `anyOf`; `allOf` is merged;
 * non-string enums (which Gemini refuses) are moved into the description. An object schema with
 * no properties converts to undefined, since Gemini wants `parameters` absent then.
 *
 * @example
 * ```ts
 * import { toGeminiSchema } from "@amber/providers/gemini";
 * import assert from "node:assert/strict";
 * const schema = toGeminiSchema({
 *   $schema: "https://json-schema.org/draft/2020-12/schema",
 *   type: "object",
 *   properties: { path: { type: "string" }, limit: { type: ["integer", "null"], default: 10 } },
 *   required: ["path"],
 *   additionalProperties: false,
 * });
 * assert.deepEqual(schema, {
 *   type: "object",
 *   properties: { path: { type: "string" }, limit: { type: "integer", nullable: true } },
 *   required: ["path"],
 * });
 * ```
 */
export function toGeminiSchema(schema: JsonSchema): Record<string, unknown> | undefined {
  const converted = convertNode(schema, schema as Schema, []);
  if (converted.type === "object" && converted.properties === undefined) return undefined;
  if (Object.keys(converted).length === 0) return undefined;
  return converted;
}
