import { CAPABILITY_KINDS, EventBus, type PluginServices } from "@amber/core";
import { capabilityOf, makeRuntime } from "./tests/_helpers.ts";
const size = 1000;
const services: PluginServices = { owner: "x", tools: { get: () => undefined, list: () => [] }, events: new EventBus(), config: () => ({ plugins: {} }), host: {}, workspace: { root: "/tmp" } };
const used = () => Deno.memoryUsage().heapUsed;
for (const kind of CAPABILITY_KINDS.slice(0, 8)) {
  const caps = Array.from({ length: size }, (_, i) => capabilityOf(kind, `${i}`));
  let line = `${kind.padEnd(10)}`;
  for (let k = 0; k < 8; k++) {
    const { registries } = makeRuntime();
    const reg = registries[kind] as any;
    (globalThis as any).gc();
    const a = used();
    const t0 = performance.now();
    const handles = caps.map((c, i) => reg.install(`p${i}`, c, services).contribution);
    const b = used();
    const t1 = performance.now();
    for (const h of handles) h.remove();
    const t2 = performance.now();
    if (k >= 5) line += `  ${((b - a) / size) | 0}B ${(1000 * (t1 - t0) / size).toFixed(2)}µs/${(1000 * (t2 - t1) / size).toFixed(2)}µs`;
  }
  console.log(line);
}
