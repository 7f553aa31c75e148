import { EventBus, type PluginServices } from "@amber/core";
import { capabilityOf, makeRuntime } from "./tests/_helpers.ts";
const size = 1000;
const services: PluginServices = { owner: "x", tools: { get: () => undefined, list: () => [] }, events: new EventBus(), config: () => ({ plugins: {} }), host: {}, workspace: { root: "/tmp" } };
const kind = Deno.args[0] ?? "provider";
const caps = Array.from({ length: size }, (_, i) => capabilityOf(kind as any, `${i}`));
for (let k = 0; k < 300; k++) {
  const { registries } = makeRuntime();
  const reg = registries[kind as "provider"] as any;
  const handles = caps.map((c, i) => reg.install(`p${i}`, c, services).contribution);
  for (const h of handles) h.remove();
}
