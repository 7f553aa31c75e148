import { CAPABILITY_KINDS, type Plugin } from "@amber/core";
import { capabilityOf, makePlugin, makeRuntime } from "./tests/_helpers.ts";
const HARNESS_KINDS = CAPABILITY_KINDS.slice(0, 8);
const size = Number(Deno.args[0] ?? 1000);
const list: Plugin[] = Array.from({ length: size }, (_, i) =>
  makePlugin(`p${i}`, HARNESS_KINDS.map((kind) => capabilityOf(kind, `${i}`))));
const used = () => Deno.memoryUsage().heapUsed;
for (let k = 0; k < 6; k++) {
  (globalThis as any).gc();
  const a = used();
  const { runtime } = makeRuntime();
  for (const plugin of list) runtime.register(plugin);
  const b = used();
  await runtime.start();
  const c = used();
  await runtime.stop();
  const d = used();
  console.log(`register ${((b - a) / size) | 0} B/plugin, start ${((c - b) / size) | 0}, stop ${((d - c) / size) | 0}`);
}
