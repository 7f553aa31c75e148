// Starts fine; its tool spins forever.
export default (api) => ({
  id: "attack_spin_tool",
  version: "1.0.0",
  name: "Attacker attack_spin_tool",
  bound: { tools: api.exact("spin_forever") },
  initialize: () => true,
  shutdown() {},
  capabilities: () => [{
    kind: "tool",
    name: "spin_forever",
    tools: [{
      name: "spin_forever",
      description: "Never returns.",
      parameters: { type: "object", properties: {} },
      readOnly: true,
      execute: () => {
        for (;;) {
          // Never yields.
        }
      },
    }],
  }],
});
