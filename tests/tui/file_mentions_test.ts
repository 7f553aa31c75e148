// `@` in the input completes workspace files: ranked fuzzily (hits in the file's name and
// shorter paths first), .gitignore respected (git's own listing in a repository, a walk that
// parses the .gitignore files elsewhere), the list built at the first `@` and rebuilt once stale.
// On submit, each `@path` naming a workspace file puts the file into the prompt, capped.

import assert from "node:assert/strict";
import { attachFiles, fileMentions, typedPrompt } from "../../cli/tui/attachments.ts";
import { Drawer, editKey } from "../../cli/tui/drawer.ts";
import { FileIndex, listWorkspaceFiles } from "../../cli/tui/file_index.ts";
import { fuzzyRank } from "../../cli/tui/fuzzy.ts";
import { History, LineEditor } from "../../cli/tui/line_editor.ts";
import { plainText } from "../../cli/tui/lines.ts";

async function tree(files: Record<string, string>): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "amber-files-" });
  for (const [path, text] of Object.entries(files)) {
    const full = `${root}/${path}`;
    await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(full, text);
  }
  return root;
}

const WORKSPACE = {
  ".gitignore": "*.log\n/dist/\nsecrets/\n!keep.log\n",
  "README.md": "# demo\n",
  "src/main.ts": "main\n",
  "src/lib/parser.ts": "parse\n",
  "src/gen/.gitignore": "*.gen.ts\n",
  "src/gen/types.gen.ts": "generated\n",
  "src/gen/index.ts": "index\n",
  "debug.log": "noise\n",
  "keep.log": "kept\n",
  "dist/bundle.js": "bundle\n",
  "secrets/key.txt": "sk-1\n",
  "node_modules/x/index.js": "dep\n",
};

const EXPECTED = [
  ".gitignore",
  "README.md",
  "keep.log",
  "src/gen/.gitignore",
  "src/gen/index.ts",
  "src/lib/parser.ts",
  "src/main.ts",
];

Deno.test("fuzzy ranking: a subsequence matches; name hits, then shorter paths, come first", () => {
  const paths = [
    "docs/mainline/notes.md",
    "src/main.ts",
    "cli/commands/maintain.ts",
    "src/domain.ts",
    "main.ts",
    "mod.ts",
  ];
  assert.deepEqual(fuzzyRank(paths, "main"), [
    "main.ts",
    "src/main.ts",
    "src/domain.ts",
    "cli/commands/maintain.ts",
    "docs/mainline/notes.md",
  ]);
  assert.deepEqual(fuzzyRank(paths, "mts"), [
    "mod.ts",
    "main.ts",
    "src/main.ts",
    "src/domain.ts",
    "cli/commands/maintain.ts",
    "docs/mainline/notes.md",
  ]);
  assert.deepEqual(fuzzyRank(paths, "src/m"), ["src/main.ts", "src/domain.ts"]);
  assert.deepEqual(fuzzyRank(paths, "zz"), []);
  assert.deepEqual(fuzzyRank(paths, "", 2), ["mod.ts", "main.ts"], "no query: shortest first");
});

Deno.test("the walk honours every .gitignore (negation, anchors, directories, nested files) and skips .git and node_modules", async () => {
  const root = await tree({ ...WORKSPACE, ".git/HEAD": "ref\n" });
  try {
    assert.deepEqual(await listWorkspaceFiles(root, { walkOnly: true }), EXPECTED);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("in a git repository, git's listing: tracked and new files, ignored ones left out", async () => {
  const root = await tree(WORKSPACE);
  try {
    const git = (...args: string[]) =>
      new Deno.Command("git", { args, cwd: root, stdout: "null", stderr: "null" }).output();
    if (!(await git("init", "-q")).success) return; // no git here: the walk test covers it
    // A tracked file is listed even when .gitignore would exclude it, as git does.
    await git("add", "-f", "debug.log");
    assert.deepEqual(await listWorkspaceFiles(root), [...EXPECTED, "debug.log"].sort());
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the index is built at the first read, kept, and rebuilt in the background once stale", async () => {
  const root = await tree({ "a.ts": "" });
  try {
    let updates = 0;
    const index = new FileIndex(root, { walkOnly: true, staleMs: 50, onUpdate: () => updates++ });
    assert.equal(index.paths(), undefined);
    await index.refresh();
    assert.deepEqual(index.paths(), ["a.ts"]);
    await Deno.writeTextFile(`${root}/b.ts`, "");
    assert.deepEqual(index.paths(), ["a.ts"], "fresh: the kept list, no new build");
    assert.equal(updates, 1);
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.deepEqual(index.paths(), ["a.ts"], "stale: answered at once from the kept list...");
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(index.paths(), ["a.ts", "b.ts"], "...and rebuilt behind it");
    assert.equal(updates, 2);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the drawer offers files for an @ word; Tab inserts the path; @server:uri still completes resources", () => {
  const files = ["README.md", "src/main.ts", "src/lib/parser.ts"];
  const resources = [{ server: "docs", uri: "docs://guide", name: "Guide" }];
  const drawer = new Drawer({ files: () => files, resources: () => resources });
  const editor = new LineEditor(new History());
  const sent: string[] = [];
  const target = { drawer, editor, tree: () => [], submit: () => sent.push(editor.take()) };
  const key = (name: string, text?: string) =>
    editKey(target, { name, text, ctrl: false, alt: false, shift: false });
  key("text", "explain @pars");
  drawer.update([], editor.text);
  assert.equal(drawer.mentioning, true);
  assert.deepEqual(drawer.lines(60, 5).map(plainText).map((l) => l.trim().replace(/\s+/g, " ")), [
    "@src/lib/parser.ts file",
  ]);
  key("tab");
  assert.equal(editor.text, "explain @src/lib/parser.ts ");
  assert.equal(drawer.open, false, "the space after the path closes it");
  key("text", "and @do");
  drawer.update([], editor.text);
  assert.deepEqual(drawer.lines(60, 5).map(plainText).map((l) => l.trim().replace(/\s+/g, " ")), [
    "@docs: 1 resource",
  ]);
  key("tab");
  key("tab");
  assert.equal(editor.text, "explain @src/lib/parser.ts and @docs:docs://guide ");
  key("text", "@");
  drawer.update([], editor.text);
  assert.equal(
    drawer.lines(60, 5).map(plainText).map((l) => l.trim().split(/\s+/)[0]).join(" "),
    "@docs: @README.md @src/main.ts @src/lib/parser.ts",
    "a bare @ offers the servers, then the shortest paths first",
  );
  key("escape");
  key("enter");
  assert.deepEqual(sent, ["explain @src/lib/parser.ts and @docs:docs://guide @"]);
});

Deno.test("attachments: each mentioned file once, capped at a line with a note, binary and outside files refused", async () => {
  const root = await tree({
    "notes.md": "alpha\nbeta\n",
    "big.txt": Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n") + "\n",
  });
  const outside = await Deno.makeTempDir({ prefix: "amber-outside-" });
  try {
    await Deno.writeFile(`${root}/image.png`, new Uint8Array([0x89, 0x50, 0, 1, 2]));
    await Deno.writeTextFile(`${outside}/x.txt`, "secret\n");
    assert.deepEqual(fileMentions('@a, (@b) "@c" me@d.e @a'), ["a", "b", "c"]);
    const typed =
      `look at @notes.md, @big.txt and @image.png, then @../${outside.split("/").at(-1)}/x.txt ` +
      "and @missing.md and @notes.md again";
    const { prompt, notes } = await attachFiles(typed, root, { maxFileBytes: 1024 });
    assert.ok(prompt.startsWith(`${typed}\n\n<attached_file path="notes.md">\nalpha\nbeta\n`));
    assert.equal(prompt.match(/<attached_file path="notes.md">/g)?.length, 1);
    assert.ok(!prompt.includes("secret"), "nothing from outside the workspace");
    const big = prompt.slice(prompt.indexOf('<attached_file path="big.txt">'));
    assert.ok(big.endsWith("[cut: the first 126 of 1000 lines]\n</attached_file>"), big.slice(-80));
    assert.ok(big.includes("line 125\n[cut"), "cut after a whole line");
    assert.deepEqual(notes.map((n) => n.note), [
      "attached notes.md (2 lines)",
      "attached big.txt (1000 lines, cut to the first 126: 1 KiB cap)",
      "not attached: image.png is a binary file",
      `not attached: ../${outside.split("/").at(-1)}/x.txt is outside the workspace`,
    ]);
    // Replayed (`--resume`), the message splits back into what was typed and the notes.
    assert.deepEqual(typedPrompt(prompt), {
      prompt: typed,
      notes: ["attached notes.md (2 lines)", "attached big.txt (1000 lines, cut to the first 126)"],
    });
    const redacted = await attachFiles("@notes.md", root, {
      redact: (text) => text.replaceAll("beta", "[redacted]"),
    });
    assert.ok(redacted.prompt.includes("alpha\n[redacted]\n</attached_file>"));
    const none = await attachFiles("no files here @missing", root);
    assert.deepEqual(none, { prompt: "no files here @missing", notes: [] });
    const total = await attachFiles("@notes.md @big.txt", root, { maxTotalBytes: 8 });
    assert.deepEqual(total.notes.map((n) => n.attached), [true, false]);
    assert.match(total.notes[1].note, /not attached: big\.txt \(no room left/);
    // One line longer than the file cap (minified code) is cut inside it, at a whole character.
    await Deno.writeTextFile(`${root}/min.js`, "é".repeat(2000));
    const min = await attachFiles("@min.js", root, { maxFileBytes: 1001 });
    assert.deepEqual(min.notes.map((n) => n.note), [
      "attached min.js (1 line, cut to the first 1: 1 KiB cap)",
    ]);
    assert.ok(min.prompt.includes(`\n${"é".repeat(500)}\n[cut: the first 1 of 1 line]`));
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("attachments: a symlink out of the workspace is refused; one within it, and a file past the read chunk, are attached", async () => {
  const root = await tree({ "notes.md": "alpha\n", "sub/inner.md": "inner\n" });
  const outside = await Deno.makeTempDir({ prefix: "amber-outside-" });
  try {
    await Deno.writeTextFile(`${outside}/id_rsa`, "PRIVATE KEY\n");
    await Deno.symlink(`${outside}/id_rsa`, `${root}/key.txt`);
    await Deno.symlink(outside, `${root}/home`);
    await Deno.symlink(`${root}/sub/inner.md`, `${root}/inner_link.md`);
    // 100,000 lines of 10 bytes: two read chunks and more; cut at the default 64 KiB cap.
    await Deno.writeTextFile(`${root}/long.txt`, "123456789\n".repeat(100_000));
    const { prompt, notes } = await attachFiles(
      "@key.txt @home/id_rsa @inner_link.md @long.txt",
      root,
    );
    assert.ok(!prompt.includes("PRIVATE KEY"), "nothing a link outside points to");
    assert.deepEqual(notes.map((n) => n.note), [
      "not attached: key.txt is outside the workspace",
      "not attached: home/id_rsa is outside the workspace",
      "attached inner_link.md (1 line)",
      "attached long.txt (100000 lines, cut to the first 6553: 64 KiB cap)",
    ]);
    assert.ok(prompt.includes('<attached_file path="inner_link.md">\ninner\n</attached_file>'));
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test({
  name:
    "a git that does not answer in time is stopped, and the walk lists; a symlink loop is not followed",
  // The stand-in git is a shell script.
  ignore: Deno.build.os === "windows",
  async fn() {
    const root = await tree({ "src/main.ts": "" });
    const bin = await Deno.makeTempDir({ prefix: "amber-fake-git-" });
    const path = Deno.env.get("PATH") ?? "";
    try {
      await Deno.symlink(root, `${root}/src/loop`);
      await Deno.writeTextFile(`${bin}/git`, "#!/bin/sh\nexec sleep 30\n");
      await Deno.chmod(`${bin}/git`, 0o755);
      Deno.env.set("PATH", `${bin}:${path}`);
      const started = performance.now();
      assert.deepEqual(await listWorkspaceFiles(root, { gitDeadlineMs: 200 }), ["src/main.ts"]);
      const took = performance.now() - started;
      assert.ok(took < 10_000, `listed in ${Math.round(took)} ms, not after git's 30 s`);
    } finally {
      Deno.env.set("PATH", path);
      await Deno.remove(root, { recursive: true });
      await Deno.remove(bin, { recursive: true });
    }
  },
});
