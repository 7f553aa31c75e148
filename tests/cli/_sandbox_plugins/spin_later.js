// Starts spinning a moment after it is switched on, from a timer: while it spins it never reads
// its stdin again, so it cannot see amber go.
export default {
  id: "spin_later",
  version: "1.0.0",
  name: "Spin later",
  initialize() {
    setTimeout(() => {
      for (;;) {
        // never yields
      }
    }, 300);
    return true;
  },
  shutdown() {},
  capabilities: () => [],
};
