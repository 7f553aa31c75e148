// Skills from markdown, end to end in a session against the fake provider: only names and
// descriptions in the prompt until the `skill` tool loads one; its files read through the tool,
// also from outside the workspace and with no one to ask; `allowed-tools` narrowing the tools
// while the skill is active, and the end of the turn ending it.

import assert from "node:assert/strict";
import type { ApprovalAnswer } from "@amber/core/kernel";
import { markdown, openFilesSession, seen } from "./_files_session.ts";

const RELEASE = {
  "ws/.amber/skills/release/SKILL.md": markdown(
    ["name: release", "description: Cut a release of this project."],
    "RELEASE-STEPS: bump the version, then tag it.",
  ),
  "ws/.amber/skills/release/checklist.md": "CHECKLIST-TEXT: changelog written\n",
  "ws/.amber/skills/release/scripts/tag.sh": "git tag v$1\n",
};

Deno.test("a skill's body reaches the model only after the skill tool loads it", async () => {
  await using s = await openFilesSession(RELEASE, [
    { toolCalls: [{ name: "skill", arguments: { name: "release" } }] },
    { toolCalls: [{ name: "skill", arguments: { name: "release", file: "checklist.md" } }] },
    { text: "released" },
  ]);
  const result = await s.session.turn("cut the release");
  assert.equal(result.cause.kind, "completed");
  const first = seen(s.server, 0);
  assert.match(first.system, /- release: Cut a release of this project\./);
  assert.doesNotMatch(first.system, /RELEASE-STEPS/);
  assert.deepEqual(first.tool("skill")?.parameters.properties.name.enum, ["release"]);
  const loaded = seen(s.server, 1).results[0];
  assert.match(loaded, /RELEASE-STEPS: bump the version, then tag it\./);
  assert.match(loaded, /- checklist\.md\n- scripts\/tag\.sh/);
  assert.doesNotMatch(loaded, /SKILL\.md/, "the listing leaves out SKILL.md itself");
  assert.equal(seen(s.server, 2).results[1], "CHECKLIST-TEXT: changelog written\n");
});

Deno.test("a skill outside the workspace reads its files with no one to ask, and only its files", async () => {
  await using s = await openFilesSession({
    "config/skills/notes/SKILL.md": markdown(["description: Keep notes."], "Write notes."),
    "config/skills/notes/template.md": "TEMPLATE\n",
    "config/secret.txt": "NOT FOR THE MODEL\n",
  }, [
    {
      toolCalls: [
        { id: "a", name: "skill", arguments: { name: "notes", file: "template.md" } },
        { id: "b", name: "skill", arguments: { name: "notes", file: "../../secret.txt" } },
      ],
    },
    { text: "ok" },
  ]);
  // No approval handler: anything that needed approval would be denied.
  await s.session.turn("take notes");
  const [template, escape] = seen(s.server, 1).results;
  assert.equal(template, "TEMPLATE\n");
  assert.match(escape, /'\.\.\/\.\.\/secret\.txt' is not a file of the skill 'notes'/);
});

Deno.test("allowed-tools narrows the tools while the skill is active; the turn's end ends it", async () => {
  const always = (): Promise<ApprovalAnswer> => Promise.resolve("once");
  await using s = await openFilesSession({
    "ws/.amber/skills/inspect/SKILL.md": markdown(
      ["description: Inspect files.", "allowed-tools: Read, Grep"],
      "Only look.",
    ),
    "ws/.amber/skills/other/SKILL.md": markdown(["description: Anything."], "Do anything."),
    "ws/notes.txt": "hello\n",
  }, [
    { toolCalls: [{ name: "skill", arguments: { name: "inspect" } }] },
    {
      toolCalls: [
        { id: "b", name: "bash", arguments: { command: "echo narrowed" } },
        { id: "r", name: "read", arguments: { path: "notes.txt" } },
        { id: "o", name: "skill", arguments: { name: "other" } },
      ],
    },
    { text: "looked" },
    // The next turn: nothing narrows bash any more.
    { toolCalls: [{ name: "bash", arguments: { command: "echo free" } }] },
    { text: "ran" },
  ]);
  await s.session.turn("inspect", { ask: always });
  const [, bash, read, other] = seen(s.server, 2).results;
  assert.match(bash, /the skill 'inspect' is active and allows only: Read, Grep/);
  assert.match(read, /hello/);
  assert.match(other, /the skill 'inspect' is active/, "loading another skill could widen");
  await s.session.turn("now run it", { ask: always });
  const free = seen(s.server, 4).results.at(-1)!;
  assert.match(free, /free/);
  assert.doesNotMatch(free, /is active/);
});

Deno.test("Claude Code's skills come as skill_claude beside amber's own; a folder without SKILL.md is reported", async () => {
  await using s = await openFilesSession({
    "ws/.amber/skills/release/SKILL.md": markdown(["description: Release."], "Release it."),
    "ws/.amber/skills/broken/notes.md": "no SKILL.md here\n",
    "ws/.claude/skills/pdf/SKILL.md": markdown(
      ["name: pdf", "description: Work with PDF files."],
      "PDF-STEPS",
    ),
  }, [
    { toolCalls: [{ name: "skill_claude", arguments: { name: "pdf" } }] },
    { text: "done" },
  ]);
  await s.session.turn("read the pdf");
  const first = seen(s.server, 0);
  assert.ok(first.tools.includes("skill") && first.tools.includes("skill_claude"));
  assert.match(first.system, /- release: Release\./);
  assert.match(first.system, /call `skill_claude` with its name first[^]*- pdf: Work with PDF/);
  assert.match(seen(s.server, 1).results[0], /PDF-STEPS/);
  assert.ok(
    s.diagnostics.some((d) => d.pluginId === "files.skills" && /broken/.test(d.message)),
    JSON.stringify(s.diagnostics),
  );
});
