import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { EventBus } from "@amber/core";

Deno.test("publishing with no subscribers delivers nothing and reports no cancel", () => {
  const bus = new EventBus();
  strictEqual(bus.has("turnStarted"), false);
  strictEqual(bus.publish("turnStarted", { prompt: "hi" }), true);
});

Deno.test("interceptors run before observers, newest first; false cancels", () => {
  const errors: unknown[] = [];
  const bus = new EventBus((error) => errors.push(error));
  const order: string[] = [];
  bus.subscribe("toolRequested", () => order.push("observer1"));
  bus.intercept("toolRequested", () => {
    order.push("interceptor-old");
  });
  bus.intercept("toolRequested", (event) => {
    order.push("interceptor-new");
    return event.name !== "rm";
  });
  bus.subscribe("toolRequested", () => order.push("observer2"));
  strictEqual(bus.publish("toolRequested", { callId: "1", name: "ls", args: {} }), true);
  deepStrictEqual(order, ["interceptor-new", "interceptor-old", "observer1", "observer2"]);
  order.length = 0;
  strictEqual(bus.publish("toolRequested", { callId: "2", name: "rm", args: {} }), false);
  deepStrictEqual(order, ["interceptor-new"]);
  deepStrictEqual(errors, []);
});

Deno.test("a throwing handler is contained, reported, and delivery goes on", () => {
  const errors: [unknown, string][] = [];
  const bus = new EventBus((error, type) => errors.push([error, type]));
  const seen: number[] = [];
  bus.subscribe("turnEnded", () => seen.push(1));
  bus.subscribe("turnEnded", () => {
    throw new Error("handler broke");
  });
  bus.subscribe("turnEnded", () => seen.push(3));
  bus.publish("turnEnded", { cancelled: false });
  deepStrictEqual(seen, [1, 3]);
  strictEqual(errors.length, 1);
  strictEqual((errors[0][0] as Error).message, "handler broke");
  strictEqual(errors[0][1], "turnEnded");
});

Deno.test("unsubscribe is idempotent and leaves the others; the last one empties the type", () => {
  const bus = new EventBus();
  const seen: string[] = [];
  const a = bus.subscribe("turnStarted", () => seen.push("a"));
  const b = bus.subscribe("turnStarted", () => seen.push("b"));
  a.unsubscribe();
  a.unsubscribe();
  bus.publish("turnStarted", { prompt: "" });
  deepStrictEqual(seen, ["b"]);
  b.unsubscribe();
  strictEqual(bus.has("turnStarted"), false);
  strictEqual(bus.count("turnStarted"), 0);
});

Deno.test("a handler that unsubscribes during delivery does not skip the next one", () => {
  const bus = new EventBus();
  const seen: string[] = [];
  const first = bus.subscribe("turnStarted", () => {
    seen.push("first");
    first.unsubscribe();
  });
  bus.subscribe("turnStarted", () => seen.push("second"));
  bus.publish("turnStarted", { prompt: "" });
  bus.publish("turnStarted", { prompt: "" });
  deepStrictEqual(seen, ["first", "second", "second"]);
});
