// A well-behaved sandboxed plugin: its tool answers, with the pid of the process it runs in.
import { says } from "./_good_words.js";

export default (api) => ({
  id: "good",
  version: "1.0.0",
  name: "Good",
  bound: { tools: api.exact("good_echo") },
  initialize: () => true,
  shutdown() {},
  capabilities: () => [{
    kind: "tool",
    name: "good_echo",
    tools: [{
      name: "good_echo",
      description: "Says the text back.",
      parameters: {
        type: "object",
        properties: { text: { type: "string" } },
        required: ["text"],
      },
      readOnly: true,
      execute: (args) => ({ ok: true, output: `${says(args.text)} (pid ${Deno.pid})` }),
    }],
  }],
});
