// The read-only forms the host hands plugins data in: readOnlyView (cached by identity),
// ephemeralView (for one delivery), sealedCopy (small records) and deepFreeze.

import assert from "node:assert/strict";
import {
  deepFreeze,
  ephemeralView,
  EventBus,
  readOnlyView,
  ReadOnlyViewError,
  sealedCopy,
} from "@amber/core";

// deno-lint-ignore no-explicit-any
type Loose = any;

Deno.test("readOnlyView: arrays, nesting, prototypes and built-ins", () => {
  class Point {
    constructor(public x: number) {}
    get double(): number {
      return this.x * 2;
    }
  }
  const value = {
    list: [1, { deep: true }],
    point: new Point(2),
    map: new Map([["a", 1]]),
    when: new Date(0),
  };
  const view = readOnlyView(value);
  assert.ok(Array.isArray(view.list));
  assert.equal(view.list.length, 2);
  assert.deepEqual(view.list.map((item) => typeof item), ["number", "object"]);
  assert.ok(view.point instanceof Point);
  assert.equal(view.point.double, 4);
  assert.equal(view.map.get("a"), 1);
  view.map.set("a", 2);
  assert.equal(value.map.get("a"), 1);
  assert.equal(view.when.getTime(), 0);
  assert.throws(() => (view.list as Loose).push(3), ReadOnlyViewError);
  assert.throws(() => ((view.list[1] as Loose).deep = false), ReadOnlyViewError);
  assert.throws(() => (view.point.x = 3), ReadOnlyViewError);
  assert.throws(() => Object.freeze(view), ReadOnlyViewError);
  assert.equal(JSON.stringify(view.list), '[1,{"deep":true}]');
  assert.equal(readOnlyView(view), view);
  assert.equal(readOnlyView(3), 3);
  const bus = new EventBus();
  assert.equal(readOnlyView(bus.has.bind(bus))("turnEnded"), false);
});

Deno.test("sealedCopy and ephemeralView: frozen records, uncached views", () => {
  const record = { name: "bash", args: { command: "ls" }, none: [] as string[] };
  const sealed = sealedCopy(record);
  assert.ok(Object.isFrozen(sealed));
  assert.throws(() => ((sealed as Loose).name = "rm"), TypeError);
  assert.throws(() => sealed.none.push("x"), TypeError);
  assert.throws(() => ((sealed.args as Loose).command = "rm"), ReadOnlyViewError);
  assert.deepEqual(record, { name: "bash", args: { command: "ls" }, none: [] });
  assert.notEqual(ephemeralView(record), ephemeralView(record));
  const view = ephemeralView(record);
  assert.equal(view.args, view.args);
  record.args = { command: "pwd" };
  assert.equal(view.args.command, "pwd");
  assert.equal(deepFreeze(record), record);
  assert.ok(Object.isFrozen(record.args));
});
