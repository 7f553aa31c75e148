import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import fc from "fast-check";
import { satisfies } from "semver";
import { type DependencyNode, dependentsOf, orderPlugins } from "../../core/dependency.ts";
import { ResolutionError } from "../../core/resolution_error.ts";

function node(id: string, requires?: { [id: string]: string }, version = "1.0.0"): DependencyNode {
  return requires === undefined ? { id, version } : { id, version, requires };
}

const never = (): boolean => {
  throw new Error("satisfies must not be called");
};

Deno.test("merge_rejects_missing_dependency", () => {
  const { order, failures } = orderPlugins(
    [node("a", { b: "*" }), node("c")],
    satisfies,
  );
  deepStrictEqual(order, ["c"]);
  deepStrictEqual([...failures.keys()], ["a"]);
  const failure = failures.get("a")!;
  ok(failure instanceof ResolutionError);
  strictEqual(failure.rule, "missing-dependency");
  deepStrictEqual(failure.pluginIds, ["a"]);
  strictEqual(failure.id, "b");
  strictEqual(failure.message, "plugin 'a' requires 'b', which is not installed");
});

Deno.test("merge_rejects_a_dependency_cycle", () => {
  const { order, failures } = orderPlugins(
    [node("x"), node("b", { c: "*" }), node("a", { b: "*" }), node("c", { a: "*", x: "*" })],
    never,
  );
  deepStrictEqual(order, ["x"]);
  deepStrictEqual([...failures.keys()], ["b", "a", "c"]);
  const failure = failures.get("b")!;
  strictEqual(failure.rule, "dependency-cycle");
  deepStrictEqual(failure.path, ["b", "c", "a", "b"], "starts at the first member in input order");
  strictEqual(failure.message, "dependency cycle: b -> c -> a -> b");
  deepStrictEqual(failure.pluginIds, ["b", "c", "a"]);
  strictEqual(failures.get("a"), failure, "every member holds the same cycle");
  strictEqual(failures.get("c"), failure);

  const self = orderPlugins([node("s", { s: "*" })], never).failures.get("s")!;
  deepStrictEqual(self.path, ["s", "s"]);
  strictEqual(self.message, "dependency cycle: s -> s");
});

Deno.test("a member off the first cycle of its component gets a cycle through itself", () => {
  // a <-> b and b <-> c form one component, but c is not on a -> b -> a.
  const { failures } = orderPlugins(
    [node("a", { b: "*" }), node("b", { a: "*", c: "*" }), node("c", { b: "*" })],
    never,
  );
  deepStrictEqual(failures.get("a")!.path, ["a", "b", "a"]);
  strictEqual(failures.get("b"), failures.get("a"));
  deepStrictEqual(failures.get("c")!.path, ["b", "c", "b"]);
});

Deno.test("merge_orders_dependencies_first", () => {
  const { order, failures } = orderPlugins([
    node("app", { ui: "^1.0.0", log: "*" }),
    node("ui", { core: "^1.2.0" }),
    node("log"),
    node("core", undefined, "1.4.0"),
  ], satisfies);
  deepStrictEqual(failures.size, 0);
  // Ready at first: log and core; log is earlier in the input. Then ui, then app.
  deepStrictEqual(order, ["log", "core", "ui", "app"]);

  // A plugin comes as soon as it is ready, ahead of later-listed plugins that were ready before.
  deepStrictEqual(
    orderPlugins([node("z", { a: "*" }), node("a"), node("m")], never).order,
    ["a", "z", "m"],
  );
});

Deno.test("a version outside the required range fails the requirer", () => {
  const { order, failures } = orderPlugins([
    node("a", { b: "^2.0.0" }),
    node("b", undefined, "1.0.0"),
    node("c", { b: "1.x" }),
  ], satisfies);
  deepStrictEqual(order, ["b", "c"]);
  const failure = failures.get("a")!;
  strictEqual(failure.rule, "version-mismatch");
  strictEqual(failure.id, "b");
  strictEqual(failure.message, "plugin 'a' requires 'b' ^2.0.0, but 'b' is 1.0.0");
});

Deno.test("'*' and '' match any version without asking satisfies", () => {
  const { order, failures } = orderPlugins([
    node("a", { b: "*", c: "" }),
    node("b", undefined, "not-semver"),
    node("c", undefined, "0.0.1"),
  ], never);
  strictEqual(failures.size, 0);
  deepStrictEqual(order, ["b", "c", "a"]);
});

Deno.test("a range satisfies throws on is the requirer's failure", () => {
  const boom = new Error("bad range");
  const { failures } = orderPlugins([node("a", { b: ">>1" }), node("b")], () => {
    throw boom;
  });
  const failure = failures.get("a")!;
  strictEqual(failure.rule, "version-mismatch");
  strictEqual(failure.message, "plugin 'a' requires 'b' >>1, which is not a valid range");
  strictEqual(failure.cause, boom);
});

Deno.test("a plugin that depends on a failed plugin fails too, naming the requirement", () => {
  const { order, failures } = orderPlugins([
    node("a", { b: "*" }),
    node("b", { a: "*" }),
    node("d", { ok: "*", a: "*" }),
    node("e", { d: "*" }),
    node("ok"),
    node("m", { gone: "*" }),
    node("n", { m: "*" }),
  ], never);
  deepStrictEqual(order, ["ok"]);
  const d = failures.get("d")!;
  strictEqual(d.rule, "missing-dependency");
  strictEqual(d.id, "a");
  strictEqual(
    d.message,
    "plugin 'd' requires 'a', which cannot activate: dependency cycle: a -> b -> a",
  );
  strictEqual(d.cause, failures.get("a"));
  const e = failures.get("e")!;
  strictEqual(e.id, "d");
  strictEqual(e.cause, d);
  strictEqual(
    e.message,
    "plugin 'e' requires 'd', which cannot activate: dependency cycle: a -> b -> a",
  );
  strictEqual(
    failures.get("n")!.message,
    "plugin 'n' requires 'm', which cannot activate: plugin 'm' requires 'gone', which is not " +
      "installed",
  );
  deepStrictEqual([...failures.keys()], ["a", "b", "d", "e", "m", "n"], "in input order");
});

Deno.test("a repeated id fails, and so do its dependents", () => {
  const { order, failures } = orderPlugins(
    [node("a"), node("b", { a: "*" }), node("a"), node("c")],
    never,
  );
  deepStrictEqual(order, ["c"]);
  strictEqual(failures.get("a")!.rule, "repeated-plugin");
  strictEqual(failures.get("a")!.message, "plugin 'a' is listed more than once");
  strictEqual(failures.get("b")!.id, "a");
});

Deno.test("a plugin's own requirement failure wins over a cycle", () => {
  const { failures } = orderPlugins(
    [node("a", { b: "*", gone: "*" }), node("b", { a: "*" })],
    never,
  );
  strictEqual(failures.get("a")!.rule, "missing-dependency");
  deepStrictEqual(failures.get("b")!.path, ["a", "b", "a"]);
});

Deno.test("dependentsOf lists transitive dependents, furthest first", () => {
  const nodes = [
    node("core"),
    node("ui", { core: "*" }),
    node("theme", { ui: "*" }),
    node("solo"),
    node("log", { core: "*" }),
    node("app", { theme: "*", log: "*" }),
  ];
  deepStrictEqual(dependentsOf(nodes, "core"), ["app", "log", "theme", "ui"]);
  deepStrictEqual(dependentsOf(nodes, "ui"), ["app", "theme"]);
  deepStrictEqual(dependentsOf(nodes, "app"), []);
  deepStrictEqual(dependentsOf(nodes, "solo"), []);
  deepStrictEqual(dependentsOf([node("x", { gone: "*" })], "gone"), ["x"]);
  deepStrictEqual(
    dependentsOf([node("a", { b: "*" }), node("b", { a: "*" }), node("c", { a: "*" })], "a"),
    ["c", "b"],
    "a cycle back to the plugin itself leaves it out",
  );
});

// ---- properties, against simple quadratic references ----

type Edges = { readonly [id: string]: readonly string[] };

function toNodes(ids: readonly string[], edges: Edges): DependencyNode[] {
  return ids.map((id) =>
    node(id, Object.fromEntries((edges[id] ?? []).map((dep) => [dep, "*"] as const)))
  );
}

/** Kahn by rescanning: the first not-yet-emitted plugin, in input order, whose deps are all out. */
function referenceKahn(nodes: readonly DependencyNode[], alive: (id: string) => boolean): string[] {
  const emitted = new Set<string>();
  const order: string[] = [];
  for (;;) {
    const next = nodes.find((n) =>
      alive(n.id) && !emitted.has(n.id) &&
      Object.keys(n.requires ?? {}).every((dep) => emitted.has(dep))
    );
    if (next === undefined) return order;
    emitted.add(next.id);
    order.push(next.id);
  }
}

function reaches(edges: Edges, from: string, to: string): boolean {
  const seen = new Set<string>();
  const stack = [...(edges[from] ?? [])];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (v === to) return true;
    if (seen.has(v)) continue;
    seen.add(v);
    stack.push(...(edges[v] ?? []));
  }
  return false;
}

/** Random graphs over p0..p(n-1): ids in a shuffled input order, edges as an adjacency map. */
function graphArb(acyclic: boolean): fc.Arbitrary<{ ids: string[]; edges: Edges }> {
  return fc.integer({ min: 1, max: 12 }).chain((n) => {
    const names = Array.from({ length: n }, (_, i) => `p${i}`);
    const edge = fc.tuple(fc.nat(n - 1), fc.nat(n - 1));
    return fc.tuple(
      fc.shuffledSubarray(names, { minLength: n, maxLength: n }),
      fc.array(edge, { maxLength: acyclic ? 3 * n : 2 * n }),
    ).map(([ids, pairs]) => {
      const edges: { [id: string]: string[] } = {};
      for (const [a, b] of pairs) {
        // Acyclic: only towards lower numbers, which the shuffle hides from input order.
        if (acyclic && a <= b) continue;
        const list = edges[names[a]] ??= [];
        if (!list.includes(names[b])) list.push(names[b]);
      }
      return { ids, edges };
    });
  });
}

Deno.test("property: a DAG orders completely, respects every edge and breaks ties by input", () => {
  fc.assert(fc.property(graphArb(true), ({ ids, edges }) => {
    const nodes = toNodes(ids, edges);
    const { order, failures } = orderPlugins(nodes, never);
    strictEqual(failures.size, 0);
    deepStrictEqual([...order].sort(), [...ids].sort());
    const position = new Map(order.map((id, i) => [id, i]));
    for (const [from, deps] of Object.entries(edges)) {
      for (const dep of deps) ok(position.get(dep)! < position.get(from)!, `${dep} before ${from}`);
    }
    deepStrictEqual(order, referenceKahn(nodes, () => true));
  }));
});

Deno.test("property: cycles reported are true cycles, and every other failure has a reason", () => {
  fc.assert(
    fc.property(graphArb(false), ({ ids, edges }) => {
      const nodes = toNodes(ids, edges);
      const { order, failures } = orderPlugins(nodes, never);
      const inputIndex = new Map(ids.map((id, i) => [id, i]));
      const onCycle = (id: string): boolean => reaches(edges, id, id);

      // Exactly the plugins that reach no cycle survive, in reference Kahn order.
      const survives = (id: string): boolean =>
        !onCycle(id) && !ids.some((c) => onCycle(c) && reaches(edges, id, c));
      deepStrictEqual(order, referenceKahn(nodes, survives));
      deepStrictEqual(new Set([...failures.keys(), ...order]), new Set(ids));

      for (const [id, failure] of failures) {
        ok(!order.includes(id));
        if (onCycle(id)) {
          strictEqual(failure.rule, "dependency-cycle", id);
          const path = failure.path!;
          ok(path.length >= 2);
          strictEqual(path[0], path[path.length - 1]);
          ok(path.includes(id), `${id} is on its own cycle`);
          const open = path.slice(0, -1);
          strictEqual(new Set(open).size, open.length, "a simple cycle");
          for (let k = 0; k + 1 < path.length; k++) {
            ok((edges[path[k]] ?? []).includes(path[k + 1]), `${path[k]} -> ${path[k + 1]}`);
          }
          const first = Math.min(...open.map((m) => inputIndex.get(m)!));
          strictEqual(inputIndex.get(path[0]), first, "starts at its first member in input order");
          deepStrictEqual(failure.pluginIds, open);
        } else {
          strictEqual(failure.rule, "missing-dependency", id);
          // Its first requirement, in requires order, that failed.
          const firstFailed = (edges[id] ?? []).find((dep) => failures.has(dep));
          strictEqual(failure.id, firstFailed);
          strictEqual(failure.cause, failures.get(firstFailed!));
        }
      }
    }),
    { numRuns: 500 },
  );
});

Deno.test("property: dependentsOf is every transitive requirer, dependents before dependencies", () => {
  let runs = 0;
  fc.assert(fc.property(graphArb(true), fc.nat(11), ({ ids, edges }, pick) => {
    const nodes = toNodes(ids, edges);
    const target = ids[pick % ids.length];
    const result = dependentsOf(nodes, target);
    deepStrictEqual(
      new Set(result),
      new Set(ids.filter((id) => reaches(edges, id, target))),
    );
    strictEqual(new Set(result).size, result.length);
    // The reverse of their activation order, requirements outside the set counting as met.
    const inSet = new Set(result);
    const activation: string[] = [];
    for (;;) {
      const next = nodes.find((n) =>
        inSet.has(n.id) && !activation.includes(n.id) &&
        (edges[n.id] ?? []).every((dep) => !inSet.has(dep) || activation.includes(dep))
      );
      if (next === undefined) break;
      activation.push(next.id);
    }
    deepStrictEqual(result, activation.reverse());
    runs++;
    const position = new Map(result.map((id, i) => [id, i]));
    for (const id of result) {
      for (const dep of edges[id] ?? []) {
        if (position.has(dep)) ok(position.get(id)! < position.get(dep)!, `${id} before ${dep}`);
      }
    }
  }));
  strictEqual(runs, 100);
});
