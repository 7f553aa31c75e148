// Typed tools and the tool plugin shell: parameters declared once reach `execute` typed, a plugin
// made by `toolPlugin` installs and uninstalls cleanly through a real runtime, and arguments the
// schema rejects give the same errors as before tools were typed.

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  defineTool,
  type FromJsonSchema,
  type HostServices,
  type Plugin,
  type PluginRuntime,
  type Registries,
  type Tool,
  type ToolArgs,
} from "@amber/core";
import * as plugins from "@amber/plugins";
import * as processGroup from "@amber/plugins/process_group";
import { createToolBashPlugin } from "@amber/plugins/tool_bash";
import { createToolEditPlugin } from "@amber/plugins/tool_edit";
import { createToolPlanPlugin } from "@amber/plugins/tool_plan";
import { toolPlugin } from "@amber/plugins/tool_plugin";
import { createToolReadPlugin } from "@amber/plugins/tool_read";
import { createToolSearchPlugin } from "@amber/plugins/tool_search";
import { createTodoService } from "../../cli/todos.ts";
import { makeRuntime, tempDir } from "../_helpers.ts";

// Whether A and B accept the same values (optional and required properties differ).
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false;

const REPEAT_PARAMETERS = {
  type: "object",
  properties: {
    text: { type: "string", minLength: 1 },
    times: { type: "integer", minimum: 1 },
    separator: { type: "string" },
  },
  required: ["text", "times"],
  additionalProperties: false,
} as const;

function repeatTool(): Tool<FromJsonSchema<typeof REPEAT_PARAMETERS>> {
  return defineTool({
    name: "repeat",
    description: "Repeat a text.",
    parameters: REPEAT_PARAMETERS,
    verb: "repeating",
    readOnly: true,
    requiresApproval: (args) => args.times !== 1,
    summarize: (args) => `repeat ${String(args.text)} x${String(args.times)}`,
    // Typed: `text` is a string and `times` a number, with no cast.
    execute: (args) => ({
      ok: true,
      output: Array.from({ length: args.times }, () => args.text).join(args.separator ?? ""),
    }),
  });
}

function repeatPlugin(build: () => readonly Tool[] = () => [repeatTool()]): Plugin {
  return toolPlugin({
    id: "repeat",
    name: "Repeat",
    description: "The repeat tool.",
    tools: ["repeat"],
    build,
  });
}

async function started(
  list: readonly Plugin[],
  configDir: string,
  host: HostServices = {},
): Promise<{ runtime: PluginRuntime; registries: Registries }> {
  const harness = makeRuntime({ workspace: { root: configDir }, configDir, host, allOn: true });
  for (const plugin of list) harness.runtime.register(plugin);
  await harness.runtime.start();
  return harness;
}

Deno.test("defineTool: the parameters' type is derived from the schema, once", () => {
  type Args = ToolArgs<typeof REPEAT_PARAMETERS>;
  const same: Same<Args, { text: string; times: number; separator?: string }> = true;
  const args: Args = { text: "a", times: 2 };
  // @ts-expect-error `times` is required
  const missing: Args = { text: "a" };
  // @ts-expect-error `additionalProperties: false` admits no other key
  const extra: Args = { text: "a", times: 1, other: true };
  // @ts-expect-error `times` is a number
  const wrong: Args = { text: "a", times: "2" };
  deepStrictEqual([same, args.times, missing.text, extra.times, wrong.text], [
    true,
    2,
    "a",
    1,
    "a",
  ]);
});

Deno.test("FromJsonSchema: enum, const, type lists, arrays, anyOf, open and closed objects", () => {
  const schema = {
    type: "object",
    properties: {
      status: { type: "string", enum: ["pending", "done"] },
      kind: { const: "todo" },
      note: { type: ["string", "null"] },
      items: { type: "array", items: { type: "integer" } },
      either: { anyOf: [{ type: "boolean" }, { type: "number" }] },
      open: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
      anything: {},
    },
    required: ["status", "kind"],
    additionalProperties: false,
  } as const;
  type Derived = FromJsonSchema<typeof schema>;
  const status: Same<Derived["status"], "pending" | "done"> = true;
  const kind: Same<Derived["kind"], "todo"> = true;
  const note: Same<Derived["note"], string | null | undefined> = true;
  const items: Same<Derived["items"], readonly number[] | undefined> = true;
  const either: Same<Derived["either"], boolean | number | undefined> = true;
  const anything: Same<Derived["anything"], unknown> = true;
  // Without `additionalProperties: false` other keys are allowed, of any type.
  const open: NonNullable<Derived["open"]> = { a: "x", b: 1 };
  // @ts-expect-error not one of the enum's values
  const bad: Derived = { status: "later", kind: "todo" };
  deepStrictEqual([status, kind, note, items, either, anything, open.a, bad.kind], [
    true,
    true,
    true,
    true,
    true,
    true,
    "x",
    "todo",
  ]);
});

Deno.test("defineTool: typed arguments reach execute through the registry", async () => {
  await using tmp = await tempDir();
  const { runtime, registries } = await started([repeatPlugin()], tmp.dir);
  const result = await registries.tool.execute(
    "repeat",
    '{"text":"ab","times":3,"separator":"-"}',
  );
  deepStrictEqual(result, { ok: true, output: "ab-ab-ab" });
  const tool = registries.tool.get("repeat")!.tool;
  strictEqual(tool.summarize?.({ text: "ab", times: 3 }), "repeat ab x3");
  strictEqual(tool.requiresApproval?.({ text: "ab", times: 3 }), true);
  strictEqual(tool.requiresApproval?.({ text: "ab", times: 1 }), false);
  deepStrictEqual([tool.verb, tool.readOnly], ["repeating", true]);
  await runtime.stop();
});

Deno.test("defineTool: summarize and requiresApproval get an object whatever was parsed", () => {
  const tool = repeatTool();
  for (const parsed of [null, 3, "text", [1, 2], undefined]) {
    strictEqual(tool.summarize?.(parsed), "repeat undefined xundefined", String(parsed));
    strictEqual(tool.requiresApproval?.(parsed), true, String(parsed));
  }
  const bare = defineTool({
    name: "bare",
    description: "No hooks.",
    parameters: { type: "object", properties: {} },
    execute: () => ({ ok: true, output: "" }),
  });
  deepStrictEqual(Object.keys(bare).sort(), ["description", "execute", "name", "parameters"]);
});

Deno.test("defineTool: a Standard Schema's output type reaches execute", async () => {
  // A minimal Standard Schema, as zod 4 or valibot would make: it validates and converts.
  const parameters = {
    "~standard": {
      version: 1,
      vendor: "test",
      validate: (value: unknown) =>
        typeof (value as { n?: unknown })?.n === "number"
          ? { value: { n: (value as { n: number }).n * 2 } }
          : { issues: [{ message: "expected a number", path: ["n"] }] },
      jsonSchema: {
        input: () => ({ type: "object", properties: { n: { type: "number" } }, required: ["n"] }),
      },
      types: undefined as unknown as { input: { n: number }; output: { n: number } },
    },
  } as const;
  const tool = defineTool({
    name: "double",
    description: "Double a number.",
    parameters,
    execute: (args) => ({ ok: true, output: String(args.n.toFixed(1)) }),
  });
  await using tmp = await tempDir();
  const { runtime, registries } = await started([
    toolPlugin({
      id: "double",
      name: "Double",
      description: "The double tool.",
      tools: ["double"],
      build: () => [tool],
    }),
  ], tmp.dir);
  deepStrictEqual(await registries.tool.execute("double", { n: 2 }), { ok: true, output: "4.0" });
  strictEqual(
    (await registries.tool.execute("double", { n: "2" })).error,
    "invalid arguments for tool 'double': n: expected a number",
  );
  await runtime.stop();
});

Deno.test("toolPlugin: the shell every tool plugin shares", () => {
  const plugin = repeatPlugin();
  deepStrictEqual(
    [plugin.id, plugin.version, plugin.name, plugin.category, plugin.description],
    ["repeat", "0.1.0", "Repeat", "tools", "The repeat tool."],
  );
  deepStrictEqual(plugin.bound, { tools: { kind: "exact", ids: ["repeat"] } });
  strictEqual(plugin.enabledByDefault, undefined);
  const [capability] = plugin.capabilities();
  deepStrictEqual([capability.kind, capability.name], ["tool", "repeat"]);
  strictEqual(plugin.capabilities(), plugin.capabilities(), "the same list at every activation");
  const named = toolPlugin({
    id: "two",
    name: "Two",
    description: "Two tools.",
    version: "2.0.0",
    tools: ["a", "b"],
    capability: "pair",
    build: () => [],
  });
  deepStrictEqual([named.version, named.capabilities()[0].name], ["2.0.0", "pair"]);
  deepStrictEqual(named.bound, { tools: { kind: "exact", ids: ["a", "b"] } });
});

Deno.test("toolPlugin: installs, uninstalls when switched off, and comes back", async () => {
  await using tmp = await tempDir();
  const { runtime, registries } = await started([repeatPlugin()], tmp.dir);
  const listed = () => registries.tool.list().map((entry) => `${entry.owner}:${entry.tool.name}`);
  strictEqual(runtime.state("repeat").status, "active");
  deepStrictEqual(listed(), ["repeat:repeat"]);
  deepStrictEqual(runtime.info("repeat").contributions.map((c) => [c.kind, c.name, c.ids]), [
    ["tool", "repeat", ["repeat"]],
  ]);

  await runtime.setState("repeat", false);
  strictEqual(runtime.state("repeat").status, "disabled");
  deepStrictEqual(listed(), []);
  deepStrictEqual(runtime.info("repeat").contributions, []);
  strictEqual(
    (await registries.tool.execute("repeat", { text: "a", times: 1 })).error,
    "unknown tool 'repeat'; available tools: (none)",
  );

  await runtime.setState("repeat", true);
  deepStrictEqual(listed(), ["repeat:repeat"]);
  deepStrictEqual(await registries.tool.execute("repeat", { text: "a", times: 2 }), {
    ok: true,
    output: "aa",
  });
  await runtime.stop();
  deepStrictEqual(listed(), []);
});

Deno.test("toolPlugin: an empty build declines; a tool it does not name fails activation", async () => {
  await using tmp = await tempDir();
  const stray = () => [{ ...repeatTool(), name: "stray" }];
  const { runtime, registries } = await started([
    repeatPlugin(() => []),
    toolPlugin({
      id: "liar",
      name: "Liar",
      description: "Names one tool, builds another.",
      tools: ["named"],
      build: stray,
    }),
  ], tmp.dir);
  strictEqual(runtime.state("repeat").status, "active");
  deepStrictEqual(runtime.info("repeat").declined.map((d) => d.name), ["repeat"]);
  strictEqual(runtime.state("liar").status, "failed");
  deepStrictEqual(registries.tool.list(), []);
  await runtime.stop();
});

Deno.test("typed bundled tools: bad arguments give the same errors as before", async () => {
  await using tmp = await tempDir();
  const { runtime, registries } = await started(
    [
      createToolReadPlugin(),
      createToolEditPlugin(),
      createToolSearchPlugin({ engine: "builtin" }),
      createToolBashPlugin(),
      createToolPlanPlugin(),
    ],
    tmp.dir,
    { todos: createTodoService() },
  );
  const cases: readonly [string, unknown, string][] = [
    ["read", "", "path: required"],
    ["read", "null", "arguments: expected object, received null"],
    ["read", { path: 3 }, "path: expected string, received number"],
    ["read", { path: "a", extra: 1 }, "extra: not allowed here"],
    [
      "edit",
      { path: "a", old_string: 1, new_string: "b" },
      "old_string: expected string, received number",
    ],
    ["search", { pattern: "a", max_results: 0 }, "max_results: 0 is less than 1."],
    ["bash", { command: "" }, "command: String is too short (0 < 1)."],
    [
      "todowrite",
      { todos: [{ content: "", status: "x" }] },
      "todos.0.content: String is too short (0 < 1).; todos.0.status: Instance does not match " +
      'any of ["pending","in_progress","completed"].',
    ],
  ];
  for (const [name, input, error] of cases) {
    const result = await registries.tool.execute(name, input);
    deepStrictEqual(result, {
      ok: false,
      output: "",
      error: `invalid arguments for tool '${name}': ${error}`,
    }, `${name} ${JSON.stringify(input)}`);
  }
  const json = await registries.tool.execute("read", "{");
  ok(json.error?.startsWith("invalid arguments for tool 'read': not valid JSON: "), json.error);
  await runtime.stop();
});

Deno.test("process groups: one shared module, still exported from @amber/plugins", () => {
  strictEqual(plugins.startProcessGroup, processGroup.startProcessGroup);
  strictEqual(plugins.childEnvironment, processGroup.childEnvironment);
  strictEqual(plugins.redactSecrets, processGroup.redactSecrets);
  strictEqual(processGroup.STOP_GRACE_MS, 2000);
});
