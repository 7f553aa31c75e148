// A plugin that tries to outlive amber: it replaces Deno.exit and keeps a timer running.
Deno.exit = (() => {}) as typeof Deno.exit;
setInterval(() => {}, 1_000);

export default {
  id: "stubborn",
  version: "1.0.0",
  name: "Stubborn",
  initialize: () => true,
  shutdown() {},
  capabilities: () => [],
};
