import assert from "node:assert/strict";
import { z } from "zod";
import { toGeminiSchema } from "../../providers/gemini.ts";

Deno.test("gemini schema: keywords Gemini rejects are dropped", () => {
  assert.deepEqual(
    toGeminiSchema({
      $schema: "http://json-schema.org/draft-07/schema#",
      $id: "x",
      type: "object",
      title: "Args",
      properties: {
        path: { type: "string", default: "a", examples: ["b"], minLength: 1, format: "uri" },
        when: { type: "string", format: "date-time" },
        n: { type: "integer", format: "int64", minimum: 0, exclusiveMaximum: 9 },
        x: { type: "number", format: "decimal", multipleOf: 2 },
        list: { type: "array", items: { type: "string" }, minItems: 1, uniqueItems: true },
      },
      required: ["path", "gone"],
      additionalProperties: false,
    }),
    {
      type: "object",
      title: "Args",
      properties: {
        path: { type: "string", minLength: 1 },
        when: { type: "string", format: "date-time" },
        n: { type: "integer", format: "int64", minimum: 0 },
        x: { type: "number" },
        list: { type: "array", items: { type: "string" }, minItems: 1 },
      },
      required: ["path"],
    },
  );
});

Deno.test("gemini schema: null in types, unions and enums becomes nullable", () => {
  const converted = toGeminiSchema({
    type: "object",
    properties: {
      a: { type: ["string", "null"] },
      b: { anyOf: [{ type: "integer" }, { type: "null" }], description: "B." },
      c: { enum: ["x", "y", null] },
      d: { type: ["string", "integer"] },
      e: { oneOf: [{ type: "string" }, { type: "boolean" }] },
      f: { type: "null" },
    },
  });
  assert.deepEqual(converted?.properties, {
    a: { type: "string", nullable: true },
    b: { type: "integer", description: "B.", nullable: true },
    c: { enum: ["x", "y"], type: "string", nullable: true },
    d: { anyOf: [{ type: "string" }, { type: "integer" }] },
    e: { anyOf: [{ type: "string" }, { type: "boolean" }] },
    f: { nullable: true },
  });
});

Deno.test("gemini schema: const becomes enum; non-string enums move to the description", () => {
  const converted = toGeminiSchema({
    type: "object",
    properties: {
      kind: { const: "file" },
      level: { type: "integer", enum: [1, 2, 3], description: "How deep." },
      flag: { const: true },
    },
  });
  assert.deepEqual(converted?.properties, {
    kind: { enum: ["file"], type: "string" },
    level: { type: "integer", description: "How deep. Allowed values: 1, 2, 3." },
    flag: { description: "Allowed values: true." },
  });
});

Deno.test("gemini schema: local refs are inlined, a recursive one stops", () => {
  const converted = toGeminiSchema({
    type: "object",
    properties: {
      point: { $ref: "#/$defs/Point", description: "Where." },
      legacy: { $ref: "#/definitions/Name" },
      tree: { $ref: "#/$defs/Node" },
      missing: { $ref: "#/$defs/Nope" },
    },
    $defs: {
      Point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] },
      Node: {
        type: "object",
        properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } } },
      },
    },
    definitions: { Name: { type: "string" } },
  });
  assert.deepEqual(converted, {
    type: "object",
    properties: {
      point: {
        type: "object",
        properties: { x: { type: "number" } },
        required: ["x"],
        description: "Where.",
      },
      legacy: { type: "string" },
      tree: {
        type: "object",
        properties: {
          children: {
            type: "array",
            items: { type: "object", description: "(recursive #/$defs/Node)" },
          },
        },
      },
      missing: { type: "object" },
    },
  });
});

Deno.test("gemini schema: allOf merges, empty objects and itemless arrays stay valid", () => {
  assert.deepEqual(
    toGeminiSchema({
      allOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { properties: { b: { type: "object" }, c: { type: "array" } }, required: ["b"] },
      ],
    }),
    {
      type: "object",
      properties: { a: { type: "string" }, b: { type: "object" }, c: { type: "array", items: {} } },
      required: ["a", "b"],
    },
  );
  assert.equal(toGeminiSchema({}), undefined);
  assert.equal(toGeminiSchema({ type: "object", properties: {} }), undefined);
  assert.equal(toGeminiSchema({ type: "object", additionalProperties: true }), undefined);
});

Deno.test("gemini schema: a zod 4 schema converts to what Gemini accepts", () => {
  const schema = z.toJSONSchema(z.object({
    path: z.string().describe("The file"),
    limit: z.number().int().optional(),
    mode: z.enum(["a", "b"]).nullable(),
    tags: z.array(z.string()).default([]),
    url: z.url(),
  }));
  assert.deepEqual(toGeminiSchema(schema as Record<string, unknown>), {
    type: "object",
    properties: {
      path: { type: "string", description: "The file" },
      limit: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991 },
      mode: { type: "string", enum: ["a", "b"], nullable: true },
      tags: { type: "array", items: { type: "string" } },
      url: { type: "string" },
    },
    required: ["path", "mode", "tags", "url"],
  });
});
