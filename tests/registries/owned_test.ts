// The owned map every registry keeps its entries in: removals mark nodes dead instead of
// deleting keys, several-entry installs share one handle, and the ordered views stay in
// registration order through removals, re-adds and rebuilds.

import assert from "node:assert/strict";
import { OwnedMap } from "../../registries/_owned.ts";

Deno.test("owned map: a removed id is gone for every read, and can be added again", () => {
  const map = new OwnedMap<number>();
  const first = map.install("a", "p", 1, "tool", "a")!;
  map.add("b", "p", 2);
  first.remove();
  assert.equal(map.get("a"), undefined);
  assert.equal(map.has("a"), false);
  assert.equal(map.size, 1);
  assert.deepEqual(map.entries(), [{ id: "b", owner: "p" }]);
  assert.equal(map.delete("a"), false, "nothing live to delete");
  const again = map.add("a", "q", 3);
  assert.equal(map.get("a"), again);
  assert.equal(map.get("a")?.value, 3);
  // Added after b, so listed after b, although its key sits before b's in the Map.
  assert.deepEqual(map.entries(), [{ id: "b", owner: "p" }, { id: "a", owner: "q" }]);
});

Deno.test("owned map: a stale handle never removes a later registration of the same id", () => {
  const map = new OwnedMap<number>();
  const removed: number[] = [];
  const tracked = new OwnedMap<number>((record) => removed.push(record.value));
  for (const target of [map, tracked]) {
    const old = target.install("a", "p", 1, "tool", "a")!;
    old.remove();
    target.install("a", "p", 2, "tool", "a");
    old.remove();
    assert.equal(target.get("a")?.value, 2);
    assert.equal(target.delete("a", "someone else"), false);
    assert.equal(target.get("a")?.value, 2);
  }
  assert.deepEqual(removed, [1]);
});

Deno.test("owned map: installAll adds all or nothing and removes them once", () => {
  const removed: string[] = [];
  const map = new OwnedMap<number>((record) => removed.push(record.id));
  map.add("taken", "core", 0);
  const before = map.version;
  assert.equal(map.installAll(["x", "taken"], "p", [1, 2], "provider", "prov"), undefined);
  assert.equal(map.get("x"), undefined, "the first id is taken back");
  assert.deepEqual(removed, [], "a taken-back add is no removal");
  assert.deepEqual(map.entries(), [{ id: "taken", owner: "core" }]);
  assert.notEqual(map.version, before);

  const handle = map.installAll(["x", "y"], "p", [1, 2], "provider", "prov")!;
  assert.deepEqual([handle.kind, handle.name, handle.ids], ["provider", "prov", ["x", "y"]]);
  assert.deepEqual([map.get("x")?.value, map.get("y")?.value], [1, 2]);
  handle.remove();
  handle.remove();
  assert.deepEqual(removed, ["x", "y"]);
  assert.equal(map.size, 1);
});

Deno.test("owned map: rebuilt when the dead outnumber the live, lookups and order intact", () => {
  const map = new OwnedMap<number>();
  const handles = [];
  for (let i = 0; i < 3_000; i++) handles.push(map.install(`k${i}`, "p", i, "tool", `k${i}`)!);
  // Remove all but every hundredth, going well past the rebuild threshold.
  for (let i = 0; i < 3_000; i++) if (i % 100 !== 0) handles[i].remove();
  assert.equal(map.size, 30);
  assert.deepEqual(
    map.records().map((record) => record.value),
    [...Array(30).keys()].map((i) => i * 100),
  );
  assert.equal(map.get("k1"), undefined);
  assert.equal(map.get("k200")?.value, 200);
  // Handles of entries that survived the rebuild still remove exactly their entry.
  handles[200].remove();
  assert.equal(map.get("k200"), undefined);
  assert.equal(map.size, 29);
  // A handle removed before the rebuild stays inert after it.
  map.add("k1", "q", -1);
  handles[1].remove();
  assert.equal(map.get("k1")?.value, -1);
  assert.deepEqual(map.purge("q"), ["k1"]);
  assert.equal(map.size, 29);
});

Deno.test("owned map: emptying it entirely starts afresh", () => {
  const map = new OwnedMap<string>();
  const a = map.install("a", "p", "A", "tool", "a")!;
  const b = map.install("b", "p", "B", "tool", "b")!;
  b.remove();
  a.remove();
  assert.equal(map.size, 0);
  assert.deepEqual(map.records(), []);
  map.add("b", "p", "B2");
  map.add("a", "p", "A2");
  assert.deepEqual(map.entries(), [{ id: "b", owner: "p" }, { id: "a", owner: "p" }]);
  a.remove();
  b.remove();
  assert.equal(map.size, 2, "old handles never touch the new entries");
});
