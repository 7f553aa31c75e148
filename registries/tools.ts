/**
 * The tool registry: the tools a model can call, who owns each, their parameters as JSON Schema,
 * and the one place a call is validated and run, with every failure returned as an error result.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createToolRegistry } from "@amber/registries/tools";
 * import { defineTool, EventBus } from "@amber/core";
 *
 * const tools = createToolRegistry();
 * const services = {
 *   owner: "hello",
 *   tools,
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * tools.install("hello", {
 *   kind: "tool",
 *   name: "greet",
 *   tools: [defineTool({
 *     name: "greet",
 *     description: "Greet someone by name.",
 *     parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
 *     execute: (args) => ({ ok: true, output: `Hello, ${args.name}!` }),
 *   })],
 * }, services);
 * const result = await tools.execute("greet", '{"name":"amber"}');
 * assert.equal(result.output, "Hello, amber!");
 * ```
 *
 * @module
 */

import {
  checkStandardArguments,
  declined,
  deepFreeze,
  describeValueType,
  failed,
  installed,
  type InstallResult,
  isToolResult,
  type JsonSchema,
  type PluginServices,
  prepareParameters,
  type RegistryEntry,
  type StandardJsonSchema,
  type Tool,
  type ToolCallContext,
  type ToolCapability,
  type ToolDefinition,
  type ToolEntry,
  type ToolRegistry,
  type ToolResult,
} from "@amber/core";
import { contribution, errorMessage, OwnedMap, type OwnedRecord, ownerLabel } from "./_owned.ts";

/** What a tool name must look like: what every provider accepts as a function name. */
export const TOOL_NAME_PATTERN: RegExp = /^[A-Za-z0-9_-]{1,64}$/;

type StandardProps = StandardJsonSchema["~standard"];
type Check = (
  value: unknown,
) => Promise<{ ok: true; value: unknown } | { ok: false; error: string }>;

// The entry `get` and `list` hand out, carrying privately what `execute` needs: the Standard
// Schema, and the check compiled on the first call (not at install, so installing stays cheap
// and the validator library loads lazily). The schema is the registry's own frozen copy, made
// on first use: what the model is shown and what a call is checked against, it can be changed
// neither by a dialect holding a definition nor by a plugin holding the tool's parameters.
class ToolSlot implements ToolEntry {
  readonly #standard: StandardProps | undefined;
  #source: JsonSchema;
  #frozen = false;
  #check: Check | undefined = undefined;

  constructor(
    readonly tool: Tool,
    readonly owner: string,
    schema: JsonSchema,
    standard: StandardProps | undefined,
  ) {
    this.#source = schema;
    this.#standard = standard;
  }

  get schema(): JsonSchema {
    if (!this.#frozen) {
      this.#source = deepFreeze(jsonCopy(this.#source) as JsonSchema);
      this.#frozen = true;
    }
    return this.#source;
  }

  validate(value: unknown): ReturnType<Check> {
    this.#check ??= compile(this.schema, this.#standard);
    return this.#check(value);
  }
}

type Validator = import("@cfworker/json-schema").Validator;
type ValidatorClass = typeof import("@cfworker/json-schema").Validator;
type CfOutputUnit = import("@cfworker/json-schema").OutputUnit;

let validatorClass: Promise<ValidatorClass> | undefined;

// Loaded the first time a raw JSON Schema is validated, so a session that never calls a tool
// with one never pays for parsing the library.
function loadValidator(): Promise<ValidatorClass> {
  return validatorClass ??= import("@cfworker/json-schema").then((module) => module.Validator);
}

// A signal nothing ever aborts, shared by every call made without a context.
const NEVER_ABORTED: AbortSignal = new AbortController().signal;
const DEFAULT_CONTEXT: ToolCallContext = Object.freeze({ signal: NEVER_ABORTED });

/**
 * Creates an empty tool registry.
 *
 * Tools arrive through `install`: a capability's list (or its factory's) is one contribution,
 * added whole or not at all. Names are unique across the harness; a collision names both
 * plugins. Parameters are a JSON Schema object, or a Standard Schema (zod 4, valibot, ...) that
 * converts itself with `~standard.jsonSchema.input`; the converted schema is cached at install
 * and its top-level `$schema` key is dropped, since several providers reject it. `execute`
 * parses JSON-text arguments, validates them (the Standard Schema's own `validate`, or
 * `@cfworker/json-schema` for raw schemas) and hands the tool the validated value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createToolRegistry } from "@amber/registries/tools";
 * import { defineTool, EventBus } from "@amber/core";
 *
 * const tools = createToolRegistry();
 * const services = {
 *   owner: "a",
 *   tools,
 *   events: new EventBus(),
 *   config: () => ({ plugins: {} }),
 *   host: {},
 *   workspace: { root: "/tmp" },
 * };
 * const echo = defineTool({
 *   name: "echo",
 *   description: "Echo the text.",
 *   parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
 *   execute: (args) => ({ ok: true, output: args.text }),
 * });
 * const result = tools.install("a", { kind: "tool", name: "echo", tools: [echo] }, services);
 * assert.equal(result.status, "installed");
 * const clash = tools.install("b", { kind: "tool", name: "echo", tools: [echo] }, services);
 * assert.equal(clash.status, "failed");
 * assert.match(clash.error, /^tool 'echo' from plugin 'b' collides with the tool of plugin 'a'/);
 * const bad = await tools.execute("echo", { text: 3 });
 * assert.equal(bad.error, "invalid arguments for tool 'echo': text: expected string, received number");
 * ```
 */
export function createToolRegistry(): ToolRegistry {
  const slots = new OwnedMap<ToolSlot>();
  let listed: readonly ToolEntry[] | undefined;
  let defined: readonly ToolDefinition[] | undefined;
  let cachedAt = -1;

  function refresh(): void {
    if (cachedAt === slots.version) return;
    cachedAt = slots.version;
    listed = undefined;
    defined = undefined;
  }

  function install(
    owner: string,
    capability: ToolCapability,
    services: PluginServices,
  ): InstallResult {
    let tools: readonly Tool[];
    try {
      const source = capability.tools;
      tools = typeof source === "function" ? source(services) : source;
    } catch (error) {
      return failed(`${capabilityLabel(capability, owner)} failed: ${errorMessage(error)}`);
    }
    if (!Array.isArray(tools)) {
      return failed(
        `${capabilityLabel(capability, owner)} failed: tools must be an array of tools, got ${
          describeValueType(tools)
        }`,
      );
    }
    if (tools.length === 0) {
      return declined(`${capabilityLabel(capability, owner)}: factory returned no tools`);
    }

    if (tools.length === 1) {
      // The common case, without the bookkeeping a list needs.
      const slot = prepare(owner, capability, tools[0]);
      if (typeof slot === "string") return failed(slot);
      const name = slot.tool.name;
      const holder = slots.get(name);
      if (holder !== undefined) {
        return failed(collision(name, owner, holder.owner), { id: name, owner: holder.owner });
      }
      return installed(slots.install(name, owner, slot, "tool", capability.name)!);
    }

    // Every tool is checked before any is added, so a rejected one leaves nothing behind.
    const prepared: ToolSlot[] = [];
    const ids: string[] = [];
    for (const tool of tools) {
      const slot = prepare(owner, capability, tool);
      if (typeof slot === "string") return failed(slot);
      const name = slot.tool.name;
      const holder = slots.get(name);
      if (holder !== undefined) {
        return failed(collision(name, owner, holder.owner), { id: name, owner: holder.owner });
      }
      if (ids.includes(name)) {
        return failed(
          `${collision(name, owner, owner)} (listed twice in ${
            capabilityLabel(capability, owner)
          })`,
        );
      }
      ids.push(name);
      prepared.push(slot);
    }
    const records: OwnedRecord<ToolSlot>[] = [];
    for (const slot of prepared) records.push(slots.add(slot.tool.name, owner, slot)!);
    return installed(
      contribution("tool", capability.name, ids, () => {
        for (const record of records) slots.delete(record.id, owner, record);
      }),
    );
  }

  function execute(name: string, args: unknown, context?: ToolCallContext): Promise<ToolResult> {
    const slot = slots.get(name)?.value;
    if (slot === undefined) {
      const known = slots.records().map((record) => record.id);
      return Promise.resolve(errorResult(
        `unknown tool '${name}'; available tools: ${known.length ? known.join(", ") : "(none)"}`,
      ));
    }
    return run(slot, args, context);
  }

  // A step runs the entries it resolved at its start, registered still or not.
  function executeEntry(
    entry: ToolEntry,
    args: unknown,
    context?: ToolCallContext,
  ): Promise<ToolResult> {
    if (!(entry instanceof ToolSlot)) {
      return Promise.resolve(
        errorResult(`tool '${entry.tool.name}' was not handed out by a tool registry`),
      );
    }
    return run(entry, args, context);
  }

  return {
    install,
    execute,
    executeEntry,
    get(name: string): ToolEntry | undefined {
      return slots.get(name)?.value;
    },
    list(): readonly ToolEntry[] {
      refresh();
      return listed ??= slots.records().map((record) => record.value);
    },
    definitions(): readonly ToolDefinition[] {
      refresh();
      return defined ??= Object.freeze(
        slots.records().map(({ value: entry }): ToolDefinition =>
          Object.freeze({
            name: entry.tool.name,
            description: entry.tool.description,
            parameters: entry.schema,
          })
        ),
      );
    },
    remove(owner: string, name: string): boolean {
      return slots.delete(name, owner);
    },
    entries(): readonly RegistryEntry[] {
      return slots.entries();
    },
    purge(owner: string): readonly string[] {
      return slots.purge(owner);
    },
    get version(): number {
      return slots.version;
    },
  };
}

// Parses (JSON text) and validates the arguments, then runs the slot's tool; every failure is an
// error result.
async function run(
  slot: ToolSlot,
  args: unknown,
  context: ToolCallContext | undefined,
): Promise<ToolResult> {
  const name = slot.tool.name;
  let input = args;
  if (typeof input === "string") {
    // Models send "" for a call without arguments.
    if (input.trim() === "") input = {};
    else {
      try {
        input = JSON.parse(input);
      } catch (error) {
        return errorResult(
          `invalid arguments for tool '${name}': not valid JSON: ${errorMessage(error)}`,
        );
      }
    }
  } else if (input === undefined) {
    input = {};
  }

  let checked: { ok: true; value: unknown } | { ok: false; error: string };
  try {
    checked = await slot.validate(input);
  } catch (error) {
    return errorResult(`tool '${name}' could not validate its arguments: ${errorMessage(error)}`);
  }
  if (!checked.ok) return errorResult(`invalid arguments for tool '${name}': ${checked.error}`);

  let result: unknown;
  try {
    result = await slot.tool.execute(checked.value, context ?? DEFAULT_CONTEXT);
  } catch (error) {
    return errorResult(`tool '${name}' failed: ${errorMessage(error)}`);
  }
  if (!isToolResult(result)) {
    return errorResult(
      `tool '${name}' failed: it returned ${describeValueType(result)} instead of a ToolResult`,
    );
  }
  return result;
}

// Checks one tool and converts its parameters; returns the slot, or the error text.
function prepare(owner: string, capability: ToolCapability, tool: Tool): ToolSlot | string {
  if (typeof tool !== "object" || tool === null) {
    return `${capabilityLabel(capability, owner)} returned ${
      describeValueType(tool)
    } instead of a tool`;
  }
  const name: unknown = tool.name;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    return `tool name ${typeof name === "string" ? `'${name}'` : describeValueType(name)} from ${
      ownerLabel(owner)
    } is not valid: a name is 1-64 of A-Z a-z 0-9 _ -`;
  }
  if (typeof tool.description !== "string") return `${toolLabel(name, owner)} has no description`;
  if (typeof tool.execute !== "function") {
    return `${toolLabel(name, owner)} has no execute function`;
  }
  const prepared = prepareParameters(tool.parameters, toolLabel(name, owner));
  if (typeof prepared === "string") return prepared;
  return new ToolSlot(tool, owner, prepared.schema, prepared.standard);
}

// A copy of the plain objects and arrays of a JSON Schema; anything else is kept as it is.
function jsonCopy(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(jsonCopy);
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  // fromEntries defines each key, so a key named "__proto__" stays a key.
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, jsonCopy(item)]));
}

function compile(schema: JsonSchema, standard: StandardProps | undefined): Check {
  if (standard !== undefined) {
    return (value) => checkStandardArguments(standard, value);
  }
  let validator: Validator | undefined;
  return async (value) => {
    if (validator === undefined) {
      const Validator = await loadValidator();
      // The validator annotates the schema it is given (its resolved URIs), so it gets a copy
      // of its own: the registry's is frozen.
      const own = jsonCopy(schema) as Record<string, unknown>;
      validator = new Validator(own, draftOf(schema), false);
    }
    const outcome = validator.validate(value);
    if (outcome.valid) return { ok: true, value };
    return { ok: false, error: schemaErrors(outcome.errors) };
  };
}

type Draft = "4" | "7" | "2019-09" | "2020-12";

function draftOf(schema: JsonSchema): Draft {
  const uri = typeof schema.$schema === "string" ? schema.$schema : "";
  if (uri.includes("draft-04")) return "4";
  if (uri.includes("draft-06") || uri.includes("draft-07")) return "7";
  if (uri.includes("2019-09")) return "2019-09";
  return "2020-12";
}

// Keywords whose error only says "something below me failed": the error below says what.
const WRAPPERS = new Set([
  "properties",
  "patternProperties",
  "additionalProperties",
  "items",
  "prefixItems",
  "additionalItems",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contains",
  "dependentSchemas",
  "propertyNames",
  "$ref",
  "$recursiveRef",
  "$dynamicRef",
  "allOf",
  "if",
  "then",
  "else",
]);

function schemaErrors(errors: readonly CfOutputUnit[]): string {
  const leaves = errors.filter((error) => !WRAPPERS.has(error.keyword));
  const shown = leaves.length > 0 ? leaves : errors;
  const lines: string[] = [];
  for (const error of shown) {
    const line = schemaError(error);
    if (!lines.includes(line)) lines.push(line);
  }
  return lines.join("; ");
}

function schemaError(error: CfOutputUnit): string {
  const path = pointerPath(error.instanceLocation);
  const text = error.error;
  switch (error.keyword) {
    case "type": {
      const expected = /Expected "([^"]*)"/.exec(text)?.[1]?.replaceAll('", "', " or ");
      const actual = /Instance type "([^"]*)"/.exec(text)?.[1];
      if (expected !== undefined) {
        return `${path}: expected ${expected}${actual ? `, received ${actual}` : ""}`;
      }
      break;
    }
    case "required": {
      const property = /required property "(.*)"\.?$/.exec(text)?.[1];
      if (property !== undefined) return `${join(path, property)}: required`;
      break;
    }
    case "false":
      return `${path}: not allowed here`;
  }
  return `${path}: ${text}`;
}

function pointerPath(location: string): string {
  const parts = location.replace(/^#\/?/, "").split("/").filter((part) => part !== "");
  if (parts.length === 0) return "arguments";
  return parts.map((part) => {
    let decoded = part;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      // Not percent-encoded after all: show it as it is.
    }
    return decoded.replaceAll("~1", "/").replaceAll("~0", "~");
  }).join(".");
}

function join(path: string, key: string): string {
  return path === "arguments" ? key : `${path}.${key}`;
}

function capabilityLabel(capability: ToolCapability, owner: string): string {
  return `tool capability '${capability?.name}' of ${ownerLabel(owner)}`;
}

function toolLabel(name: string, owner: string): string {
  return `tool '${name}' from ${ownerLabel(owner)}`;
}

function collision(name: string, owner: string, holder: string): string {
  return `tool '${name}' from ${ownerLabel(owner)} collides with the tool of ${ownerLabel(holder)}`;
}

function errorResult(error: string): ToolResult {
  return { ok: false, output: "", error };
}
