// Publishing to one subscriber and to none, beside node:events, eventemitter3 and a plain call.
// Run: deno task bench --filter publish

import { EventBus } from "@amber/core";
import { EventEmitter as NodeEmitter } from "node:events";
import { EventEmitter as EventEmitter3 } from "eventemitter3";

const event = { cancelled: false };
let sink = 0;
const handler = (e: { cancelled: boolean }) => {
  if (!e.cancelled) sink++;
};

const one = new EventBus();
one.subscribe("turnEnded", handler);
const none = new EventBus();
const node = new NodeEmitter();
node.on("turnEnded", handler);
const nodeNone = new NodeEmitter();
const ee3 = new EventEmitter3();
ee3.on("turnEnded", handler);
const ee3None = new EventEmitter3();

const N = 1_000;

Deno.bench({
  name: "amber EventBus: publish x1000, 1 subscriber",
  group: "publish one",
  baseline: true,
  fn() {
    for (let i = 0; i < N; i++) one.publish("turnEnded", event);
  },
});
Deno.bench({
  name: "node:events: emit x1000, 1 listener",
  group: "publish one",
  fn() {
    for (let i = 0; i < N; i++) node.emit("turnEnded", event);
  },
});
Deno.bench({
  name: "eventemitter3: emit x1000, 1 listener",
  group: "publish one",
  fn() {
    for (let i = 0; i < N; i++) ee3.emit("turnEnded", event);
  },
});
Deno.bench({
  name: "plain call x1000",
  group: "publish one",
  fn() {
    for (let i = 0; i < N; i++) handler(event);
  },
});

Deno.bench({
  name: "amber EventBus: publish x1000, no subscribers",
  group: "publish none",
  baseline: true,
  fn() {
    for (let i = 0; i < N; i++) none.publish("turnEnded", event);
  },
});
Deno.bench({
  name: "node:events: emit x1000, no listeners",
  group: "publish none",
  fn() {
    for (let i = 0; i < N; i++) nodeNone.emit("turnEnded", event);
  },
});
Deno.bench({
  name: "eventemitter3: emit x1000, no listeners",
  group: "publish none",
  fn() {
    for (let i = 0; i < N; i++) ee3None.emit("turnEnded", event);
  },
});
Deno.bench({
  name: "empty function call x1000",
  group: "publish none",
  fn() {
    for (let i = 0; i < N; i++) noop(event);
  },
});

function noop(_e: unknown): void {}

addEventListener("unload", () => {
  if (sink < 0) console.log(sink);
});
