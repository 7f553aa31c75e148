// Two plugins for tests of the `/plugins` console: `base`, and `app` that requires it, each
// contributing one tool and one command. Their category sorts after every bundled one, so ↑
// from nothing selects app, and ↑ again base.

import { any, type Plugin } from "@amber/core";

/** `base` and `app` (which requires base), named in capitals (`BASE`, `APP`). */
export function baseAndApp(): Plugin[] {
  const plugin = (id: string, requires?: Record<string, string>): Plugin => ({
    id,
    version: "1.0.0",
    name: id.toUpperCase(),
    category: "zz_console",
    requires,
    bound: { tools: any(), commands: any() },
    initialize: () => true,
    shutdown: () => {},
    capabilities: () => [
      {
        kind: "tool",
        name: `${id}_tools`,
        tools: [{
          name: `${id}_tool`,
          description: id,
          parameters: { type: "object", properties: {} },
          execute: () => ({ ok: true, output: id }),
        }],
      },
      {
        kind: "command",
        name: `${id}_cmd`,
        root: `${id}_root`,
        help: id,
        subtree: {},
        handlers: { "": () => id },
      },
    ],
  });
  return [plugin("base"), plugin("app", { base: "*" })];
}
