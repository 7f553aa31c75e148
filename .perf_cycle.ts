import { CAPABILITY_KINDS, type Plugin } from "@amber/core";
import { capabilityOf, makePlugin, makeRuntime } from "./tests/_helpers.ts";
const HARNESS_KINDS = CAPABILITY_KINDS.slice(0, 8);
const size = Number(Deno.args[0] ?? 1000);
const iters = Number(Deno.args[1] ?? 50);
const list: Plugin[] = Array.from({ length: size }, (_, i) =>
  makePlugin(`p${i}`, HARNESS_KINDS.map((kind) => capabilityOf(kind, `${i}`))));
const times: number[] = [];
for (let k = 0; k < iters; k++) {
  const t = performance.now();
  const { runtime } = makeRuntime();
  for (const plugin of list) runtime.register(plugin);
  await runtime.start();
  await runtime.stop();
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
console.log(`N=${size} median ${times[times.length >> 1].toFixed(2)} ms min ${times[0].toFixed(2)}`);
