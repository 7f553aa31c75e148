// A plugin that leaves faults unhandled (a rejected promise no one awaits, a throw in a timer)
// and keeps a timer alive: its process must log the faults, go on serving, and still exit when
// the host says shutdown.

let timer: ReturnType<typeof setInterval> | undefined;

export default {
  id: "careless",
  version: "1.0.0",
  name: "Careless",
  initialize: () => {
    timer = setInterval(() => {}, 60_000);
    return true;
  },
  shutdown: () => {},
  capabilities: () => [{
    kind: "tool",
    name: "careless",
    tools: [{
      name: "careless",
      description: "Forgets a promise and a timer's throw.",
      parameters: { type: "object" },
      execute: () => {
        Promise.reject(new Error("forgotten promise"));
        setTimeout(() => {
          throw new Error("timer throw");
        }, 0);
        return { ok: true, output: `timer ${timer === undefined ? "off" : "on"}` };
      },
    }],
  }],
};
