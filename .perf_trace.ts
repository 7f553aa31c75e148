import { CAPABILITY_KINDS, type Plugin } from "@amber/core";
import { capabilityOf, makePlugin, makeRuntime } from "./tests/_helpers.ts";
const HARNESS_KINDS = CAPABILITY_KINDS.slice(0, 8);
const size = Number(Deno.args[0] ?? 1000);
const iters = Number(Deno.args[1] ?? 50);
const list: Plugin[] = Array.from({ length: size }, (_, i) =>
  makePlugin(`p${i}`, HARNESS_KINDS.map((kind) => capabilityOf(kind, `${i}`))));
const out: string[] = [];
for (let k = 0; k < iters; k++) {
  const t0 = performance.now();
  const { runtime } = makeRuntime();
  for (const plugin of list) runtime.register(plugin);
  const t1 = performance.now();
  await runtime.start();
  const t2 = performance.now();
  await runtime.stop();
  const t3 = performance.now();
  out.push(`${(t1 - t0).toFixed(1)}/${(t2 - t1).toFixed(1)}/${(t3 - t2).toFixed(1)}`);
}
console.log(out.join(" "));
