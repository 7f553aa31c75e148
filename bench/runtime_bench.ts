// Enable + disable of 1,000 plugins with 8 contributions each (one of every kind), beside
// avvio booting and closing 1,000 plugins and hookable registering and removing 8,000 hooks.
// Run: deno task bench --filter lifecycle

import { CAPABILITY_KINDS } from "@amber/core";
import avvio from "avvio";
import { createHooks } from "hookable";
import { capabilityOf, makePlugin, makeRuntime } from "../tests/_helpers.ts";

const PLUGINS = 1_000;
// The eight harness kinds of seed 002, one contribution each.
const HARNESS_KINDS = CAPABILITY_KINDS.slice(0, 8);

const { runtime } = makeRuntime();
for (let i = 0; i < PLUGINS; i++) {
  runtime.register(
    makePlugin(`p${i}`, HARNESS_KINDS.map((kind) => capabilityOf(kind, `${i}`))),
  );
}

Deno.bench({
  name: "amber: enable + disable 1,000 plugins x 8 contributions",
  group: "lifecycle",
  baseline: true,
  async fn() {
    await runtime.start();
    await runtime.stop();
  },
});

Deno.bench({
  name: "avvio: boot + close 1,000 plugins",
  group: "lifecycle",
  async fn() {
    const app = avvio();
    for (let i = 0; i < PLUGINS; i++) {
      app.use((_instance: unknown, _options: unknown, done: () => void) => done());
    }
    await app.ready();
    await new Promise<void>((resolve) => app.close(() => resolve()));
  },
});

Deno.bench({
  name: "hookable: register + remove 8,000 hooks",
  group: "lifecycle",
  fn() {
    const hooks = createHooks<Record<string, () => void>>();
    const removers: (() => void)[] = [];
    for (let i = 0; i < PLUGINS * 8; i++) removers.push(hooks.hook(`hook${i % 64}`, () => {}));
    for (const remove of removers) remove();
  },
});
