// The layout of the run kernel (core/kernel/): what `@amber/core/kernel` exports, modules of one
// job each kept small, and the private `_` modules reached from nowhere outside the kernel.

import { deepStrictEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as kernel from "@amber/core/kernel";
import type {
  ApprovalAnswer,
  ApprovalRequest,
  EndCause,
  LoadedSession,
  ModelPort,
  ResolvedSelection,
  RunEvent,
  RunFailure,
  RunOptions,
  RunResult,
  SelectionRequest,
  SessionHeader,
  SessionSummary,
  StepRecord,
} from "@amber/core/kernel";
import { MEMBERS, projectModules } from "../../.ci/cycles.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const KERNEL = join(ROOT, "core", "kernel");

Deno.test("@amber/core/kernel exports exactly these values", () => {
  deepStrictEqual(Object.keys(kernel).sort(), [
    "SessionFile",
    "TranscriptError",
    "buildEnvironment",
    "compactConversation",
    "listSessions",
    "newSessionId",
    "parseSession",
    "resolveSelection",
    "runAgent",
    "runSelection",
  ]);
});

Deno.test("@amber/core/kernel exports the types of a run, a selection and a session", () => {
  // Type-checked: a name missing from the export list fails `deno test` before it runs.
  type Exported = [
    ApprovalAnswer,
    ApprovalRequest,
    EndCause,
    LoadedSession,
    ModelPort,
    ResolvedSelection,
    RunEvent,
    RunFailure,
    RunOptions,
    RunResult,
    SelectionRequest,
    SessionHeader,
    SessionSummary,
    StepRecord,
  ];
  const answer: Exported[0] = "always";
  const cause: Exported[2] = { kind: "maxSteps", steps: 3 };
  deepStrictEqual([answer, cause.kind], ["always", "maxSteps"]);
});

Deno.test("every module of the kernel stays under 400 lines", async () => {
  const long: string[] = [];
  for (const path of await projectModules(KERNEL, ["."])) {
    const lines = (await Deno.readTextFile(path)).split("\n").length;
    if (lines > 400) long.push(`${path.slice(KERNEL.length + 1)}: ${lines}`);
  }
  deepStrictEqual(long, []);
});

Deno.test("the kernel's private modules are imported only from inside the kernel", async () => {
  const files = await projectModules(ROOT, [...MEMBERS, "tests", "bench"]);
  ok(files.some((path) => path.startsWith(`${KERNEL}/_`)), "the kernel has no private modules");
  const outside = [];
  for (const path of files) {
    if (path.startsWith(`${KERNEL}/`)) continue;
    if (/kernel\/_\w+\.ts/.test(await Deno.readTextFile(path))) {
      outside.push(path.slice(ROOT.length));
    }
  }
  deepStrictEqual(outside, []);
});
