import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import fc from "fast-check";
import {
  admits,
  any,
  type BoundAxis,
  type CapabilityBound,
  describeIdBound,
  exact,
  type IdBound,
  namespace,
  namespacedExact,
} from "../../core/bound.ts";
import { axisOf, type BoundContribution, boundId, enforceBound } from "../../core/bound_check.ts";
import { CAPABILITY_KINDS, type CapabilityKind } from "../../core/contribution.ts";
import { PHASE_HOOK_POINTS, type PhaseHookPoint } from "../../core/hooks.ts";
import { CapabilityBoundError, ResolutionError } from "../../core/resolution_error.ts";

const BOUND_AXES: readonly BoundAxis[] = [
  "tools",
  "commands",
  "panels",
  "segments",
  "prompts",
  "flavors",
  "presets",
  "wallets",
  "allowances",
  "toolGates",
  "runEndGuards",
  "compactors",
  "actionKinds",
  "stateKeys",
];

/** The (axis, id) pairs of a failure list, which is what a property can predict. */
function violations(failures: readonly ResolutionError[]): [string | undefined, string][] {
  return failures.map((f) => [f.axis, f.id ?? ""]);
}

Deno.test("id_bound_admits_by_variant", () => {
  ok(admits(any(), "anything"));
  ok(admits(any(), ""));

  ok(admits(exact("read", "write"), "read"));
  ok(admits(exact("read", "write"), "write"));
  ok(!admits(exact("read", "write"), "rm"));
  ok(!admits(exact("read"), "rea"), "exact is not a prefix match");

  ok(admits(namespace("mcp__"), "mcp__gh__issues"));
  ok(admits(namespace("mcp__"), "mcp__"));
  ok(!admits(namespace("mcp__"), "mcp_x"));
  ok(admits(namespace(""), "anything"), "the empty namespace holds every id");

  const bound = namespacedExact("mcp__gh__", ["mcp__gh__issues", "stray"]);
  ok(admits(bound, "mcp__gh__issues"));
  ok(!admits(bound, "mcp__gh__pulls"), "a stray id under a valid prefix fails closed");
  ok(!admits(bound, "stray"), "a listed id outside the prefix fails closed");
});

Deno.test("id_bound_default_is_deny_all", () => {
  ok(!admits(undefined, "read"));
  ok(!admits(exact(), "read"));
  ok(!admits(exact(), ""));
  strictEqual(describeIdBound(undefined), "exact []");

  const everything = CAPABILITY_KINDS.map((kind): BoundContribution =>
    kind === "hook" ? { kind, ids: ["h"], point: "StepEnd" } : { kind, ids: [`${kind}_1`] }
  );
  strictEqual(enforceBound("p", undefined, everything).length, everything.length);
  strictEqual(enforceBound("p", {}, everything).length, everything.length);
  strictEqual(
    enforceBound("p", { tools: exact(), phaseHooks: [] }, everything).length,
    CAPABILITY_KINDS.length,
  );
});

Deno.test("enforce_bound_accepts_a_subset", () => {
  const bound: CapabilityBound = {
    tools: exact("read", "write", "bash"),
    commands: exact("plan"),
    stateKeys: namespace("plan."),
    actionKinds: any(),
    phaseHooks: ["StepEnd", "AfterTool"],
  };
  deepStrictEqual(
    enforceBound("planner", bound, [
      { kind: "tool", ids: ["read", "write"] },
      { kind: "command", ids: ["plan"] },
      { kind: "state", ids: ["plan.items", "plan.done"] },
      { kind: "action", ids: ["whatever"] },
      { kind: "hook", ids: ["count"], point: "StepEnd" },
      { kind: "tool", ids: [] },
    ]),
    [],
  );
  deepStrictEqual(enforceBound("none", undefined, []), [], "contributing nothing is in any bound");
});

Deno.test("enforce_bound_rejects_out_of_bound_contributions", () => {
  const bound: CapabilityBound = { tools: exact("read", "write"), phaseHooks: ["StepEnd"] };
  const failures = enforceBound("x", bound, [
    { kind: "tool", ids: ["read", "rm", "write", "mv"] },
    { kind: "command", ids: ["x"] },
    { kind: "hook", ids: ["early"], point: "StepStart" },
    { kind: "hook", ids: ["late"], point: "StepEnd" },
    { kind: "hook", ids: ["nowhere"] },
  ]);
  deepStrictEqual(failures.map((f) => f.message), [
    "plugin 'x' contributes tool 'rm', outside its bound (tools: exact [read, write])",
    "plugin 'x' contributes tool 'mv', outside its bound (tools: exact [read, write])",
    "plugin 'x' contributes command 'x', outside its bound (commands: exact [])",
    "plugin 'x' contributes hook 'early' at StepStart, outside its bound (phaseHooks: [StepEnd])",
    "plugin 'x' contributes hook 'nowhere' without a phase hook point",
  ]);
  deepStrictEqual(violations(failures), [
    ["tools", "rm"],
    ["tools", "mv"],
    ["commands", "x"],
    ["phaseHooks", "StepStart"],
    ["phaseHooks", "nowhere"],
  ]);
  for (const failure of failures) {
    ok(failure instanceof ResolutionError);
    strictEqual(failure.name, "ResolutionError");
    strictEqual(failure.rule, "bound");
    deepStrictEqual(failure.pluginIds, ["x"]);
  }
  strictEqual(
    enforceBound("y", { tools: any() }, [{ kind: "hook", ids: ["h"], point: "AfterTool" }])[0]
      .message,
    "plugin 'y' contributes hook 'h' at AfterTool, outside its bound (phaseHooks: [])",
    "absent phaseHooks admit no point",
  );
});

Deno.test("enforce_bound_accepts_a_dynamic_tool_within_its_namespace", () => {
  deepStrictEqual(
    enforceBound("mcp", { tools: namespace("mcp__gh__") }, [
      { kind: "tool", ids: ["mcp__gh__issues", "mcp__gh__pulls"] },
    ]),
    [],
  );
  deepStrictEqual(
    enforceBound("mcp", { tools: namespacedExact("mcp__gh__", ["mcp__gh__issues"]) }, [
      { kind: "tool", ids: ["mcp__gh__issues"] },
    ]),
    [],
  );
});

Deno.test("enforce_bound_rejects_a_dynamic_tool_outside_its_namespace", () => {
  const outside = enforceBound("mcp", { tools: namespace("mcp__gh__") }, [
    { kind: "tool", ids: ["mcp__gh__issues", "mcp__slack__post", "bash"] },
  ]);
  deepStrictEqual(violations(outside), [["tools", "mcp__slack__post"], ["tools", "bash"]]);
  strictEqual(
    outside[0].message,
    "plugin 'mcp' contributes tool 'mcp__slack__post', outside its bound " +
      "(tools: namespace 'mcp__gh__')",
  );

  const stray = enforceBound(
    "mcp",
    { tools: namespacedExact("mcp__gh__", ["mcp__gh__issues"]) },
    [{ kind: "tool", ids: ["mcp__gh__issues", "mcp__gh__delete_repo"] }],
  );
  deepStrictEqual(violations(stray), [["tools", "mcp__gh__delete_repo"]]);
  strictEqual(
    stray[0].message,
    "plugin 'mcp' contributes tool 'mcp__gh__delete_repo', outside its bound " +
      "(tools: namespacedExact 'mcp__gh__' [mcp__gh__issues])",
  );
});

Deno.test("enforce_bound checks flavors and presets on their own axes, by bare flavor", () => {
  const contribution: BoundContribution = {
    kind: "provider",
    ids: ["gemini-pro", "gemini-flash", "flavor:gemini"],
  };
  deepStrictEqual(
    enforceBound("gemini", {
      presets: exact("gemini-pro", "gemini-flash"),
      flavors: exact("gemini"),
    }, [contribution]),
    [],
  );
  const noFlavor = enforceBound("gemini", { presets: any() }, [contribution]);
  deepStrictEqual(violations(noFlavor), [["flavors", "gemini"]]);
  strictEqual(
    noFlavor[0].message,
    "plugin 'gemini' contributes flavor 'gemini', outside its bound (flavors: exact [])",
  );
  deepStrictEqual(
    violations(enforceBound("gemini", { flavors: any() }, [contribution])),
    [["presets", "gemini-pro"], ["presets", "gemini-flash"]],
    "a flavor bound says nothing about presets",
  );
  deepStrictEqual(
    violations(enforceBound("gemini", { presets: any() }, [{ kind: "tool", ids: ["flavor:x"] }])),
    [["tools", "flavor:x"]],
    "only a provider's ids are flavors",
  );
});

Deno.test("axisOf and boundId map every registry kind to its axis", () => {
  const expected: { [K in CapabilityKind]: BoundAxis | "phaseHooks" } = {
    tool: "tools",
    prompt: "prompts",
    status: "segments",
    panel: "panels",
    command: "commands",
    provider: "presets",
    wallet: "wallets",
    allowance: "allowances",
    hook: "phaseHooks",
    gate: "toolGates",
    guard: "runEndGuards",
    compactor: "compactors",
    action: "actionKinds",
    state: "stateKeys",
  };
  for (const kind of CAPABILITY_KINDS) strictEqual(axisOf(kind, "x"), expected[kind], kind);
  strictEqual(axisOf("provider", "flavor:openai"), "flavors");
  strictEqual(boundId("provider", "flavor:openai"), "openai");
  strictEqual(boundId("provider", "openai-gpt"), "openai-gpt");
  strictEqual(boundId("tool", "flavor:openai"), "flavor:openai");
});

Deno.test("describeIdBound reads each variant", () => {
  strictEqual(describeIdBound(any()), "any");
  strictEqual(describeIdBound(exact("a", "b")), "exact [a, b]");
  strictEqual(describeIdBound(exact()), "exact []");
  strictEqual(describeIdBound(namespace("mcp__")), "namespace 'mcp__'");
  strictEqual(describeIdBound(namespacedExact("p", ["pa"])), "namespacedExact 'p' [pa]");
});

Deno.test("CapabilityBoundError lists every failure, one line each", () => {
  const failures = enforceBound("x", { tools: exact("read") }, [
    { kind: "tool", ids: ["rm", "mv"] },
  ]);
  const error = new CapabilityBoundError(failures);
  strictEqual(error.name, "CapabilityBoundError");
  strictEqual(
    error.message,
    "the plugin selection does not resolve:\n" +
      "plugin 'x' contributes tool 'rm', outside its bound (tools: exact [read])\n" +
      "plugin 'x' contributes tool 'mv', outside its bound (tools: exact [read])",
  );
  deepStrictEqual(error.failures, failures);

  const duplicate = new ResolutionError({
    rule: "duplicate-id",
    pluginIds: ["a", "b"],
    axis: "tools",
    id: "read",
    message: "plugins 'a' and 'b' both contribute tool 'read'",
  });
  deepStrictEqual(duplicate.pluginIds, ["a", "b"]);
  ok(!("path" in duplicate), "absent fields stay absent");
});

// Reference semantics, written independently of the implementation.
function referenceAdmits(bound: IdBound | undefined, id: string): boolean {
  if (bound === undefined) return false;
  if (bound.kind === "any") return true;
  const listed = "ids" in bound ? new Set(bound.ids).has(id) : true;
  const prefixed = "prefix" in bound ? id.slice(0, bound.prefix.length) === bound.prefix : true;
  return listed && prefixed;
}

// Small alphabets, so that prefixes and listed ids actually hit.
const idArb = fc.stringMatching(/^[ab_]{0,4}$/);
const idBoundArb: fc.Arbitrary<IdBound> = fc.oneof(
  fc.constant(any()),
  fc.array(idArb, { maxLength: 4 }).map((ids) => exact(...ids)),
  idArb.map((prefix) => namespace(prefix)),
  fc.tuple(idArb, fc.array(idArb, { maxLength: 4 })).map(([p, ids]) => namespacedExact(p, ids)),
);
const boundArb: fc.Arbitrary<CapabilityBound | undefined> = fc.option(
  fc.record({
    tools: fc.option(idBoundArb, { nil: undefined }),
    presets: fc.option(idBoundArb, { nil: undefined }),
    flavors: fc.option(idBoundArb, { nil: undefined }),
    stateKeys: fc.option(idBoundArb, { nil: undefined }),
    phaseHooks: fc.option(fc.subarray([...PHASE_HOOK_POINTS]), { nil: undefined }),
  }, { requiredKeys: [] }),
  { nil: undefined },
);
const contributionArb: fc.Arbitrary<BoundContribution> = fc.oneof(
  fc.record({
    kind: fc.constantFrom<CapabilityKind>("tool", "state", "command"),
    ids: fc.array(idArb, { maxLength: 4 }),
  }),
  fc.record({
    kind: fc.constant<CapabilityKind>("provider"),
    ids: fc.array(fc.oneof(idArb, idArb.map((id) => `flavor:${id}`)), { maxLength: 4 }),
  }),
  fc.record({
    kind: fc.constant<CapabilityKind>("hook"),
    ids: fc.array(idArb, { minLength: 1, maxLength: 2 }),
    point: fc.constantFrom<PhaseHookPoint>(...PHASE_HOOK_POINTS),
  }),
);

Deno.test("property: admits matches its definition", () => {
  fc.assert(fc.property(fc.option(idBoundArb, { nil: undefined }), idArb, (bound, id) => {
    strictEqual(admits(bound, id), referenceAdmits(bound, id));
  }));
});

Deno.test("property: enforceBound rejects exactly the ids its bound does not admit", () => {
  fc.assert(
    fc.property(boundArb, fc.array(contributionArb, { maxLength: 6 }), (bound, contributions) => {
      const expected: [string | undefined, string][] = [];
      for (const c of contributions) {
        if (c.kind === "hook") {
          const point = c.point as PhaseHookPoint;
          if (!(bound?.phaseHooks ?? []).includes(point)) expected.push(["phaseHooks", point]);
          continue;
        }
        for (const id of c.ids) {
          const flavor: boolean = c.kind === "provider" && id.startsWith("flavor:");
          const axis: BoundAxis = c.kind === "tool"
            ? "tools"
            : c.kind === "state"
            ? "stateKeys"
            : c.kind === "command"
            ? "commands"
            : flavor
            ? "flavors"
            : "presets";
          const bare = flavor ? id.slice("flavor:".length) : id;
          if (!referenceAdmits(bound?.[axis], bare)) expected.push([axis, bare]);
        }
      }
      const failures = enforceBound("p", bound, contributions);
      deepStrictEqual(violations(failures), expected);
      ok(failures.every((f) => f.rule === "bound" && f.pluginIds[0] === "p"));
    }),
  );
});

Deno.test("every bound axis is named in a violation message", () => {
  const samples: { readonly [A in BoundAxis]: readonly [CapabilityKind, string] } = {
    tools: ["tool", "id"],
    commands: ["command", "id"],
    panels: ["panel", "id"],
    segments: ["status", "id"],
    prompts: ["prompt", "id"],
    flavors: ["provider", "flavor:id"],
    presets: ["provider", "id"],
    wallets: ["wallet", "id"],
    allowances: ["allowance", "id"],
    toolGates: ["gate", "id"],
    runEndGuards: ["guard", "id"],
    compactors: ["compactor", "id"],
    actionKinds: ["action", "id"],
    stateKeys: ["state", "id"],
  };
  for (const axis of BOUND_AXES) {
    const [kind, id] = samples[axis];
    const [failure] = enforceBound("p", {}, [{ kind, ids: [id] }]);
    strictEqual(failure.axis, axis);
    strictEqual(failure.id, "id");
    ok(failure.message.endsWith(`'id', outside its bound (${axis}: exact [])`), failure.message);
    deepStrictEqual(enforceBound("p", { [axis]: exact("id") }, [{ kind, ids: [id] }]), []);
  }
});
