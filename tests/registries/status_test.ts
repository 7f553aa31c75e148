import assert from "node:assert/strict";
import {
  emptyStatusSnapshot,
  type StatusSegmentCapability,
  type StatusSnapshot,
  type StatusText,
} from "@amber/core";
import { createStatusRegistry } from "@amber/registries/status";
import { cellWidth } from "@amber/core/cells";
import { conflictOf, contributionOf, errorOf, services } from "./_fixtures.ts";

function segment(
  name: string,
  text: string | ((snapshot: StatusSnapshot) => string),
  priority = 100,
  dropPriority = 50,
): StatusSegmentCapability {
  return {
    kind: "status",
    name,
    priority,
    dropPriority,
    render: (snapshot) => ({
      text: typeof text === "string" ? text : text(snapshot),
      tone: "dim",
    }),
  };
}

const snapshot = emptyStatusSnapshot();

Deno.test("segments compose in (priority, registration) order joined by a separator", () => {
  const status = createStatusRegistry();
  status.install("a", segment("tokens", "1200 tok", 300), services("a"));
  status.install("b", segment("model", (s) => s.model, 100), services("b"));
  status.install("a", segment("mode", "build", 200), services("a"));
  status.install("c", segment("latency", "120 ms", 200), services("c"));
  const bar = status.compose(200, { ...snapshot, model: "gpt-5" });
  assert.equal(bar.text, "gpt-5 │ build │ 120 ms │ 1200 tok");
  assert.deepEqual(bar.segments.map((s) => s.name), ["model", "mode", "latency", "tokens"]);
  assert.deepEqual(bar.dropped, []);
  assert.deepEqual(bar.segments[0], { name: "model", text: "gpt-5", tone: "dim" });
});

Deno.test("a segment rendering empty text is hidden without a stray separator", () => {
  const status = createStatusRegistry();
  status.install("a", segment("one", "one", 1), services("a"));
  status.install("a", segment("tool", (s) => s.runningTool, 2), services("a"));
  status.install("a", segment("three", "three", 3), services("a"));
  assert.equal(status.compose(80, snapshot).text, "one │ three");
  assert.equal(status.compose(80, { ...snapshot, runningTool: "bash" }).text, "one │ bash │ three");
});

Deno.test("a segment name taken by another plugin fails naming both plugins", () => {
  const status = createStatusRegistry();
  contributionOf(status.install("clock", segment("time", "12:00"), services("clock")));
  const version = status.version;
  const result = status.install("other", segment("time", "13:00"), services("other"));
  assert.deepEqual(conflictOf(result), { id: "time", owner: "clock" });
  const error = errorOf(result);
  assert.match(error, /status segment 'time'/);
  assert.match(error, /plugin 'other'/);
  assert.match(error, /plugin 'clock'/);
  assert.equal(status.version, version, "a failed install changes nothing");
  assert.deepEqual(status.entries(), [{ id: "time", owner: "clock" }]);
  assert.equal(status.compose(80, snapshot).text, "12:00");
});

Deno.test("an invalid segment fails with a message naming the plugin and the problem", () => {
  const status = createStatusRegistry();
  const bad: Array<[unknown, RegExp]> = [
    [{ ...segment("x", "x"), priority: Number.NaN }, /'x' of plugin 'p' has a priority/],
    [{ ...segment("x", "x"), dropPriority: "high" }, /'x' of plugin 'p' has a dropPriority/],
    [{ ...segment("x", "x"), render: undefined }, /'x' of plugin 'p' has no render function/],
    [{ ...segment("x", "x"), name: " " }, /plugin 'p' has no name/],
    [{ ...segment("x", "x"), kind: "tool" }, /plugin 'p' has kind 'tool', not 'status'/],
    [null, /status segment of plugin 'p' is not an object/],
  ];
  for (const [capability, pattern] of bad) {
    const result = status.install("p", capability as StatusSegmentCapability, services("p"));
    assert.match(errorOf(result), pattern);
  }
  assert.deepEqual(status.entries(), []);
  assert.equal(status.version, 0);
});

Deno.test("a narrow bar drops the lowest dropPriority first, ties the later-registered first", () => {
  const status = createStatusRegistry();
  status.install("p", segment("model", "gpt-5", 1, 90), services("p"));
  status.install("p", segment("tokens", "1200 tok", 2, 10), services("p"));
  status.install("p", segment("tps", "42 t/s", 3, 20), services("p"));
  status.install("p", segment("wallet", "$1.00", 4, 20), services("p"));
  // Full: "gpt-5 │ 1200 tok │ 42 t/s │ $1.00" = 5 + 3 + 8 + 3 + 6 + 3 + 5 = 33 cells.
  assert.equal(status.compose(33, snapshot).text, "gpt-5 │ 1200 tok │ 42 t/s │ $1.00");
  const one = status.compose(32, snapshot);
  assert.deepEqual(one.dropped, ["tokens"]);
  assert.equal(one.text, "gpt-5 │ 42 t/s │ $1.00");
  const two = status.compose(21, snapshot);
  assert.deepEqual(two.dropped, ["tokens", "wallet"], "wallet ties tps and registered later");
  assert.equal(two.text, "gpt-5 │ 42 t/s");
  const three = status.compose(13, snapshot);
  assert.deepEqual(three.dropped, ["tokens", "wallet", "tps"]);
  assert.equal(three.text, "gpt-5");
  assert.deepEqual(three.segments.map((s) => s.name), ["model"]);
});

Deno.test("the last segment left is cut to the width with an ellipsis", () => {
  const status = createStatusRegistry();
  status.install("p", segment("model", "deepseek-reasoner", 1, 90), services("p"));
  status.install("p", segment("tokens", "1200 tok", 2, 10), services("p"));
  const bar = status.compose(8, snapshot);
  assert.equal(bar.text, "deepsee…");
  assert.deepEqual(bar.dropped, ["tokens"]);
  assert.deepEqual(bar.segments, [{ name: "model", text: "deepsee…", tone: "dim" }]);
  const none = status.compose(0, snapshot);
  assert.equal(none.text, "");
  assert.deepEqual(none.segments, []);
  assert.deepEqual(none.dropped, ["tokens", "model"]);
  assert.equal(status.compose(Number.NaN, snapshot).text, "");
  assert.equal(status.compose(Infinity, snapshot).text, "deepseek-reasoner │ 1200 tok");
  assert.equal(status.compose(12.9, snapshot).text, "deepseek-re…", "width is floored");
});

Deno.test("width is counted in terminal cells, not code units", () => {
  const status = createStatusRegistry();
  status.install("p", segment("model", "通义千问", 1, 90), services("p"));
  status.install("p", segment("mood", "🚀", 2, 10), services("p"));
  // 8 + 3 + 2 = 13 cells, though only 7 code units.
  assert.equal(status.compose(13, snapshot).text, "通义千问 │ 🚀");
  const narrow = status.compose(12, snapshot);
  assert.equal(narrow.text, "通义千问");
  assert.deepEqual(narrow.dropped, ["mood"]);
  assert.equal(status.compose(7, snapshot).text, "通义千…");
  for (let width = 0; width < 20; width++) {
    assert.ok(cellWidth(status.compose(width, snapshot).text) <= width, `width ${width}`);
  }
});

Deno.test("a throwing render shows nothing and is reported once until it renders again", () => {
  const reports: Array<[string, string, unknown]> = [];
  const status = createStatusRegistry({
    onError: (owner, name, error) => reports.push([owner, name, error]),
  });
  let broken = true;
  status.install("flaky", {
    kind: "status",
    name: "flaky",
    priority: 1,
    dropPriority: 1,
    render: (): StatusText => {
      if (broken) throw new Error("boom");
      return { text: "fine", tone: "good" };
    },
  }, services("flaky"));
  status.install("p", segment("model", "gpt-5", 2), services("p"));
  for (let i = 0; i < 5; i++) assert.equal(status.compose(80, snapshot).text, "gpt-5");
  assert.equal(reports.length, 1);
  assert.equal(reports[0][0], "flaky");
  assert.equal(reports[0][1], "flaky");
  assert.equal((reports[0][2] as Error).message, "boom");
  broken = false;
  assert.equal(status.compose(80, snapshot).text, "fine │ gpt-5");
  broken = true;
  assert.equal(status.compose(80, snapshot).text, "gpt-5");
  assert.equal(status.compose(80, snapshot).text, "gpt-5");
  assert.equal(reports.length, 2, "a new fault after recovering is reported again");
});

Deno.test("a render returning something other than a StatusText is a fault", () => {
  const reports: string[] = [];
  const status = createStatusRegistry({
    onError: (_owner, name, error) => reports.push(`${name}: ${(error as Error).message}`),
  });
  const weird = (name: string, value: unknown): StatusSegmentCapability => ({
    kind: "status",
    name,
    priority: 1,
    dropPriority: 1,
    render: () => value as StatusText,
  });
  status.install("p", weird("nothing", undefined), services("p"));
  status.install("p", weird("number", { text: 42, tone: "good" }), services("p"));
  status.install("p", weird("tone", { text: "ok", tone: "loud" }), services("p"));
  const bar = status.compose(80, snapshot);
  assert.equal(bar.text, "ok");
  assert.equal(bar.segments[0].tone, "dim", "an unknown tone falls back to dim");
  assert.deepEqual(reports, [
    "nothing: render returned undefined, not a StatusText",
    "number: render returned an object without a string text, not a StatusText",
  ]);
});

Deno.test("a reporter that throws does not break composition", () => {
  const status = createStatusRegistry({
    onError: () => {
      throw new Error("reporter down");
    },
  });
  status.install("p", {
    kind: "status",
    name: "bad",
    priority: 1,
    dropPriority: 1,
    render: () => {
      throw new Error("boom");
    },
  }, services("p"));
  status.install("p", segment("good", "ok", 2), services("p"));
  assert.equal(status.compose(80, snapshot).text, "ok");
});

Deno.test("control characters cannot break the bar onto a second line", () => {
  const status = createStatusRegistry();
  status.install("p", segment("a", "line one\nline\ttwo\u001b[31m", 1), services("p"));
  status.install("p", segment("b", "\n\u0007", 2), services("p"));
  const bar = status.compose(80, snapshot);
  assert.equal(bar.text, "line one line two[31m");
  assert.deepEqual(bar.segments.map((s) => s.name), ["a"], "a segment of only controls hides");
});

Deno.test("entries, purge, remove and version follow the registry", () => {
  const status = createStatusRegistry();
  assert.equal(status.version, 0);
  const clock = contributionOf(
    status.install("clock", segment("time", "12:00"), services("clock")),
  );
  assert.deepEqual(clock.ids, ["time"]);
  assert.equal(clock.kind, "status");
  assert.equal(clock.name, "time");
  contributionOf(status.install("m", segment("model", "gpt-5"), services("m")));
  contributionOf(status.install("m", segment("tokens", "1 tok"), services("m")));
  assert.deepEqual(status.entries(), [
    { id: "time", owner: "clock" },
    { id: "model", owner: "m" },
    { id: "tokens", owner: "m" },
  ]);
  const before = status.version;
  assert.deepEqual(status.purge("m"), ["model", "tokens"]);
  assert.ok(status.version > before);
  assert.deepEqual(status.purge("m"), []);
  assert.equal(status.compose(80, snapshot).text, "12:00");

  clock.remove();
  const afterRemove = status.version;
  clock.remove();
  assert.equal(status.version, afterRemove, "remove is idempotent");
  assert.deepEqual(status.entries(), []);
  assert.equal(status.compose(80, snapshot).text, "");

  // A stale handle must not remove a later registration of the same name.
  contributionOf(status.install("other", segment("time", "13:00"), services("other")));
  clock.remove();
  assert.deepEqual(status.entries(), [{ id: "time", owner: "other" }]);
  assert.equal(status.compose(80, snapshot).text, "13:00");
});

Deno.test("composition follows installs and removals made between frames", () => {
  const status = createStatusRegistry();
  status.install("p", segment("b", "b", 2), services("p"));
  assert.equal(status.compose(80, snapshot).text, "b");
  const a = contributionOf(status.install("q", segment("a", "a", 1), services("q")));
  assert.equal(status.compose(80, snapshot).text, "a │ b");
  a.remove();
  assert.equal(status.compose(80, snapshot).text, "b");
});

Deno.test("composing 40 segments at width 120 fits the width by dropping segments", () => {
  const status = createStatusRegistry();
  for (let i = 0; i < 40; i++) {
    status.install(`p${i}`, segment(`seg${i}`, `item ${i}`, i % 7, i % 5), services(`p${i}`));
  }
  // How fast this is, bench/render_bench.ts measures; here, that repeated composition is stable.
  const first = status.compose(120, snapshot);
  for (let i = 0; i < 200; i++) assert.deepEqual(status.compose(120, snapshot), first);
  assert.ok(cellWidth(first.text) <= 120);
  assert.ok(first.dropped.length > 0);
});

Deno.test("installing and purging 1,000 plugins × 8 segments leaves nothing", () => {
  const status = createStatusRegistry();
  const capabilities = Array.from({ length: 8 }, (_, i) => i);
  for (let p = 0; p < 1000; p++) {
    const owner = `p${p}`;
    for (const i of capabilities) {
      status.install(owner, segment(`${owner}.${i}`, "x", i, i), services(owner));
    }
  }
  assert.equal(status.entries().length, 8000);
  for (let p = 0; p < 1000; p++) status.purge(`p${p}`);
  assert.equal(status.entries().length, 0);
});
