/**
 * The worked example of a plugin: a `greet` tool and the `/hello greet <name>` command. The
 * greeting comes from the plugin's section of config.yaml (`plugins.hello.greeting`), read at
 * the moment it is used, so a config the host attaches later is seen.
 *
 * It is off until switched on (`amber plugins enable hello`, `/set plugin on hello`): a tool
 * that only says hello has no place in what a real model is offered, and every tool's schema
 * costs prompt tokens. `amber demo` switches it on in its own config directory.
 *
 * @module
 */

import type { Plugin, PluginContext, StandardJsonSchema, StandardResult } from "@amber/core";
import { defineTool, exact, PluginCategory } from "@amber/core";

/** The hello plugin's section of config.yaml. */
export interface HelloConfig {
  /** The word before the name; "Hello" by default. */
  readonly greeting: string;
}

// A Standard Schema written out by hand: the bundled plugins stay off zod so that `amber`
// starts without loading it. A third-party plugin would simply pass a zod schema.
const helloConfig: StandardJsonSchema = {
  "~standard": {
    version: 1,
    vendor: "amber",
    validate(value: unknown): StandardResult {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return { issues: [{ message: `expected object, received ${kindOf(value)}`, path: [] }] };
      }
      const { greeting = "Hello", ...rest } = value as { greeting?: unknown };
      const unknown = Object.keys(rest);
      if (unknown.length > 0) {
        return { issues: [{ message: `unknown key (known: greeting)`, path: [unknown[0]] }] };
      }
      if (typeof greeting !== "string") {
        return {
          issues: [{
            message: `expected string, received ${kindOf(greeting)}`,
            path: ["greeting"],
          }],
        };
      }
      return { value: { greeting } satisfies HelloConfig };
    },
    jsonSchema: {
      input: () => ({
        type: "object",
        properties: { greeting: { type: "string", default: "Hello" } },
        additionalProperties: false,
      }),
    },
  },
};

function kindOf(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

/**
 * Creates the hello plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHelloPlugin } from "@amber/plugins/hello";
 * const hello = createHelloPlugin();
 * assert.equal(hello.id, "hello");
 * assert.equal(hello.enabledByDefault, false, "off until switched on");
 * assert.deepEqual(hello.capabilities().map((c) => c.kind), ["tool", "command"]);
 * ```
 */
export function createHelloPlugin(): Plugin {
  let context: PluginContext | undefined;

  const greeting = (): string =>
    (context?.section() as HelloConfig | undefined)?.greeting ?? "Hello";
  const greet = (name: string): string => `${greeting()}, ${name.trim() || "world"}!`;

  const greetTool = defineTool({
    name: "greet",
    description: "Greet someone by name.",
    parameters: {
      type: "object",
      properties: { name: { type: "string", description: "Who to greet." } },
      required: ["name"],
      additionalProperties: false,
    },
    verb: "greeting",
    readOnly: true,
    summarize: (args) => `greet ${String(args.name)}`,
    execute: (args) => ({ ok: true, output: greet(args.name) }),
  });

  return {
    id: "hello",
    version: "0.1.0",
    name: "Hello",
    description: "The worked example: a greet tool and the /hello command.",
    category: PluginCategory.Other,
    enabledByDefault: false,
    bound: { tools: exact("greet"), commands: exact("hello") },
    config: helloConfig,
    initialize(ctx) {
      context = ctx;
      return true;
    },
    shutdown() {
      context = undefined;
    },
    capabilities: () => [
      { kind: "tool", name: "greet", tools: [greetTool] },
      {
        kind: "command",
        name: "hello",
        root: "hello",
        help: "Say hello",
        man: "Usage: /hello greet <name>",
        subtree: { greet: { help: "Greet someone by name" } },
        handlers: { greet: (arg) => greet(arg) },
      },
    ],
  };
}
