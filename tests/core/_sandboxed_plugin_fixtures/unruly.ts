// A third-party plugin for the real-process test of the stand-in plugin: a tool that answers,
// one that reports progress, one that spins forever and one that ends its own process. It
// imports nothing of amber, as a plugin from npm need not.

export default {
  id: "unruly",
  version: "1.0.0",
  name: "Unruly",
  bound: { tools: { kind: "any" }, prompts: { kind: "any" } },
  initialize: () => {
    // stdout is the protocol: this must reach the host's log, not break the conversation.
    console.log("unruly starting");
    return true;
  },
  shutdown: () => {},
  capabilities: () => [
    { kind: "prompt", name: "unruly_prompt", priority: 400, render: () => "Be unruly." },
    {
      kind: "tool",
      name: "unruly_tools",
      tools: [
        {
          name: "shout",
          description: "Shouts its text.",
          parameters: { type: "object", properties: { text: { type: "string" } } },
          execute: (args: { text: string }, call: { progress?: (m: string) => void }) => {
            call.progress?.("inhaling");
            return { ok: true, output: args.text.toUpperCase() };
          },
        },
        {
          name: "spin",
          description: "Never returns.",
          parameters: { type: "object" },
          execute: () => {
            while (true) {
              // A spin loop: no await, so only a kill ends it.
            }
          },
        },
        {
          name: "quit",
          description: "Ends its own process.",
          parameters: { type: "object" },
          execute: () => Deno.exit(3),
        },
      ],
    },
  ],
};
