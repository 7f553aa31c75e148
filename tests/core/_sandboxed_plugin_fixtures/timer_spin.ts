// A plugin that only renders, and starts spinning from a timer once it is active: no call of
// amber's ever waits on it, so only the liveness check can find it.
let spin = false;
setInterval(() => {
  if (spin) { for (;;) { /* never yields */ } }
}, 20);

export default {
  id: "timer_spin",
  version: "1.0.0",
  name: "Timer spin",
  bound: { prompts: { kind: "any" } },
  initialize: () => {
    spin = true;
    return true;
  },
  shutdown() {},
  capabilities: () => [{ kind: "prompt", name: "p", priority: 400, render: () => "hi" }],
};
