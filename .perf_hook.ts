import { createHooks } from "hookable";
const size = Number(Deno.args[0] ?? 1000);
const iters = Number(Deno.args[1] ?? 50);
const times: number[] = [];
for (let k = 0; k < iters; k++) {
  const handlers = Array.from({ length: size * 8 }, () => () => {});
  const t = performance.now();
  const hooks = createHooks<Record<string, () => void>>();
  const removers: (() => void)[] = [];
  for (let i = 0; i < handlers.length; i++) removers.push(hooks.hook(`hook${i % 64}`, handlers[i]));
  for (const remove of removers) remove();
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
console.log(`hookable N=${size} median ${times[times.length >> 1].toFixed(2)} ms min ${times[0].toFixed(2)}`);
