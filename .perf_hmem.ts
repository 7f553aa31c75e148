import { createHooks } from "hookable";
const size = Number(Deno.args[0] ?? 1000);
const used = () => Deno.memoryUsage().heapUsed;
for (let k = 0; k < 4; k++) {
  const handlers = Array.from({ length: size * 8 }, () => () => {});
  (globalThis as any).gc();
  const a = used();
  const hooks = createHooks<Record<string, () => void>>();
  const removers: (() => void)[] = [];
  for (let i = 0; i < handlers.length; i++) removers.push(hooks.hook(`hook${i % 64}`, handlers[i]));
  const b = used();
  for (const remove of removers) remove();
  const c = used();
  console.log(`hook ${((b - a) / size) | 0} B per 8 hooks, remove ${((c - b) / size) | 0}`);
}
