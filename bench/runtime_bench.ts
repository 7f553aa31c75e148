// The plugin runtime beside its anchors (hookable, avvio) at 100, 1,000 and 10,000 plugins:
//   toggle one: switch one plugin off and on again with N installed (hookable: add and remove one
//     hook beside N);
//   toggle all: switch every plugin off, then every one on (amber start() + stop() and hookable
//     removing and adding 8N hooks beside it);
//   cycle: build the runtime, register N plugins x 8 contributions (one of each harness kind),
//     enable and disable them all (hookable: create, register and remove 8N hooks; avvio: boot and
//     close N plugins).
// The plugin definitions and hook handlers are made outside the timed part, for both sides.
// Run each case in its own process: deno run -A bench/separately.ts bench/runtime_bench.ts
// (or deno task bench --filter "N=1,000").

import { CAPABILITY_KINDS, type Plugin, type PluginRuntime } from "@amber/core";
import avvio from "avvio";
import { createHooks } from "hookable";
import { capabilityOf, makePlugin, makeRuntime } from "../tests/_helpers.ts";

const SIZES = [100, 1_000, 10_000];
// The eight harness kinds of seed 002, one contribution each.
const HARNESS_KINDS = CAPABILITY_KINDS.slice(0, 8);
// A case of 10,000 toggles or cycles takes long enough that a few rounds give a stable figure.
const ROUNDS = (size: number) => (size >= 10_000 ? { n: 3, warmup: 1 } : {});

function plugins(size: number): Plugin[] {
  return Array.from(
    { length: size },
    (_, i) => makePlugin(`p${i}`, HARNESS_KINDS.map((kind) => capabilityOf(kind, `${i}`))),
  );
}

async function started(size: number): Promise<PluginRuntime> {
  const { runtime } = makeRuntime();
  for (const plugin of plugins(size)) runtime.register(plugin);
  await runtime.start();
  return runtime;
}

function label(size: number): string {
  return `N=${size.toLocaleString("en-US")}`;
}

const noop = (): void => {};

for (const size of SIZES) {
  const n = label(size);
  let runtime: Promise<PluginRuntime> | undefined;
  const middle = `p${size >> 1}`;
  let beside: ReturnType<typeof createHooks<Record<string, () => void>>> | undefined;
  let filled = false;

  Deno.bench({
    name: `amber: toggle one plugin, ${n}`,
    group: `toggle one ${n}`,
    baseline: true,
    async fn(b) {
      const ready = await (runtime ??= started(size));
      b.start();
      await ready.setState(middle, false);
      await ready.setState(middle, true);
      b.end();
    },
  });

  Deno.bench({
    name: `hookable: add + remove one hook beside ${8 * size}, ${n}`,
    group: `toggle one ${n}`,
    fn(b) {
      const hooks = beside ??= createHooks<Record<string, () => void>>();
      if (!filled) {
        for (let i = 0; i < size * 8; i++) hooks.hook(`hook${i % 64}`, noop);
        filled = true;
      }
      b.start();
      const remove = hooks.hook("hook32", () => {});
      remove();
      b.end();
    },
  });

  Deno.bench({
    name: `amber: toggle all plugins off then on, ${n}`,
    group: `toggle all ${n}`,
    baseline: true,
    ...ROUNDS(size),
    async fn(b) {
      const ready = await (runtime ??= started(size));
      const ids = ready.ids();
      b.start();
      for (const id of ids) await ready.setState(id, false);
      for (const id of ids) await ready.setState(id, true);
      b.end();
    },
  });

  Deno.bench({
    name: `amber: stop() + start(), ${n}`,
    group: `toggle all ${n}`,
    ...ROUNDS(size),
    async fn(b) {
      const ready = await (runtime ??= started(size));
      b.start();
      await ready.stop();
      await ready.start();
      b.end();
    },
  });

  Deno.bench({
    name: `hookable: remove + add ${8 * size} hooks, ${n}`,
    group: `toggle all ${n}`,
    fn(b) {
      const hooks = createHooks<Record<string, () => void>>();
      const handlers = Array.from({ length: size * 8 }, () => () => {});
      let removers = handlers.map((handler, i) => hooks.hook(`hook${i % 64}`, handler));
      b.start();
      for (const remove of removers) remove();
      removers = handlers.map((handler, i) => hooks.hook(`hook${i % 64}`, handler));
      b.end();
    },
  });

  let definitions: Plugin[] | undefined;
  Deno.bench({
    name: `amber: build, register, enable + disable ${n} plugins x 8`,
    group: `cycle ${n}`,
    baseline: true,
    ...ROUNDS(size),
    async fn(b) {
      const list = definitions ??= plugins(size);
      b.start();
      const { runtime } = makeRuntime();
      for (const plugin of list) runtime.register(plugin);
      await runtime.start();
      await runtime.stop();
      b.end();
    },
  });

  Deno.bench({
    name: `hookable: create, register + remove ${8 * size} hooks, ${n}`,
    group: `cycle ${n}`,
    ...ROUNDS(size),
    fn(b) {
      const handlers = Array.from({ length: size * 8 }, () => () => {});
      b.start();
      const hooks = createHooks<Record<string, () => void>>();
      const removers: (() => void)[] = [];
      for (let i = 0; i < handlers.length; i++) {
        removers.push(hooks.hook(`hook${i % 64}`, handlers[i]));
      }
      for (const remove of removers) remove();
      b.end();
    },
  });

  Deno.bench({
    name: `avvio: boot + close ${n} plugins`,
    group: `cycle ${n}`,
    ...ROUNDS(size),
    async fn(b) {
      const handlers = Array.from(
        { length: size },
        () => (_instance: unknown, _options: unknown, done: () => void) => done(),
      );
      b.start();
      const app = avvio();
      for (const handler of handlers) app.use(handler);
      await app.ready();
      await new Promise<void>((resolve) => app.close(() => resolve()));
      b.end();
    },
  });
}
