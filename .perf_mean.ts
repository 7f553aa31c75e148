import { CAPABILITY_KINDS, type Plugin } from "@amber/core";
import { capabilityOf, makePlugin, makeRuntime } from "./tests/_helpers.ts";
const HARNESS_KINDS = CAPABILITY_KINDS.slice(0, 8);
const size = Number(Deno.args[0] ?? 1000);
const iters = Number(Deno.args[1] ?? 30);
const list: Plugin[] = Array.from({ length: size }, (_, i) =>
  makePlugin(`p${i}`, HARNESS_KINDS.map((kind) => capabilityOf(kind, `${i}`))));
let sum = 0, n = 0;
for (let k = 0; k < iters; k++) {
  const t = performance.now();
  const { runtime } = makeRuntime();
  for (const plugin of list) runtime.register(plugin);
  await runtime.start();
  await runtime.stop();
  if (k >= 3) { sum += performance.now() - t; n++; }
}
console.log((sum / n).toFixed(2));
