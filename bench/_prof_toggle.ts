const ROUNDS = Number(Deno.args[1] ?? 2000);
import { CAPABILITY_KINDS } from "@amber/core";
import { capabilityOf, makePlugin, makeRuntime } from "../tests/_helpers.ts";
const N = Number(Deno.args[0] ?? 10000);
const K = CAPABILITY_KINDS.slice(0, 8);
const { runtime } = makeRuntime();
for (let i = 0; i < N; i++) runtime.register(makePlugin(`p${i}`, K.map((k) => capabilityOf(k, `${i}`))));
await runtime.start();
const t0 = performance.now();
for (let r = 0; r < ROUNDS; r++) { await runtime.setState("p5", false); await runtime.setState("p5", true); }
console.log("toggle one", ((performance.now() - t0) / ROUNDS * 1000).toFixed(1), "µs");
