import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { PanelCapability } from "@amber/core";
import { createPanelRegistry } from "@amber/registries/panels";
import { conflictOf, contributionOf, errorOf, services } from "./_fixtures.ts";

function panel(id: string, overrides: Partial<PanelCapability> = {}): PanelCapability {
  return {
    kind: "panel",
    name: `${id}_panel`,
    id,
    title: `The ${id}`,
    lines: (width) => [`${id}:${width}`],
    ...overrides,
  };
}

Deno.test("panels: install lists the panel; its contribution removes it once", () => {
  const panels = createPanelRegistry();
  const v0 = panels.version;
  const handle = contributionOf(panels.install("g", panel("models"), services("g")));
  strictEqual(handle.kind, "panel");
  strictEqual(handle.name, "models_panel");
  deepStrictEqual(handle.ids, ["models"]);
  ok(panels.version > v0);
  deepStrictEqual(panels.list(), [{ id: "models", title: "The models", owner: "g" }]);
  deepStrictEqual(panels.entries(), [{ id: "models", owner: "g" }]);
  handle.remove();
  const v1 = panels.version;
  handle.remove();
  strictEqual(panels.version, v1);
  deepStrictEqual(panels.list(), []);
  strictEqual(panels.render("models", 10), undefined);
});

Deno.test("panels: a duplicate id fails naming both plugins", () => {
  const panels = createPanelRegistry();
  contributionOf(panels.install("a", panel("jobs"), services("a")));
  const result = panels.install("b", panel("jobs", { title: "Mine" }), services("b"));
  strictEqual(
    errorOf(result),
    "panel 'jobs' from plugin 'b' collides with the panel of plugin 'a'",
  );
  deepStrictEqual(conflictOf(result), { id: "jobs", owner: "a" });
  deepStrictEqual(panels.list(), [{ id: "jobs", title: "The jobs", owner: "a" }]);
  contributionOf(panels.install("core", panel("help"), services("core")));
  const clash = panels.install("c", panel("help"), services("c"));
  match(errorOf(clash), /collides with .*core$/);
  deepStrictEqual(conflictOf(clash), { id: "help", owner: "core" });
});

Deno.test("panels: malformed panels fail naming what is missing", () => {
  const panels = createPanelRegistry();
  match(errorOf(panels.install("a", panel(""), services("a"))), /plugin 'a' has no panel id/);
  const noLines = panel("x", { lines: undefined as unknown as PanelCapability["lines"] });
  match(errorOf(panels.install("a", noLines, services("a"))), /panel 'x' from plugin 'a'.*lines/);
  const badKey = panel("y", { onKey: "r" as unknown as PanelCapability["onKey"] });
  match(errorOf(panels.install("a", badKey, services("a"))), /panel 'y'.*onKey/);
  deepStrictEqual(panels.list(), []);
});

Deno.test("panels: render passes the width, and shows a throwing panel's error", () => {
  const panels = createPanelRegistry();
  contributionOf(panels.install("a", panel("ok"), services("a")));
  contributionOf(
    panels.install(
      "a",
      panel("broken", {
        lines: () => {
          throw new Error("no data yet");
        },
      }),
      services("a"),
    ),
  );
  contributionOf(
    panels.install(
      "a",
      panel("odd", { lines: () => ["x", 3] as unknown as readonly string[] }),
      services("a"),
    ),
  );
  deepStrictEqual(panels.render("ok", 42), ["ok:42"]);
  deepStrictEqual(panels.render("broken", 42), ["panel 'broken' failed: no data yet"]);
  deepStrictEqual(panels.render("odd", 42), ["x", "3"]);
  strictEqual(panels.render("missing", 42), undefined);
});

Deno.test("panels: a key reaches only the panel it is routed to", () => {
  const panels = createPanelRegistry();
  const seen: string[] = [];
  contributionOf(
    panels.install(
      "a",
      panel("one", { onKey: (key) => (seen.push(`one:${key}`), key === "r") }),
      services("a"),
    ),
  );
  contributionOf(
    panels.install(
      "b",
      panel("two", { onKey: (key) => (seen.push(`two:${key}`), true) }),
      services("b"),
    ),
  );
  contributionOf(panels.install("c", panel("keyless"), services("c")));
  strictEqual(panels.key("one", "r"), true);
  strictEqual(panels.key("one", "x"), false);
  strictEqual(panels.key("keyless", "r"), false);
  strictEqual(panels.key("missing", "r"), false);
  deepStrictEqual(seen, ["one:r", "one:x"]);
});

Deno.test("panels: a throwing onKey is contained and reports false", () => {
  const panels = createPanelRegistry();
  contributionOf(
    panels.install(
      "a",
      panel("bad", {
        onKey: () => {
          throw new Error("boom");
        },
      }),
      services("a"),
    ),
  );
  strictEqual(panels.key("bad", "r"), false);
});

Deno.test("panels: purge removes the owner's panels and returns their ids", () => {
  const panels = createPanelRegistry();
  contributionOf(panels.install("a", panel("p1"), services("a")));
  contributionOf(panels.install("b", panel("p2"), services("b")));
  contributionOf(panels.install("a", panel("p3"), services("a")));
  deepStrictEqual(panels.purge("a"), ["p1", "p3"]);
  deepStrictEqual(panels.list().map((entry) => entry.id), ["p2"]);
  deepStrictEqual(panels.purge("a"), []);
});
