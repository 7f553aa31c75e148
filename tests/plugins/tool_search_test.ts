// The search tool: the .gitignore matcher on its own, then the same searches through the
// built-in walk (forced) and through ripgrep (when it is installed), which must agree.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { ToolResult } from "@amber/core";
import {
  compileRule,
  createToolSearchPlugin,
  globToRegExpSource,
  IgnoreMatcher,
  parseGitignore,
} from "@amber/plugins/tool_search";
import { makeRuntime } from "../_helpers.ts";

// ---------------------------------------------------------------------------------------------
// the matcher

function matcherOf(text: string): IgnoreMatcher {
  return IgnoreMatcher.empty().with("", parseGitignore(text));
}

Deno.test("gitignore: comments, blanks, escapes and trailing spaces", () => {
  deepStrictEqual(parseGitignore("# comment\n\n   \n").length, 0);
  const m = matcherOf("\\#hash\n\\!bang\ntrailing   \nkept\\ \n");
  ok(m.ignores("#hash", false));
  ok(m.ignores("!bang", false));
  ok(m.ignores("trailing", false));
  ok(!m.ignores("trailing   ", false));
  ok(m.ignores("kept ", false));
  ok(matcherOf("a.txt\r\n").ignores("a.txt", false), "CRLF .gitignore");
});

Deno.test("gitignore: * and ? stay in one segment; unanchored patterns match at any depth", () => {
  const m = matcherOf("*.log\nfile?.txt\n");
  ok(m.ignores("x.log", false));
  ok(m.ignores("deep/down/x.log", false));
  ok(!m.ignores("x.log.txt", false));
  ok(m.ignores("file1.txt", false));
  ok(!m.ignores("file10.txt", false));
  ok(!m.ignores("dir/file/.txt", false));
  const star = compileRule("a*b")!;
  ok(star.regex.test("axxb"));
  ok(!star.regex.test("ax/xb"));
});

Deno.test("gitignore: a slash anchors the pattern to its directory", () => {
  const m = matcherOf("/build\ndocs/out\n");
  ok(m.ignores("build", true));
  ok(m.ignores("build", false));
  ok(!m.ignores("lib/build", true));
  ok(m.ignores("docs/out", true));
  ok(!m.ignores("x/docs/out", true));
});

Deno.test("gitignore: ** leading, trailing and in the middle", () => {
  const m = matcherOf("**/cache\nlogs/**\na/**/z\n");
  ok(m.ignores("cache", true));
  ok(m.ignores("x/y/cache", true));
  ok(m.ignores("logs/one", false));
  ok(m.ignores("logs/deep/two", false));
  ok(!m.ignores("logs", true), "logs/** matches what is inside, not logs itself");
  ok(m.ignores("a/z", false));
  ok(m.ignores("a/b/c/z", false));
  ok(!m.ignores("b/a/z", false));
  // Other runs of stars are a single star.
  ok(matcherOf("foo**bar").ignores("fooxbar", false));
  ok(!matcherOf("foo**bar").ignores("foo/bar", false));
});

Deno.test("gitignore: dir/ matches directories only", () => {
  const m = matcherOf("tmp/\n");
  ok(m.ignores("tmp", true));
  ok(m.ignores("a/tmp", true));
  ok(!m.ignores("tmp", false));
});

Deno.test("gitignore: !negation re-includes; the last matching rule wins", () => {
  const m = matcherOf("*.log\n!keep.log\nkeep.log.bak\n");
  ok(m.ignores("a.log", false));
  ok(!m.ignores("keep.log", false));
  ok(!m.ignores("sub/keep.log", false));
  const again = matcherOf("*.log\n!keep.log\n*.log\n");
  ok(again.ignores("keep.log", false));
});

Deno.test("gitignore: nested files apply below their own directory, after their parents", () => {
  const root = matcherOf("*.gen\n");
  const src = root.with("src", parseGitignore("!keep.gen\n/local\n"));
  ok(src.ignores("src/a.gen", false));
  ok(!src.ignores("src/keep.gen", false));
  ok(src.ignores("keep.gen", false), "the nested negation does not reach above src");
  ok(src.ignores("src/local", true));
  ok(!src.ignores("local", true));
  ok(!src.ignores("src/x/local", true), "/local is anchored to src");
});

Deno.test("gitignore: character classes and glob braces", () => {
  const m = matcherOf("[abc].txt\n[!x]y\n");
  ok(m.ignores("a.txt", false));
  ok(!m.ignores("d.txt", false));
  ok(m.ignores("zy", false));
  ok(!m.ignores("xy", false));
  const braces = new RegExp(`^${globToRegExpSource("*.{ts,tsx}", true)}$`);
  ok(braces.test("a.ts") && braces.test("a.tsx") && !braces.test("a.js"));
  ok(matcherOf("{a,b}").ignores("{a,b}", false), "no braces in .gitignore");
});

// ---------------------------------------------------------------------------------------------
// the tool, through both engines

async function fixture(root: string): Promise<void> {
  const files: Record<string, string | Uint8Array> = {
    ".gitignore": "*.log\n/build\nsecret/\n!keep.log\n",
    "src/a.ts": "const needle = 1;\n",
    "src/b.ts": "// Needle in caps\nneedle();\n",
    "src/.gitignore": "gen.ts\n",
    "src/gen.ts": "needle gen\n",
    "src/deep/c.tsx": "needle tsx\n",
    "build/out.ts": "needle build\n",
    "lib/build/x.ts": "needle nested build\n",
    "x.log": "needle log\n",
    "keep.log": "needle keep\n",
    "secret/s.ts": "needle secret\n",
    "node_modules/m/index.js": "needle module\n",
    ".git/config": "needle git\n",
    ".hidden/h.ts": "needle hidden\n",
    "bin.dat": new TextEncoder().encode("needle\0binary\n"),
    "many.txt": Array.from({ length: 300 }, (_, i) => `hit ${i + 1}`).join("\n"),
  };
  for (const [path, content] of Object.entries(files)) {
    const full = `${root}/${path}`;
    await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(full, content);
    else await Deno.writeFile(full, content);
  }
  await Deno.symlink(`${root}/src/a.ts`, `${root}/link.ts`);
}

async function searchHarness(engine: "builtin" | "ripgrep") {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-search-" }));
  await fixture(root);
  const { runtime, registries } = makeRuntime({ workspace: { root }, allOn: true });
  runtime.register(createToolSearchPlugin({ engine }));
  await runtime.start();
  return {
    root,
    search: (args: Record<string, unknown>): Promise<ToolResult> =>
      registries.tool.execute("search", args, { signal: new AbortController().signal }),
    approval: (args: Record<string, unknown>): boolean => {
      const answer = registries.tool.get("search")!.tool.requiresApproval!(args);
      if (typeof answer !== "boolean") throw new Error("search answered approval later");
      return answer;
    },
    readOnly: registries.tool.get("search")!.tool.readOnly,
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

function lines(result: ToolResult): string[] {
  ok(result.ok, `expected ok, got: ${result.error}`);
  return result.output.split("\n");
}

const rgPresent = await (async () => {
  try {
    return (await new Deno.Command("rg", { args: ["--version"], stdout: "null", stderr: "null" })
      .output()).success;
  } catch {
    return false;
  }
})();

for (const engine of ["builtin", "ripgrep"] as const) {
  const ignore = engine === "ripgrep" && !rgPresent;

  Deno.test({
    name: `search (${engine}): honours .gitignore, skips .git, node_modules, binaries, symlinks`,
    ignore,
    async fn() {
      await using h = await searchHarness(engine);
      deepStrictEqual(lines(await h.search({ pattern: "needle" })), [
        ".hidden/h.ts:1: needle hidden",
        "keep.log:1: needle keep",
        "lib/build/x.ts:1: needle nested build",
        "src/a.ts:1: const needle = 1;",
        "src/b.ts:2: needle();",
        "src/deep/c.tsx:1: needle tsx",
      ]);
      deepStrictEqual(lines(await h.search({ pattern: "NEEDLE", case_insensitive: true })), [
        ".hidden/h.ts:1: needle hidden",
        "keep.log:1: needle keep",
        "lib/build/x.ts:1: needle nested build",
        "src/a.ts:1: const needle = 1;",
        "src/b.ts:1: // Needle in caps",
        "src/b.ts:2: needle();",
        "src/deep/c.tsx:1: needle tsx",
      ]);
      strictEqual(h.readOnly, true);
    },
  });

  Deno.test({
    name: `search (${engine}): globs, sub-directories and single files`,
    ignore,
    async fn() {
      await using h = await searchHarness(engine);
      // As in ripgrep, a glob selects files even where .gitignore lists them (src/gen.ts), but
      // never reaches into an ignored directory (build/, secret/).
      deepStrictEqual(lines(await h.search({ pattern: "needle", glob: "*.ts" })), [
        ".hidden/h.ts:1: needle hidden",
        "lib/build/x.ts:1: needle nested build",
        "src/a.ts:1: const needle = 1;",
        "src/b.ts:2: needle();",
        "src/gen.ts:1: needle gen",
      ]);
      deepStrictEqual(lines(await h.search({ pattern: "needle", glob: "src/**/*.tsx" })), [
        "src/deep/c.tsx:1: needle tsx",
      ]);
      // x.log is ignored, but the glob selects it by name.
      deepStrictEqual(lines(await h.search({ pattern: "needle", glob: "*.{log,tsx}" })), [
        "keep.log:1: needle keep",
        "src/deep/c.tsx:1: needle tsx",
        "x.log:1: needle log",
      ]);
      deepStrictEqual(lines(await h.search({ pattern: "needle", glob: "!*.ts" })), [
        "keep.log:1: needle keep",
        "src/deep/c.tsx:1: needle tsx",
      ]);
      // A sub-directory: the root's .gitignore still applies, paths stay workspace-relative.
      deepStrictEqual(lines(await h.search({ pattern: "needle", path: "src" })), [
        "src/a.ts:1: const needle = 1;",
        "src/b.ts:2: needle();",
        "src/deep/c.tsx:1: needle tsx",
      ]);
      deepStrictEqual(
        lines(await h.search({ pattern: "needle", path: "src/deep", glob: "deep/*" })),
        [
          // Globs with a slash are relative to the searched directory: nothing is under deep/deep.
          `No matches for /needle/ in src/deep (glob deep/*).`,
        ],
      );
      // A file given explicitly is searched even if ignored.
      deepStrictEqual(lines(await h.search({ pattern: "needle", path: "x.log" })), [
        "x.log:1: needle log",
      ]);
      // A pattern only JavaScript understands: ripgrep refuses it, the built-in engine takes over.
      deepStrictEqual(lines(await h.search({ pattern: "needle(?= tsx)" })), [
        "src/deep/c.tsx:1: needle tsx",
      ]);
    },
  });

  Deno.test({
    name: `search (${engine}): the cap is stated; no matches and errors are clear`,
    ignore,
    async fn() {
      await using h = await searchHarness(engine);
      const capped = lines(await h.search({ pattern: "^hit \\d+$" }));
      strictEqual(capped.length, 202);
      strictEqual(capped[0], "many.txt:1: hit 1");
      strictEqual(capped[199], "many.txt:200: hit 200");
      strictEqual(capped[200], "");
      match(capped[201], /^\[results cut at 200 matching lines; there are more\./);
      const five = lines(await h.search({ pattern: "hit", max_results: 5 }));
      strictEqual(five.length, 7);
      match(five[6], /results cut at 5 matching lines/);
      deepStrictEqual(lines(await h.search({ pattern: "hit 300", max_results: 1 })), [
        "many.txt:300: hit 300",
      ]);

      deepStrictEqual(lines(await h.search({ pattern: "absent_text" })), [
        "No matches for /absent_text/ in the workspace.",
      ]);
      const bad = await h.search({ pattern: "(unclosed" });
      strictEqual(bad.ok, false);
      match(bad.error!, /^invalid regular expression \/\(unclosed\//);
      const missing = await h.search({ pattern: "x", path: "nowhere" });
      strictEqual(missing.error, "path not found: nowhere");
      match((await h.search({ pattern: "" })).error!, /invalid arguments for tool 'search'/);
    },
  });

  Deno.test({
    name: `search (${engine}): approval only outside the workspace`,
    ignore,
    async fn() {
      await using h = await searchHarness(engine);
      const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-outside-" }));
      try {
        await Deno.writeTextFile(`${outside}/o.txt`, "needle outside\n");
        await Deno.symlink(outside, `${h.root}/out`);
        strictEqual(h.approval({ pattern: "x" }), false);
        strictEqual(h.approval({ pattern: "x", path: "src" }), false);
        strictEqual(h.approval({ pattern: "x", path: outside }), true);
        strictEqual(h.approval({ pattern: "x", path: "out" }), true);
        strictEqual(h.approval({ pattern: "x", path: ".." }), true);
        deepStrictEqual(lines(await h.search({ pattern: "needle", path: outside })), [
          `${outside}/o.txt:1: needle outside`,
        ]);
      } finally {
        await Deno.remove(outside, { recursive: true });
      }
    },
  });
}

Deno.test({
  name: "search: ripgrep and the built-in walk give the same output",
  ignore: !rgPresent,
  async fn() {
    await using builtin = await searchHarness("builtin");
    await using rg = await searchHarness("ripgrep");
    for (
      const args of [
        { pattern: "needle" },
        { pattern: "e", glob: "*.ts" },
        { pattern: "hit 2\\d", path: "many.txt" },
        { pattern: "[a-z]+\\(", case_insensitive: true },
        { pattern: "\\.log", max_results: 3 },
      ]
    ) {
      strictEqual(
        (await rg.search(args)).output,
        (await builtin.search(args)).output,
        JSON.stringify(args),
      );
    }
  },
});
