import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { type Contribution, PluginLedger } from "@amber/core";
import fc from "fast-check";

function contribution(name: string, log: string[], fail = false): Contribution {
  return {
    kind: "tool",
    name,
    ids: [name],
    remove: () => {
      log.push(name);
      if (fail) throw new Error(`remove of ${name} broke`);
    },
  };
}

Deno.test("ledger unwinds newest first and forgets the owner", () => {
  const ledger = new PluginLedger();
  const log: string[] = [];
  for (const name of ["a", "b", "c"]) ledger.record("p", contribution(name, log));
  ledger.record("q", contribution("x", log));
  strictEqual(ledger.size("p"), 3);
  deepStrictEqual(ledger.owners(), ["p", "q"]);
  deepStrictEqual(ledger.unwind("p"), []);
  deepStrictEqual(log, ["c", "b", "a"]);
  strictEqual(ledger.size("p"), 0);
  deepStrictEqual(ledger.owners(), ["q"]);
});

Deno.test("a throwing remove does not stop the unwind and is reported", () => {
  const ledger = new PluginLedger();
  const log: string[] = [];
  ledger.record("p", contribution("a", log));
  ledger.record("p", contribution("b", log, true));
  ledger.record("p", contribution("c", log));
  const faults = ledger.unwind("p");
  deepStrictEqual(log, ["c", "b", "a"]);
  strictEqual(faults.length, 1);
  strictEqual(faults[0].contribution.name, "b");
  strictEqual((faults[0].error as Error).message, "remove of b broke");
});

Deno.test("forget drops a contribution without removing it; clear unwinds everyone", () => {
  const ledger = new PluginLedger();
  const log: string[] = [];
  const a = contribution("a", log);
  ledger.record("p", a);
  ledger.record("q", contribution("b", log));
  ledger.forget("p", a);
  strictEqual(ledger.size("p"), 0);
  deepStrictEqual(ledger.contributions("q").map((c) => c.name), ["b"]);
  ledger.clear();
  deepStrictEqual(log, ["b"]);
  deepStrictEqual(ledger.owners(), []);
});

Deno.test("property: unwind removes exactly the owner's contributions in reverse order", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom("p", "q", "r"), fc.boolean()), { maxLength: 40 }),
      fc.constantFrom("p", "q", "r"),
      (records, target) => {
        const ledger = new PluginLedger();
        const log: string[] = [];
        records.forEach(([owner, fail], i) =>
          ledger.record(owner, contribution(`${owner}${i}`, log, fail))
        );
        const expected = records
          .map(([owner], i) => [owner, `${owner}${i}`] as const)
          .filter(([owner]) => owner === target)
          .map(([, name]) => name)
          .reverse();
        const faults = ledger.unwind(target);
        deepStrictEqual(log, expected);
        strictEqual(faults.length, records.filter(([o, f]) => o === target && f).length);
        strictEqual(ledger.size(target), 0);
        for (const other of ["p", "q", "r"].filter((o) => o !== target)) {
          strictEqual(ledger.size(other), records.filter(([o]) => o === other).length);
        }
      },
    ),
  );
});
