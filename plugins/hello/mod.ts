/**
 * The worked example of a plugin: a `greet` tool and the `/hello greet <name>` command. The
 * greeting comes from the plugin's section of config.yaml (`plugins.hello.greeting`), read at
 * the moment it is used, so a config the host attaches later is seen.
 *
 * @module
 */

import type { Plugin, PluginContext, Tool } from "@amber/core";
import { PluginCategory } from "@amber/core";

/**
 * Creates the hello plugin.
 *
 * @example
 * ```ts
 * import { createHelloPlugin } from "@amber/plugins/hello";
 * const hello = createHelloPlugin();
 * console.log(hello.id, hello.capabilities().map((c) => c.kind)); // hello [ "tool", "command" ]
 * ```
 */
export function createHelloPlugin(): Plugin {
  let context: PluginContext | undefined;

  const greeting = (): string => {
    const section = context?.section() as { greeting?: unknown } | undefined;
    return typeof section?.greeting === "string" ? section.greeting : "Hello";
  };
  const greet = (name: string): string => `${greeting()}, ${name.trim() || "world"}!`;

  const greetTool: Tool = {
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
    summarize: (args) => `greet ${(args as { name: string }).name}`,
    execute: (args) => ({ ok: true, output: greet((args as { name: string }).name) }),
  };

  return {
    id: "hello",
    version: "0.1.0",
    name: "Hello",
    description: "The worked example: a greet tool and the /hello command.",
    category: PluginCategory.Other,
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
