// A plugin module for tests/core/testing_sandbox_test.ts, run both in the test's process and in a
// plugin process: a tool that says which process it runs in, one that reads the file it asks
// permission for, one that ends its process, a command echoing its config section, a prompt
// block, a status segment and a panel.

import { exact, type Plugin, type PluginContext } from "@amber/core";

let context: PluginContext | undefined;

const plugin: Plugin = {
  id: "widget",
  version: "1.0.0",
  name: "Widget",
  permissions: { read: ["notes.txt"] },
  bound: {
    tools: exact("whereami", "read_note", "exit"),
    commands: exact("widget"),
    prompts: exact("widget_style"),
    segments: exact("widget"),
    panels: exact("widget"),
  },
  initialize(ctx) {
    context = ctx;
    return true;
  },
  shutdown() {},
  capabilities: () => [
    {
      kind: "tool",
      name: "widget_tools",
      tools: [
        {
          name: "whereami",
          description: "The process id the plugin runs in.",
          parameters: { type: "object" },
          execute: () => ({ ok: true, output: String(Deno.pid) }),
        },
        {
          name: "read_note",
          description: "Reads notes.txt in the workspace.",
          parameters: { type: "object" },
          execute: async () => ({
            ok: true,
            output: await Deno.readTextFile(`${context!.workspace.root}/notes.txt`),
          }),
        },
        {
          name: "exit",
          description: "Ends the process it runs in.",
          parameters: { type: "object" },
          execute: () => Deno.exit(3),
        },
      ],
    },
    {
      kind: "command",
      name: "widget_command",
      root: "widget",
      help: "Widget",
      subtree: { section: { help: "Its config section" } },
      handlers: { section: () => JSON.stringify(context!.section()) },
    },
    { kind: "prompt", name: "widget_style", priority: 400, render: () => "Be a widget." },
    {
      kind: "status",
      name: "widget",
      priority: 500,
      dropPriority: 10,
      render: (snapshot) => ({ text: `model=${snapshot.model || "-"}`, tone: "dim" }),
    },
    {
      kind: "panel",
      name: "widget_panel",
      id: "widget",
      title: "Widget",
      lines: (width) => [`w=${width}`],
    },
  ],
};

export default plugin;
