// Status bar composition of 40 segments at width 120, and prompt assembly of 50 blocks.
// Run: deno task bench --filter render

import { emptyStatusSnapshot, type Message } from "@amber/core";
import { createPromptRegistry, createStatusRegistry } from "@amber/registries";
import { BENCH_SERVICES, installSegments } from "./_status_segments.ts";

const status = createStatusRegistry();
installSegments(status);
const snapshot = { ...emptyStatusSnapshot(), model: "gpt-5" };

const prompts = createPromptRegistry();
for (let i = 0; i < 50; i++) {
  const text = `Block ${i}: ${"facts about the project ".repeat(8)}`;
  prompts.install(`p${i}`, {
    kind: "prompt",
    name: `block_${i}`,
    priority: 100 + i * 10,
    render: () => text,
  }, BENCH_SERVICES);
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
