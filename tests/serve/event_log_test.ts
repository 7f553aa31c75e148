// The replay log of a served session: offsets, replay from an offset, the cap, closing.

import assert from "node:assert/strict";
import { EventLog } from "../../cli/serve/event_log.ts";

Deno.test("a follower gets the kept events from its offset, then the live ones", () => {
  const log = new EventLog();
  for (const delta of ["a", "b", "c"]) log.append({ type: "text", delta });
  const seen: string[] = [];
  const stop = log.follow(1, (event) => seen.push(`${event.offset}:${event.data}`), () => {});
  log.append({ type: "end" });
  stop();
  log.append({ type: "text", delta: "after" });
  assert.deepEqual(seen, [
    '1:{"type":"text","delta":"b"}',
    '2:{"type":"text","delta":"c"}',
    '3:{"type":"end"}',
  ]);
});

Deno.test("the log keeps at most its capacity; older offsets replay from the oldest kept", () => {
  const log = new EventLog(10);
  for (let i = 0; i < 100; i++) log.append({ type: "text", delta: String(i) });
  const offsets: number[] = [];
  log.follow(0, (event) => offsets.push(event.offset), () => {})();
  assert.deepEqual(offsets, Array.from({ length: 10 }, (_, i) => 90 + i));
  const later: number[] = [];
  log.follow(95, (event) => later.push(event.offset), () => {})();
  assert.deepEqual(later, [95, 96, 97, 98, 99]);
  const beyond: number[] = [];
  log.follow(500, (event) => beyond.push(event.offset), () => {})();
  assert.deepEqual(beyond, []);
});

Deno.test("closing ends every follower; a follower of a closed log replays and ends", () => {
  const log = new EventLog();
  log.append({ type: "session", id: "x" });
  let closed = 0;
  log.follow(0, () => {}, () => closed++);
  log.close();
  assert.equal(closed, 1);
  const seen: number[] = [];
  log.follow(0, (event) => seen.push(event.offset), () => closed++);
  assert.deepEqual(seen, [0]);
  assert.equal(closed, 2);
});
