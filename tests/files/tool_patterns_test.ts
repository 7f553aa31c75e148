// The tool patterns of markdown files come from whatever repository is open, so matching one
// must take time in proportion to its length, whatever it is written as.

import { equal } from "node:assert/strict";
import { toolMatcher } from "../../cli/files/tool_patterns.ts";

Deno.test("globs match as before: `*` any run, `?` one character, any case", () => {
  equal(toolMatcher("mcp__GH__*")("mcp__gh__issues"), true);
  equal(toolMatcher("mcp__gh__*")("mcp__gl__issues"), false);
  equal(toolMatcher("re?d")("READ"), true);
  equal(toolMatcher("re?d")("reed"), true);
  equal(toolMatcher("re?d")("rd"), false);
  equal(toolMatcher("*")("anything"), true);
  equal(toolMatcher("*r*t*")("write"), true);
  equal(toolMatcher("*e*t")("write"), false);
  equal(toolMatcher("a.b*")("axbc"), false);
  equal(toolMatcher("a.b*")("a.bc"), true);
});

Deno.test("an argument pattern names its tool, and thousands of `(` take no time", () => {
  equal(toolMatcher("Bash(git status:*)")("bash"), true);
  equal(toolMatcher("Bash(a(b)c)")("bash"), true);
  equal(toolMatcher("Bash(")("bash"), false);
  // Quadratic before: these took minutes, so the test did not end.
  equal(toolMatcher("(".repeat(200_000) + "x")("x"), false);
  equal(toolMatcher("(".repeat(200_000))("bash"), false);
});

Deno.test("a glob written to backtrack does not hang the tool gate", () => {
  // As a regular expression this backtracked for hours, so the test did not end.
  const hostile = toolMatcher("*a".repeat(12) + "z");
  equal(hostile("a".repeat(40)), false);
  equal(hostile("a".repeat(40) + "z"), true);
});
