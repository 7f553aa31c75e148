// Markdown commands as a user meets them: `amber run "/review src"` in a real subprocess against
// the fake provider, a `.claude/` folder laid out as a real project has it, and the switch that
// turns Claude Code's files off.

import { deepStrictEqual, doesNotMatch, match, strictEqual } from "node:assert/strict";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { tempDir } from "../_helpers.ts";
import { amberIn as amber, layout } from "./_files_session.ts";

interface Chat {
  readonly messages: { readonly role: string; readonly content: string | null }[];
}

// The user's message and the system prompt of one request the fake provider received.
function request(server: FakeProvider, i: number): { user: string; system: string } {
  const { messages } = server.chats[i].body as Chat;
  return {
    user: messages.filter((m) => m.role === "user").map((m) => m.content).join("\n"),
    system: messages.filter((m) => m.role === "system").map((m) => m.content).join("\n"),
  };
}

Deno.test("amber run '/review src' sends the expanded template, with the included file", async () => {
  await using tmp = await tempDir();
  const workspace = `${tmp.dir}/ws`;
  await layout(tmp.dir, {
    "home/.keep": "",
    "config/.keep": "",
    "ws/src/main.ts": "export const answer = 42;\n",
    "ws/.amber/commands/review.md": [
      "---",
      "description: Review code for bugs",
      "argument-hint: [path]",
      "---",
      "Review $1 carefully (arguments: $ARGUMENTS).",
      "@$1/main.ts",
      "",
    ].join("\n"),
  });
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "Looks fine." });
  const result = await amber(tmp.dir, workspace, [
    "run",
    "/review src",
    "--base-url",
    `${server.url}/v1`,
  ]);
  strictEqual(result.code, 0, result.err);
  strictEqual(result.out, "Looks fine.\n");
  strictEqual(server.chats.length, 1);
  const { user } = request(server, 0);
  match(user, /^Review src carefully \(arguments: src\)\./);
  match(user, /<file path="src\/main\.ts">\nexport const answer = 42;\n<\/file>/);
  doesNotMatch(user, /\$1|@src/);
});

Deno.test("a refused `@../../etc/passwd` sends nothing and says why", async () => {
  await using tmp = await tempDir();
  const workspace = `${tmp.dir}/ws`;
  await layout(tmp.dir, {
    "home/.keep": "",
    "config/.keep": "",
    "ws/.amber/commands/leak.md": "Summarize @../../etc/passwd\n",
  });
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const result = await amber(tmp.dir, workspace, [
    "run",
    "/leak",
    "--base-url",
    `${server.url}/v1`,
  ]);
  strictEqual(server.chats.length, 0, "nothing reaches the model");
  match(result.out + result.err, /@\.\.\/\.\.\/etc\/passwd is outside the workspace/);
});

// A project as Claude Code users keep it: commands in `.claude/commands` (one namespaced), with
// Claude Code's frontmatter, and a CLAUDE.md at the root.
const CLAUDE_PROJECT = {
  "home/.keep": "",
  "ws/CLAUDE.md": "# Project\n\nAlways run the linter before committing.\n",
  "ws/.claude/settings.json": "{}\n",
  "ws/.claude/commands/fix-issue.md": [
    "---",
    "allowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)",
    "argument-hint: [issue-number] [priority]",
    "description: Fix a GitHub issue",
    "---",
    "",
    "Fix issue #$1 with priority $2. Follow the coding standards.",
    "",
  ].join("\n"),
  "ws/.claude/commands/frontend/component.md": "Create a React component named $ARGUMENTS.\n",
};

Deno.test("a .claude/ folder works unchanged: commands, namespaces and CLAUDE.md", async () => {
  await using tmp = await tempDir();
  const workspace = `${tmp.dir}/ws`;
  await layout(tmp.dir, { ...CLAUDE_PROJECT, "config/.keep": "" });
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "Fixed." }, { text: "Made." });
  const fix = await amber(tmp.dir, workspace, [
    "run",
    "/fix-issue 123 high",
    "--base-url",
    `${server.url}/v1`,
  ]);
  strictEqual(fix.code, 0, fix.err);
  const first = request(server, 0);
  strictEqual(first.user.trim(), "Fix issue #123 with priority high. Follow the coding standards.");
  match(first.system, /from CLAUDE\.md in the workspace root[^]*Always run the linter/);
  const component = await amber(tmp.dir, workspace, [
    "run",
    "/frontend:component Button",
    "--base-url",
    `${server.url}/v1`,
  ]);
  strictEqual(component.code, 0, component.err);
  strictEqual(request(server, 1).user.trim(), "Create a React component named Button.");
});

Deno.test("compat: {claude: false} turns .claude/ commands and CLAUDE.md off", async () => {
  await using tmp = await tempDir();
  const workspace = `${tmp.dir}/ws`;
  await layout(tmp.dir, {
    ...CLAUDE_PROJECT,
    "config/config.yaml": "compat:\n  claude: false\n",
  });
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "Which issue?" });
  const result = await amber(tmp.dir, workspace, [
    "run",
    "/fix-issue 123 high",
    "--base-url",
    `${server.url}/v1`,
  ]);
  strictEqual(result.code, 0, result.err);
  const { user, system } = request(server, 0);
  // No such command: the line goes to the model as it was typed.
  strictEqual(user, "/fix-issue 123 high");
  doesNotMatch(system, /CLAUDE\.md|Always run the linter/);
  const listed = await amber(tmp.dir, workspace, ["plugins", "list"]);
  deepStrictEqual(listed.out.match(/files\.\S+-claude/g), null);
});

Deno.test("a wrong compat value is reported with its line and Claude Code's files stay read", async () => {
  await using tmp = await tempDir();
  await layout(tmp.dir, {
    "home/.keep": "",
    "config/config.yaml": "model: x\ncompat:\n  claude: no\n",
  });
  const result = await amber(tmp.dir, tmp.dir, ["config", "check"]);
  strictEqual(result.code, 1);
  match(
    result.out + result.err,
    /config\.yaml:3:\d+: compat\.claude: expected true or false, found string/,
  );
});
