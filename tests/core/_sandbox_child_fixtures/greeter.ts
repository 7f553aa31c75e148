// A plugin as a third party writes one, for the real-process test of the plugin process: it
// imports nothing of amber at run time, prints with console.log (which must not reach stdout)
// and greets through a tool.

export default {
  id: "greeter",
  version: "1.0.0",
  name: "Greeter",
  permissions: { read: ["notes"] },
  initialize: () => {
    console.log("greeter starting");
    return true;
  },
  shutdown: () => {},
  capabilities: () => [{
    kind: "tool",
    name: "greet",
    tools: [{
      name: "greet",
      description: "Greets someone by name.",
      parameters: { type: "object", properties: { name: { type: "string" } } },
      execute: (args: { name: string }) => ({ ok: true, output: `Hello, ${args.name}!` }),
    }],
  }],
};
