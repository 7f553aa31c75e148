// Status bar composition of 40 segments at width 120, and prompt assembly of 50 blocks.
// Run: deno task bench --filter render

import { emptyStatusSnapshot, type Message, type PluginServices } from "@amber/core";
import { createPromptRegistry, createStatusRegistry } from "@amber/registries";
import { EventBus } from "@amber/core";

const services: PluginServices = {
  owner: "bench",
  tools: { get: () => undefined, list: () => [] },
  events: new EventBus(),
  config: () => ({ plugins: {} }),
  host: {},
  workspace: { root: "/" },
};

const status = createStatusRegistry();
for (let i = 0; i < 40; i++) {
  status.install(`p${i}`, {
    kind: "status",
    name: `segment_${i}`,
    priority: (i * 37) % 100,
    dropPriority: i % 10,
    render: (s) => ({ text: i % 2 ? `${s.model}:${i}` : `seg ${i}`, tone: "dim" }),
  }, services);
}
const snapshot = { ...emptyStatusSnapshot(), model: "gpt-5" };

const prompts = createPromptRegistry();
for (let i = 0; i < 50; i++) {
  const text = `Block ${i}: ${"facts about the project ".repeat(8)}`;
  prompts.install(`p${i}`, {
    kind: "prompt",
    name: `block_${i}`,
    priority: 100 + i * 10,
    render: () => text,
  }, services);
}
const sealed: readonly Message[] = Object.freeze([
  Object.freeze({ role: "system", content: "You are amber." } as const),
  ...Array.from(
    { length: 20 },
    (_, i) =>
      Object.freeze({ role: i % 2 ? "assistant" : "user", content: `message ${i}` } as const),
  ),
]);

Deno.bench({
  name: "status compose: 40 segments, width 120",
  group: "render",
  fn() {
    status.compose(120, snapshot);
  },
});

Deno.bench({
  name: "prompt assemble: 50 blocks over 21 messages",
  group: "render",
  fn() {
    prompts.assemble(sealed);
  },
});
