// A third-party plugin for the real-process test of streamed tool output: a tool that prints
// three lines with pauses, and one that floods. It imports nothing of amber, as a plugin from
// npm need not.

type Call = { output?: (chunk: string) => void; progress?: (message: string) => void };

export default {
  id: "streamer",
  version: "1.0.0",
  name: "Streamer",
  bound: { tools: { kind: "any" } },
  initialize: () => true,
  shutdown: () => {},
  capabilities: () => [{
    kind: "tool",
    name: "streamer_tools",
    tools: [
      {
        name: "count",
        description: "Counts to three, slowly.",
        parameters: { type: "object" },
        execute: async (_: unknown, call: Call) => {
          for (const n of [1, 2, 3]) {
            call.output?.(`line ${n}\n`);
            await new Promise((resolve) => setTimeout(resolve, 30));
          }
          return { ok: true, output: "counted" };
        },
      },
      {
        name: "flood",
        description: "Streams 4 MB in 64 KB chunks.",
        parameters: { type: "object" },
        execute: (_: unknown, call: Call) => {
          const block = "z".repeat(64 * 1024);
          for (let i = 0; i < 64; i++) call.output?.(block);
          return { ok: true, output: "flooded" };
        },
      },
    ],
  }],
};
