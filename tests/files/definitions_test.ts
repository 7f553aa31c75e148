// Reading markdown definitions: frontmatter as people write it (Claude Code's included), and the
// three kinds' fields, each wrong one named with its line.

import { deepStrictEqual, match, strictEqual, throws } from "node:assert/strict";
import { FrontmatterError, frontmatterReader } from "../../cli/files/frontmatter.ts";
import { loadFolder, MAX_DESCRIPTION_CHARS, scanFolder } from "../../cli/files/definitions.ts";

const read = await frontmatterReader();

Deno.test("frontmatter: CRLF, a BOM, `...` as the closing line, and none at all", () => {
  const crlf = read("\uFEFF---\r\ndescription: Hi\r\n...\r\nBody\r\n", "a.md");
  deepStrictEqual(crlf.data, { description: "Hi" });
  strictEqual(crlf.body.trim(), "Body");
  strictEqual(crlf.bodyLine, 4);
  const none = read("Just a prompt\n", "b.md");
  deepStrictEqual(none.data, {});
  strictEqual(none.body, "Just a prompt\n");
  const empty = read("---\n---\nBody", "c.md");
  deepStrictEqual(empty.data, {});
  strictEqual(empty.body, "Body");
});

Deno.test("frontmatter: Claude Code's bracketed hints are text, not YAML lists", () => {
  const file = read(
    "---\nargument-hint: [pr-number] [priority] [assignee]\nallowed-tools: Bash(git add:*)\n---\n",
    "pr.md",
  );
  strictEqual(file.data["argument-hint"], "[pr-number] [priority] [assignee]");
  strictEqual(file.data["allowed-tools"], "Bash(git add:*)");
  strictEqual(read("---\nargument-hint: [path]\n---\n", "p.md").data["argument-hint"], "[path]");
});

Deno.test("frontmatter errors name the file and the line counted from the file's top", () => {
  const error = (text: string): FrontmatterError => {
    try {
      read(text, "x.md");
    } catch (caught) {
      if (caught instanceof FrontmatterError) return caught;
      throw caught;
    }
    throw new Error("no error");
  };
  const tab = error('---\ndescription: ok\nmodel: "open\n---\n');
  strictEqual(tab.line, 3);
  strictEqual(tab.path, "x.md");
  match(tab.message, /^x\.md:3: /);
  strictEqual(error("---\n- a\n- b\n---\n").line, 2);
  match(error("---\n- a\n---\n").detail, /not a mapping/);
  throws(() => read("---\nno end\n", "y.md"), /y\.md:1: .*never closed/);
});

Deno.test("skills: the folder names one without `name`; a folder without SKILL.md is reported", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/pdf/scripts`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/pdf/SKILL.md`,
      "---\ndescription: Fill PDF forms\nallowed-tools: Read, Bash(python:*)\n---\nUse scripts/fill.py\n",
    );
    await Deno.mkdir(`${dir}/empty`);
    await Deno.mkdir(`${dir}/nameless`);
    await Deno.writeTextFile(`${dir}/nameless/SKILL.md`, "No frontmatter\n");
    const { items, problems } = await loadFolder("skills", dir);
    deepStrictEqual(items.map((s) => [s.name, s.description, s.allowedTools]), [
      ["pdf", "Fill PDF forms", ["Read", "Bash(python:*)"]],
    ]);
    strictEqual(items[0].dir, `${dir}/pdf`);
    strictEqual(items[0].body, "Use scripts/fill.py\n");
    deepStrictEqual(problems.map((p) => [p.path.slice(dir.length), p.message]), [
      ["/empty", "holds no SKILL.md, so it is not a skill"],
      ["/nameless/SKILL.md", "has no `description` in its frontmatter"],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agents: tools as a list or a comma line; the body is the system prompt", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/reviewer.md`,
      "---\nname: code-reviewer\ndescription: Reviews code\ntools: Read, Grep, Glob\nmodel: sonnet\n---\n\nYou review code.\n",
    );
    await Deno.writeTextFile(
      `${dir}/tester.md`,
      "---\ndescription: Runs tests\ntools:\n  - bash\n  - read\n---\nYou run tests.\n",
    );
    await Deno.writeTextFile(`${dir}/wrong.md`, "---\ndescription: x\ntools: 3\n---\nx\n");
    const { items, problems } = await loadFolder("agents", dir);
    deepStrictEqual(items.map((a) => [a.name, a.tools, a.model, a.systemPrompt]), [
      ["code-reviewer", ["Read", "Grep", "Glob"], "sonnet", "You review code."],
      ["tester", ["bash", "read"], undefined, "You run tests."],
    ]);
    deepStrictEqual(problems.map((p) => [p.line, p.message]), [
      [3, "`tools` must be a list or a comma-separated line, not number"],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a skill's or an agent's description over the bound is reported, the others load", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const long = "x".repeat(MAX_DESCRIPTION_CHARS + 1);
    await Deno.writeTextFile(`${dir}/huge.md`, `---\nname: huge\ndescription: ${long}\n---\nx\n`);
    await Deno.writeTextFile(`${dir}/fits.md`, `---\ndescription: ${long.slice(1)}\n---\nx\n`);
    const { items, problems } = await loadFolder("agents", dir);
    deepStrictEqual(items.map((a) => a.name), ["fits"]);
    deepStrictEqual(problems.map((p) => [p.path.slice(dir.length), p.line, p.message]), [
      ["/huge.md", 3, "`description` has 1025 characters; at most 1024 are allowed"],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("commands: subfolders are namespaces, names are lower case, dot files are skipped", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/Git/.hidden`, { recursive: true });
    await Deno.writeTextFile(`${dir}/Git/Commit.md`, "Commit\n");
    await Deno.writeTextFile(`${dir}/Git/.hidden/x.md`, "x\n");
    await Deno.writeTextFile(`${dir}/.draft.md`, "draft\n");
    const { items } = await loadFolder("commands", dir);
    deepStrictEqual(items.map((c) => c.name), ["git:commit"]);
    const before = scanFolder("commands", dir).fingerprint;
    await Deno.writeTextFile(`${dir}/Git/Commit.md`, "Commit now\n");
    strictEqual(scanFolder("commands", dir).fingerprint === before, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
