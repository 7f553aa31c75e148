import { deepStrictEqual, match, notStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  type ActionCapability,
  type CompactorCapability,
  type GateCapability,
  type GuardCapability,
  type HookCapability,
  type InstallResult,
  type NamedRegistry,
  PHASE_HOOK_POINTS,
  type StateKeyCapability,
} from "@amber/core";
import {
  createActionRegistry,
  createCompactorRegistry,
  createGateRegistry,
  createGuardRegistry,
  createHookRegistry,
  createStateKeyRegistry,
} from "@amber/registries/extensions";
import { createRegistries } from "@amber/registries";
import { conflictOf, contributionOf, errorOf, services } from "./_fixtures.ts";

function hook(name: string, overrides: Partial<HookCapability> = {}): HookCapability {
  return { kind: "hook", name, point: "StepEnd", run: () => ({}), ...overrides };
}

function gate(name: string): GateCapability {
  return { kind: "gate", name, check: () => ({ kind: "allow" }) };
}

function guard(name: string): GuardCapability {
  return { kind: "guard", name, decide: () => ({ kind: "complete" }) };
}

function compactor(name: string): CompactorCapability {
  return { kind: "compactor", name, compact: (input, next) => next(input) };
}

function action(name: string): ActionCapability {
  return { kind: "action", name, run: () => Promise.resolve({ ok: true, output: name }) };
}

function stateKey(name: string, initial: unknown = 0): StateKeyCapability {
  return { kind: "state", name, initial };
}

// Installs something the types forbid, as a plugin written in JavaScript could.
function installLoose<C>(
  registry: NamedRegistry<C>,
  owner: string,
  capability: unknown,
): InstallResult {
  return registry.install(owner, capability as C, services(owner));
}

// --- The generic behaviour, once (through the gate registry) ---

Deno.test("named registry: install hands back a handle; get, list and entries follow", () => {
  const gates = createGateRegistry();
  const v0 = gates.version;
  deepStrictEqual(gates.list(), []);
  const capability = gate("no_rm");
  const handle = contributionOf(gates.install("safety", capability, services("safety")));
  strictEqual(handle.kind, "gate");
  strictEqual(handle.name, "no_rm");
  deepStrictEqual(handle.ids, ["no_rm"]);
  ok(gates.version > v0);

  const entry = gates.get("no_rm");
  deepStrictEqual(entry, { name: "no_rm", owner: "safety", capability });
  strictEqual(entry?.capability, capability, "the capability is kept as given");
  strictEqual(gates.get("other"), undefined);
  deepStrictEqual(gates.list(), [{ name: "no_rm", owner: "safety", capability }]);
  deepStrictEqual(gates.entries(), [{ id: "no_rm", owner: "safety" }]);
});

Deno.test("named registry: list is in registration order and cached until a change", () => {
  const gates = createGateRegistry();
  contributionOf(gates.install("a", gate("one"), services("a")));
  contributionOf(gates.install("b", gate("two"), services("b")));
  const first = gates.list();
  strictEqual(gates.list(), first, "same array while nothing changes");
  strictEqual(gates.get("two"), first[1], "get and list hand out the same entry");
  ok(Object.isFrozen(first));
  deepStrictEqual(first.map((entry) => entry.name), ["one", "two"]);

  contributionOf(gates.install("c", gate("three"), services("c")));
  const second = gates.list();
  notStrictEqual(second, first);
  strictEqual(second[0], first[0], "unchanged entries keep their identity");
  deepStrictEqual(second.map((entry) => `${entry.owner}:${entry.name}`), [
    "a:one",
    "b:two",
    "c:three",
  ]);
});

Deno.test("named registry: remove is idempotent and a stale handle spares a new holder", () => {
  const gates = createGateRegistry();
  const handle = contributionOf(gates.install("a", gate("g"), services("a")));
  const v1 = gates.version;
  handle.remove();
  ok(gates.version > v1);
  strictEqual(gates.get("g"), undefined);
  deepStrictEqual(gates.list(), []);
  const v2 = gates.version;
  handle.remove();
  strictEqual(gates.version, v2, "a second remove changes nothing");

  // The name is free again, for anyone.
  contributionOf(gates.install("b", gate("g"), services("b")));
  handle.remove();
  strictEqual(gates.get("g")?.owner, "b", "the old handle cannot remove b's registration");
});

Deno.test("named registry: purge removes only the owner's entries and returns their ids", () => {
  const gates = createGateRegistry();
  contributionOf(gates.install("a", gate("a1"), services("a")));
  contributionOf(gates.install("b", gate("b1"), services("b")));
  contributionOf(gates.install("a", gate("a2"), services("a")));
  const v = gates.version;
  deepStrictEqual(gates.purge("a"), ["a1", "a2"]);
  ok(gates.version > v);
  deepStrictEqual(gates.entries(), [{ id: "b1", owner: "b" }]);
  deepStrictEqual(gates.list().map((entry) => entry.name), ["b1"]);
  const after = gates.version;
  deepStrictEqual(gates.purge("a"), []);
  deepStrictEqual(gates.purge("nobody"), []);
  strictEqual(gates.version, after, "purging nothing changes nothing");
});

Deno.test("named registry: a duplicate name fails naming both plugins, with the conflict", () => {
  const gates = createGateRegistry();
  const original = gate("no_rm");
  contributionOf(gates.install("a", original, services("a")));
  const version = gates.version;
  const result = gates.install("b", gate("no_rm"), services("b"));
  strictEqual(
    errorOf(result),
    "tool gate 'no_rm' of plugin 'b' collides with the tool gate of plugin 'a'",
  );
  deepStrictEqual(conflictOf(result), { id: "no_rm", owner: "a" });
  strictEqual(gates.version, version, "a failed install changes nothing");
  strictEqual(gates.get("no_rm")?.capability, original);

  // The same plugin installing the name twice is a collision too.
  deepStrictEqual(conflictOf(gates.install("a", gate("no_rm"), services("a"))), {
    id: "no_rm",
    owner: "a",
  });

  contributionOf(gates.install("core", gate("sandbox"), services("core")));
  const withCore = gates.install("c", gate("sandbox"), services("c"));
  strictEqual(
    errorOf(withCore),
    "tool gate 'sandbox' of plugin 'c' collides with the tool gate of core",
  );
  deepStrictEqual(conflictOf(withCore), { id: "sandbox", owner: "core" });
});

Deno.test("named registry: malformed capabilities fail naming plugin, kind and name", () => {
  const gates = createGateRegistry();
  const cases: Array<[unknown, string]> = [
    [null, "tool gate of plugin 'p' is not an object"],
    ["no_rm", "tool gate of plugin 'p' is not an object"],
    [{ ...gate("g"), kind: "guard" }, "tool gate 'g' of plugin 'p' has kind 'guard', not 'gate'"],
    [{ ...gate("g"), name: "" }, "tool gate of plugin 'p' has no name"],
    [{ ...gate("g"), name: "  " }, "tool gate of plugin 'p' has no name"],
    [{ ...gate("g"), name: 7 }, "tool gate of plugin 'p' has no name"],
    [{ kind: "gate", name: "g" }, "tool gate 'g' of plugin 'p' has no check function"],
    [{ ...gate("g"), check: "allow" }, "tool gate 'g' of plugin 'p' has no check function"],
  ];
  for (const [capability, message] of cases) {
    const result = installLoose(gates, "p", capability);
    strictEqual(errorOf(result), message);
    strictEqual(conflictOf(result), undefined, "a bad shape is not a collision");
  }
  strictEqual(gates.version, 0, "nothing was installed");
  deepStrictEqual(gates.list(), []);
});

Deno.test("named registry: a capability that throws while read fails instead of throwing", () => {
  const gates = createGateRegistry();
  const hostile = new Proxy({}, {
    get: () => {
      throw new Error("trap");
    },
  });
  strictEqual(
    errorOf(installLoose(gates, "p", hostile)),
    "tool gate of plugin 'p' could not be read: trap",
  );
  const lateThrow = {
    kind: "gate",
    name: "late",
    get check(): never {
      throw new Error("no check today");
    },
  };
  strictEqual(
    errorOf(installLoose(gates, "p", lateThrow)),
    "tool gate 'late' of plugin 'p' could not be read: no check today",
  );
  deepStrictEqual(gates.entries(), []);
});

// --- Kind-specific shapes ---

Deno.test("hooks: an unknown or missing point is rejected listing the valid points", () => {
  const hooks = createHookRegistry();
  const valid = "StepStart, BeforeInference, AfterInference, AfterTool, StepEnd, BeforeCompaction";
  strictEqual(PHASE_HOOK_POINTS.join(", "), valid);
  strictEqual(
    errorOf(installLoose(hooks, "p", { ...hook("h"), point: "StepMiddle" })),
    `phase hook 'h' of plugin 'p' has point 'StepMiddle', which is not one of ${valid}`,
  );
  strictEqual(
    errorOf(installLoose(hooks, "p", { ...hook("h"), point: 3 })),
    `phase hook 'h' of plugin 'p' has point of type number, which is not one of ${valid}`,
  );
  strictEqual(
    errorOf(installLoose(hooks, "p", { kind: "hook", name: "h", run: () => ({}) })),
    `phase hook 'h' of plugin 'p' has no point; valid points are ${valid}`,
  );
  strictEqual(
    errorOf(installLoose(hooks, "p", { kind: "hook", name: "h", point: "StepEnd" })),
    "phase hook 'h' of plugin 'p' has no run function",
  );
  for (const point of PHASE_HOOK_POINTS) {
    contributionOf(hooks.install("p", hook(`at_${point}`, { point }), services("p")));
  }
  deepStrictEqual(hooks.list().map((entry) => entry.capability.point), [...PHASE_HOOK_POINTS]);
});

Deno.test("guards, compactors, actions: their function must be there", () => {
  strictEqual(
    errorOf(installLoose(createGuardRegistry(), "p", { kind: "guard", name: "done" })),
    "run-end guard 'done' of plugin 'p' has no decide function",
  );
  strictEqual(
    errorOf(installLoose(createCompactorRegistry(), "p", { kind: "compactor", name: "trim" })),
    "compactor 'trim' of plugin 'p' has no compact function",
  );
  strictEqual(
    errorOf(
      installLoose(createCompactorRegistry(), "p", {
        kind: "compactor",
        name: "trim",
        compact: "summarize everything",
      }),
    ),
    "compactor 'trim' of plugin 'p' has no compact function",
  );
  strictEqual(
    errorOf(installLoose(createActionRegistry(), "p", { kind: "action", name: "deploy", run: 1 })),
    "action kind 'deploy' of plugin 'p' has no run function",
  );
});

Deno.test("state keys: initial must be present, but may be undefined", () => {
  const state = createStateKeyRegistry();
  strictEqual(
    errorOf(installLoose(state, "p", { kind: "state", name: "todo.count" })),
    "state key 'todo.count' of plugin 'p' has no initial value " +
      "(set `initial`; undefined is allowed when written out)",
  );
  const last: StateKeyCapability = { kind: "state", name: "todo.last", initial: undefined };
  contributionOf(state.install("p", last, services("p")));
  ok(state.get("todo.last") !== undefined);
  strictEqual(state.get("todo.last")?.capability.initial, undefined);
  contributionOf(state.install("p", stateKey("todo.items", []), services("p")));
  deepStrictEqual(state.get("todo.items")?.capability.initial, []);
});

// --- All six, table-driven ---

interface Row {
  readonly kind: string;
  readonly label: string;
  readonly create: () => NamedRegistry<unknown>;
  readonly make: (name: string) => unknown;
  readonly broken: (name: string) => unknown;
  readonly fault: string;
}

const ROWS: readonly Row[] = [
  {
    kind: "hook",
    label: "phase hook",
    create: createHookRegistry as () => NamedRegistry<unknown>,
    make: (name) => hook(name),
    broken: (name) => ({ kind: "hook", name, point: "StepEnd" }),
    fault: "has no run function",
  },
  {
    kind: "gate",
    label: "tool gate",
    create: createGateRegistry as () => NamedRegistry<unknown>,
    make: gate,
    broken: (name) => ({ kind: "gate", name }),
    fault: "has no check function",
  },
  {
    kind: "guard",
    label: "run-end guard",
    create: createGuardRegistry as () => NamedRegistry<unknown>,
    make: guard,
    broken: (name) => ({ kind: "guard", name }),
    fault: "has no decide function",
  },
  {
    kind: "compactor",
    label: "compactor",
    create: createCompactorRegistry as () => NamedRegistry<unknown>,
    make: compactor,
    broken: (name) => ({ kind: "compactor", name }),
    fault: "has no compact function",
  },
  {
    kind: "action",
    label: "action kind",
    create: createActionRegistry as () => NamedRegistry<unknown>,
    make: action,
    broken: (name) => ({ kind: "action", name }),
    fault: "has no run function",
  },
  {
    kind: "state",
    label: "state key",
    create: createStateKeyRegistry as () => NamedRegistry<unknown>,
    make: (name) => stateKey(name),
    broken: (name) => ({ kind: "state", name }),
    fault: "has no initial value",
  },
];

for (const row of ROWS) {
  Deno.test(`${row.kind}: install, get, list, duplicate, bad shape, remove, purge, version`, () => {
    const registry = row.create();
    const v0 = registry.version;
    const capability = row.make("x");
    const handle = contributionOf(installLoose(registry, "a", capability));
    strictEqual(handle.kind, row.kind);
    strictEqual(handle.name, "x");
    deepStrictEqual(handle.ids, ["x"]);
    ok(registry.version > v0);
    deepStrictEqual(registry.get("x"), { name: "x", owner: "a", capability });
    deepStrictEqual(registry.list(), [{ name: "x", owner: "a", capability }]);
    deepStrictEqual(registry.entries(), [{ id: "x", owner: "a" }]);

    const v1 = registry.version;
    const clash = installLoose(registry, "b", row.make("x"));
    strictEqual(
      errorOf(clash),
      `${row.label} 'x' of plugin 'b' collides with the ${row.label} of plugin 'a'`,
    );
    deepStrictEqual(conflictOf(clash), { id: "x", owner: "a" });
    const bad = installLoose(registry, "b", row.broken("y"));
    match(errorOf(bad), new RegExp(`^${row.label} 'y' of plugin 'b' ${row.fault}`));
    strictEqual(conflictOf(bad), undefined);
    match(
      errorOf(installLoose(registry, "b", { ...(row.make("z") as object), kind: "other" })),
      new RegExp(`^${row.label} 'z' of plugin 'b' has kind 'other', not '${row.kind}'$`),
    );
    strictEqual(registry.version, v1, "failed installs change nothing");

    handle.remove();
    handle.remove();
    strictEqual(registry.get("x"), undefined);
    deepStrictEqual(registry.list(), []);

    contributionOf(installLoose(registry, "b", row.make("x")));
    contributionOf(installLoose(registry, "b", row.make("w")));
    contributionOf(installLoose(registry, "c", row.make("v")));
    const v2 = registry.version;
    deepStrictEqual(registry.purge("b"), ["x", "w"]);
    ok(registry.version > v2);
    deepStrictEqual(registry.entries(), [{ id: "v", owner: "c" }]);
  });
}

Deno.test("createRegistries builds the six extension registries under their kinds", () => {
  const registries = createRegistries();
  const kinds = ["hook", "gate", "guard", "compactor", "action", "state"] as const;
  for (const kind of kinds) ok(registries[kind] !== undefined, kind);
  strictEqual(Object.keys(registries).length, 14);
  contributionOf(registries.hook.install("p", hook("h"), services("p")));
  contributionOf(registries.gate.install("p", gate("h"), services("p")));
  contributionOf(registries.guard.install("p", guard("h"), services("p")));
  contributionOf(registries.compactor.install("p", compactor("h"), services("p")));
  contributionOf(registries.action.install("p", action("h"), services("p")));
  contributionOf(registries.state.install("p", stateKey("h"), services("p")));
  for (const kind of kinds) {
    deepStrictEqual(registries[kind].entries(), [{ id: "h", owner: "p" }], "names are per kind");
  }
});
