import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { Tool, ToolCapability, ToolResult } from "@amber/core";
import { createToolRegistry } from "@amber/registries/tools";
import { z } from "zod";
import { conflictOf, contributionOf, errorOf, services } from "./_fixtures.ts";

function tool(name: string, overrides: Partial<Tool> = {}): Tool {
  return {
    name,
    description: `the ${name} tool`,
    parameters: { type: "object", properties: {} },
    execute: () => ({ ok: true, output: name }),
    ...overrides,
  };
}

function capability(
  name: string,
  tools: ToolCapability["tools"],
): ToolCapability {
  return { kind: "tool", name, tools };
}

const greetSchema = {
  type: "object",
  properties: {
    name: { type: "string" },
    tags: { type: "array", items: { type: "string" } },
  },
  required: ["name"],
};

Deno.test("tools: an installed list is one contribution, listed in registration order", () => {
  const tools = createToolRegistry();
  const before = tools.version;
  const result = tools.install("a", capability("pair", [tool("one"), tool("two")]), services("a"));
  const handle = contributionOf(result);
  strictEqual(handle.kind, "tool");
  strictEqual(handle.name, "pair");
  deepStrictEqual(handle.ids, ["one", "two"]);
  ok(tools.version > before);
  deepStrictEqual(tools.entries(), [{ id: "one", owner: "a" }, { id: "two", owner: "a" }]);
  deepStrictEqual(tools.list().map((entry) => [entry.tool.name, entry.owner]), [
    ["one", "a"],
    ["two", "a"],
  ]);
  strictEqual(tools.get("two")?.owner, "a");
  strictEqual(tools.get("three"), undefined);
});

Deno.test("tools: a factory gets the services, and its tools are removed together", () => {
  const tools = createToolRegistry();
  let seen: string | undefined;
  const handle = contributionOf(
    tools.install(
      "a",
      capability("made", (svc) => {
        seen = svc.workspace.root;
        return [tool("x"), tool("y"), tool("z")];
      }),
      services("a"),
    ),
  );
  strictEqual(seen, "/tmp");
  strictEqual(tools.list().length, 3);
  const version = tools.version;
  handle.remove();
  strictEqual(tools.list().length, 0);
  deepStrictEqual(tools.entries(), []);
  ok(tools.version > version);
  const after = tools.version;
  handle.remove();
  strictEqual(tools.version, after, "a second remove changes nothing");
});

Deno.test("tools: an empty list declines and adds nothing", () => {
  const tools = createToolRegistry();
  const result = tools.install("a", capability("task", () => []), services("a"));
  strictEqual(result.status, "declined");
  if (result.status === "declined") match(result.reason, /factory returned no tools/);
  strictEqual(tools.list().length, 0);
});

Deno.test("tools: a throwing factory fails naming the capability and the cause", () => {
  const tools = createToolRegistry();
  const error = errorOf(
    tools.install(
      "a",
      capability("boom", () => {
        throw new Error("no host");
      }),
      services("a"),
    ),
  );
  match(error, /tool capability 'boom'/);
  match(error, /plugin 'a'/);
  match(error, /no host/);
});

Deno.test("tools: a bad name fails naming the tool, and nothing of the capability stays", () => {
  const tools = createToolRegistry();
  for (const name of ["x y", "", "a".repeat(65), "dot.ted"]) {
    const error = errorOf(
      tools.install("a", capability("bad", [tool("fine"), tool(name)]), services("a")),
    );
    ok(error.includes(`'${name}'`), error);
    match(error, /not valid/);
  }
  strictEqual(tools.get("fine"), undefined);
  strictEqual(tools.list().length, 0);
  strictEqual(
    tools.install("a", capability("ok", [tool("a".repeat(64)), tool("A-z_9")]), services("a"))
      .status,
    "installed",
  );
});

Deno.test("tools: a duplicate name fails naming both plugins, atomically", () => {
  const tools = createToolRegistry();
  contributionOf(tools.install("a", capability("greet", [tool("greet")]), services("a")));
  const version = tools.version;
  const result = tools.install(
    "b",
    capability("mine", [tool("other"), tool("greet")]),
    services("b"),
  );
  strictEqual(errorOf(result), "tool 'greet' from plugin 'b' collides with the tool of plugin 'a'");
  deepStrictEqual(conflictOf(result), { id: "greet", owner: "a" });
  strictEqual(tools.get("other"), undefined, "the first tool of the failed capability is gone");
  strictEqual(tools.get("greet")?.owner, "a");
  strictEqual(tools.version, version, "a failed install changes nothing");

  contributionOf(tools.install("core", capability("read", [tool("read")]), services("core")));
  const clash = tools.install("c", capability("read", [tool("read")]), services("c"));
  strictEqual(errorOf(clash), "tool 'read' from plugin 'c' collides with the tool of core");
  deepStrictEqual(conflictOf(clash), { id: "read", owner: "core" });
});

Deno.test("tools: a name listed twice in one factory fails", () => {
  const tools = createToolRegistry();
  const error = errorOf(
    tools.install("a", capability("twice", [tool("dup"), tool("dup")]), services("a")),
  );
  match(error, /tool 'dup' from plugin 'a' collides with the tool of plugin 'a'/);
  strictEqual(tools.list().length, 0);
});

Deno.test("tools: malformed tools fail with what is missing", () => {
  const tools = createToolRegistry();
  const noExecute = { name: "t", description: "d", parameters: {} } as unknown as Tool;
  match(errorOf(tools.install("a", capability("c", [noExecute]), services("a"))), /execute/);
  const noSchema = tool("t", { parameters: undefined as unknown as Tool["parameters"] });
  match(
    errorOf(tools.install("a", capability("c", [noSchema]), services("a"))),
    /tool 't' from plugin 'a' has no parameters schema/,
  );
  const notList = capability("c", (() => "nope") as unknown as ToolCapability["tools"]);
  match(errorOf(tools.install("a", notList, services("a"))), /must be an array/);
});

Deno.test("tools: only the owner can remove a tool", () => {
  const tools = createToolRegistry();
  contributionOf(tools.install("a", capability("greet", [tool("greet")]), services("a")));
  strictEqual(tools.remove("b", "greet"), false);
  strictEqual(tools.get("greet")?.owner, "a");
  strictEqual(tools.remove("a", "missing"), false);
  strictEqual(tools.remove("a", "greet"), true);
  strictEqual(tools.get("greet"), undefined);
});

Deno.test("tools: a stale handle never removes a later registration of the same name", () => {
  const tools = createToolRegistry();
  const first = contributionOf(tools.install("a", capability("g", [tool("greet")]), services("a")));
  strictEqual(tools.remove("a", "greet"), true);
  contributionOf(tools.install("b", capability("g", [tool("greet")]), services("b")));
  first.remove();
  strictEqual(tools.get("greet")?.owner, "b");
});

Deno.test("tools: purge removes what the owner still has and returns the ids", () => {
  const tools = createToolRegistry();
  contributionOf(tools.install("a", capability("one", [tool("a1"), tool("a2")]), services("a")));
  contributionOf(tools.install("b", capability("two", [tool("b1")]), services("b")));
  contributionOf(tools.install("a", capability("three", [tool("a3")]), services("a")));
  deepStrictEqual(tools.purge("a"), ["a1", "a2", "a3"]);
  deepStrictEqual(tools.entries(), [{ id: "b1", owner: "b" }]);
  deepStrictEqual(tools.purge("a"), []);
});

Deno.test("tools: definitions carry the raw JSON Schema", () => {
  const tools = createToolRegistry();
  contributionOf(
    tools.install(
      "a",
      capability("g", [tool("greet", { parameters: greetSchema })]),
      services("a"),
    ),
  );
  deepStrictEqual(tools.definitions(), [
    { name: "greet", description: "the greet tool", parameters: greetSchema },
  ]);
  strictEqual(tools.definitions(), tools.definitions(), "cached until the registry changes");
});

Deno.test("tools: a Standard Schema is converted once and validates itself", async () => {
  const tools = createToolRegistry();
  const zod = z.object({ name: z.string(), times: z.number().int().default(1) })["~standard"];
  let conversions = 0;
  const parameters = {
    "~standard": {
      version: zod.version,
      vendor: zod.vendor,
      validate: zod.validate,
      jsonSchema: {
        input: (options: { readonly target: string }) => {
          conversions++;
          strictEqual(options.target, "draft-2020-12");
          return zod.jsonSchema.input(options as Parameters<typeof zod.jsonSchema.input>[0]);
        },
      },
    },
  };
  let received: unknown;
  contributionOf(
    tools.install(
      "a",
      capability("g", [
        tool("greet", {
          parameters,
          execute: (args) => {
            received = args;
            return { ok: true, output: "done" };
          },
        }),
      ]),
      services("a"),
    ),
  );
  const schema = tools.definitions()[0].parameters;
  strictEqual(schema.$schema, undefined, "the dialect marker is dropped");
  strictEqual(schema.type, "object");
  deepStrictEqual(schema.required, ["name"]);
  strictEqual(tools.get("greet")?.schema, schema);
  strictEqual(conversions, 1);

  const okResult = await tools.execute("greet", { name: "amber" });
  strictEqual(okResult.ok, true);
  deepStrictEqual(received, { name: "amber", times: 1 }, "the tool gets the validated output");

  const bad = await tools.execute("greet", { name: 3 });
  strictEqual(bad.ok, false);
  match(bad.error ?? "", /invalid arguments for tool 'greet': name: .*expected string/);
  tools.definitions();
  strictEqual(conversions, 1, "converted at install, never again");
});

Deno.test("tools: a Standard Schema without a JSON Schema converter fails the install", () => {
  const tools = createToolRegistry();
  const parameters = {
    "~standard": {
      version: 1 as const,
      vendor: "bare",
      validate: (value: unknown) => ({ value }),
    },
  };
  const error = errorOf(
    tools.install("a", capability("g", [tool("greet", { parameters })]), services("a")),
  );
  match(error, /tool 'greet' from plugin 'a'/);
  match(error, /jsonSchema/);
  const throwing = {
    "~standard": {
      ...parameters["~standard"],
      jsonSchema: {
        input: () => {
          throw new Error("Date cannot be represented");
        },
      },
    },
  };
  match(
    errorOf(
      tools.install("a", capability("g", [tool("g2", { parameters: throwing })]), services("a")),
    ),
    /tool 'g2'.*Date cannot be represented/,
  );
  strictEqual(tools.list().length, 0);
});

Deno.test("tools: raw JSON Schema validation names the path and the problem", async () => {
  const tools = createToolRegistry();
  let calls = 0;
  contributionOf(
    tools.install(
      "a",
      capability("g", [
        tool("greet", {
          parameters: greetSchema,
          execute: () => {
            calls++;
            return { ok: true, output: "hi" };
          },
        }),
      ]),
      services("a"),
    ),
  );
  const wrongType = await tools.execute("greet", { name: 3 });
  strictEqual(wrongType.ok, false);
  match(wrongType.error ?? "", /name: expected string/);
  const missing = await tools.execute("greet", {});
  match(missing.error ?? "", /name: required/);
  const nested = await tools.execute("greet", { name: "x", tags: ["a", 2] });
  match(nested.error ?? "", /tags\.1: expected string/);
  strictEqual(calls, 0, "an invalid call never reaches the tool");
  strictEqual((await tools.execute("greet", { name: "x", tags: ["a"] })).ok, true);
  strictEqual(calls, 1);
});

Deno.test("tools: JSON-text arguments are parsed first; bad JSON is an error result", async () => {
  const tools = createToolRegistry();
  contributionOf(
    tools.install(
      "a",
      capability("g", [
        tool("greet", {
          parameters: greetSchema,
          execute: (args) => ({ ok: true, output: `Hello, ${(args as { name: string }).name}!` }),
        }),
        tool("noargs", { execute: (args) => ({ ok: true, output: JSON.stringify(args) }) }),
      ]),
      services("a"),
    ),
  );
  deepStrictEqual(await tools.execute("greet", '{"name":"amber"}'), {
    ok: true,
    output: "Hello, amber!",
  });
  const bad = await tools.execute("greet", '{"name":');
  strictEqual(bad.ok, false);
  match(bad.error ?? "", /tool 'greet'.*not valid JSON/);
  strictEqual((await tools.execute("noargs", "")).output, "{}");
});

Deno.test("tools: an unknown tool is an error result listing what exists", async () => {
  const tools = createToolRegistry();
  strictEqual(
    (await tools.execute("nope", {})).error,
    "unknown tool 'nope'; available tools: (none)",
  );
  contributionOf(tools.install("a", capability("g", [tool("read"), tool("write")]), services("a")));
  const result = await tools.execute("nope", {});
  strictEqual(result.ok, false);
  strictEqual(result.error, "unknown tool 'nope'; available tools: read, write");
});

Deno.test("tools: a throwing, rejecting or misbehaving tool becomes an error result", async () => {
  const tools = createToolRegistry();
  contributionOf(
    tools.install(
      "a",
      capability("g", [
        tool("throws", {
          execute: () => {
            throw new Error("disk full");
          },
        }),
        tool("rejects", { execute: () => Promise.reject(new Error("timeout")) }),
        tool("junk", { execute: () => "text" as unknown as ToolResult }),
        tool("fails", { execute: () => ({ ok: false, output: "", error: "not found" }) }),
      ]),
      services("a"),
    ),
  );
  deepStrictEqual(await tools.execute("throws", {}), {
    ok: false,
    output: "",
    error: "tool 'throws' failed: disk full",
  });
  strictEqual((await tools.execute("rejects", {})).error, "tool 'rejects' failed: timeout");
  const junk = await tools.execute("junk", {});
  strictEqual(junk.ok, false);
  match(junk.error ?? "", /tool 'junk' failed: .*ToolResult/);
  deepStrictEqual(await tools.execute("fails", {}), { ok: false, output: "", error: "not found" });
});

Deno.test("tools: the context defaults to a never-aborted signal", async () => {
  const tools = createToolRegistry();
  const signals: AbortSignal[] = [];
  contributionOf(
    tools.install(
      "a",
      capability("g", [
        tool("probe", {
          execute: (_args, context) => {
            signals.push(context.signal);
            return { ok: true, output: String(context.signal.aborted) };
          },
        }),
      ]),
      services("a"),
    ),
  );
  strictEqual((await tools.execute("probe", {})).output, "false");
  const controller = new AbortController();
  controller.abort();
  strictEqual((await tools.execute("probe", {}, { signal: controller.signal })).output, "true");
  strictEqual(signals[1], controller.signal);
});

Deno.test("tools: the JSON Schema validator is not imported statically", async () => {
  const source = await Deno.readTextFile(new URL("../../registries/tools.ts", import.meta.url));
  ok(!/^import [^;]*"@cfworker\/json-schema"/m.test(source), "kept off the start-up path");
});
