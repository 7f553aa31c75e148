// The file tools (read, write, edit), the plan and task tools, declining without host services,
// and the prompts plugin, each run through a real runtime over real registries and real files.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type {
  HostServices,
  Message,
  Plugin,
  PluginRuntime,
  Registries,
  ToolResult,
} from "@amber/core";
import { createPromptsPlugin } from "@amber/plugins/prompts";
import { createToolEditPlugin } from "@amber/plugins/tool_edit";
import { createToolPlanPlugin } from "@amber/plugins/tool_plan";
import { createToolProcessPlugin } from "@amber/plugins/tool_process";
import { createToolReadPlugin } from "@amber/plugins/tool_read";
import { createToolTaskPlugin } from "@amber/plugins/tool_task";
import { createToolWritePlugin } from "@amber/plugins/tool_write";
import { createTodoService } from "../../cli/todos.ts";
import { makeRuntime } from "../_helpers.ts";

interface Harness {
  readonly root: string;
  readonly runtime: PluginRuntime;
  readonly registries: Registries;
  run(name: string, args: unknown, signal?: AbortSignal): Promise<ToolResult>;
  approval(name: string, args: unknown): boolean;
  [Symbol.asyncDispose](): Promise<void>;
}

// A workspace in a fresh temp dir (its real path, so symlinked /tmp makes no difference) and a
// runtime with `plugins` started over it.
async function harness(plugins: readonly Plugin[], host: HostServices = {}): Promise<Harness> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-tools-" }));
  const { runtime, registries } = makeRuntime({ workspace: { root }, host, allOn: true });
  for (const plugin of plugins) runtime.register(plugin);
  await runtime.start();
  return {
    root,
    runtime,
    registries,
    run: (name, args, signal) =>
      registries.tool.execute(name, args, { signal: signal ?? new AbortController().signal }),
    approval(name, args) {
      const tool = registries.tool.get(name)?.tool;
      if (tool === undefined) throw new Error(`no tool '${name}'`);
      const answer = tool.requiresApproval?.(args) ?? false;
      // Bundled tools answer at once; only a sandboxed plugin's answer is a promise.
      if (typeof answer !== "boolean") throw new Error(`'${name}' answered approval later`);
      return answer;
    },
    async [Symbol.asyncDispose]() {
      await runtime.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
}

// Another temp dir, standing for everything outside the workspace.
async function outsideDir(): Promise<{ dir: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-outside-" }));
  return { dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

function okOutput(result: ToolResult): string {
  ok(result.ok, `expected ok, got error: ${result.error}`);
  return result.output;
}

function errorOf(result: ToolResult): string {
  strictEqual(result.ok, false, `expected an error, got: ${result.output}`);
  strictEqual(result.output, "");
  return result.error ?? "";
}

// ---------------------------------------------------------------------------------------------
// read

Deno.test("read: numbers lines, and a window says how many lines remain", async () => {
  await using h = await harness([createToolReadPlugin()]);
  const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);
  await Deno.writeTextFile(`${h.root}/ten.txt`, `${lines.join("\n")}\n`);

  strictEqual(
    okOutput(await h.run("read", { path: "ten.txt", limit: 3 })),
    "    1\tline 1\n    2\tline 2\n    3\tline 3\n\n[7 more lines of 10; read with offset=4 to continue]",
  );
  strictEqual(
    okOutput(await h.run("read", { path: "ten.txt", offset: 9 })),
    "    9\tline 9\n   10\tline 10",
  );
  strictEqual(
    okOutput(await h.run("read", { path: `${h.root}/ten.txt`, offset: 5, limit: 1 })),
    "    5\tline 5\n\n[5 more lines of 10; read with offset=6 to continue]",
  );
  // No trailing newline, CRLF line ends.
  await Deno.writeTextFile(`${h.root}/crlf.txt`, "a\r\nb");
  strictEqual(okOutput(await h.run("read", '{"path":"crlf.txt"}')), "    1\ta\n    2\tb");
  await Deno.writeTextFile(`${h.root}/empty.txt`, "");
  strictEqual(okOutput(await h.run("read", { path: "empty.txt" })), "(empty.txt is empty)");
});

Deno.test("read: clips long lines and streams big files across chunk boundaries", async () => {
  await using h = await harness([createToolReadPlugin()]);
  await Deno.writeTextFile(`${h.root}/long.txt`, `short\n${"x".repeat(5000)}\n`);
  const out = okOutput(await h.run("read", { path: "long.txt" }));
  strictEqual(out, `    1\tshort\n    2\t${"x".repeat(2000)}... [line cut: 5000 chars]`);

  // 30,000 lines of multi-byte text: reads cross many 64 KiB chunks, some mid-character.
  const lines = Array.from({ length: 30000 }, (_, i) => `é${i}ü`);
  await Deno.writeTextFile(`${h.root}/big.txt`, lines.join("\n"));
  strictEqual(
    okOutput(await h.run("read", { path: "big.txt", offset: 29999 })),
    "29999\té29998ü\n30000\té29999ü",
  );
  // Many long lines: the window ends early, at the output budget, and says where to go on.
  await Deno.writeTextFile(`${h.root}/wide.txt`, `${"w".repeat(1990)}\n`.repeat(200));
  const wide = okOutput(await h.run("read", { path: "wide.txt" }));
  match(wide, /\n {2}101\tw+\n\n\[99 more lines of 200; read with offset=102 to continue\]$/);

  const window = okOutput(await h.run("read", { path: "big.txt", offset: 12000, limit: 2000 }));
  const shown = window.split("\n").slice(0, 2000).map((line) => line.split("\t")[1]);
  deepStrictEqual(shown, lines.slice(11999, 13999));
  match(window, /\[16001 more lines of 30000; read with offset=14000 to continue\]$/);
});

Deno.test("read: directories, binary files, missing files and bad offsets are errors", async () => {
  await using h = await harness([createToolReadPlugin()]);
  await Deno.mkdir(`${h.root}/src/sub`, { recursive: true });
  await Deno.writeTextFile(`${h.root}/src/a.ts`, "x");
  await Deno.writeFile(`${h.root}/blob.bin`, new Uint8Array([0x50, 0x4b, 0, 1, 2]));
  await Deno.writeTextFile(`${h.root}/three.txt`, "1\n2\n3\n");

  const dir = errorOf(await h.run("read", { path: "src" }));
  match(dir, /^src is a directory, not a file\. It contains: a\.ts, sub\/\./);
  match(dir, /call read with its path \(e\.g\. "src\/a\.ts"\)/);
  strictEqual(
    errorOf(await h.run("read", { path: "blob.bin" })),
    "cannot read blob.bin: it is a binary file",
  );
  strictEqual(errorOf(await h.run("read", { path: "nope.txt" })), "file not found: nope.txt");
  strictEqual(
    errorOf(await h.run("read", { path: "three.txt", offset: 4 })),
    "offset 4 is past the end of three.txt, which has 3 lines",
  );
  match(errorOf(await h.run("read", { path: "three.txt", offset: 0 })), /invalid arguments/);
  match(errorOf(await h.run("read", {})), /invalid arguments for tool 'read'/);
});

Deno.test("read: read-only, approval only outside the workspace (symlinks followed)", async () => {
  await using h = await harness([createToolReadPlugin()]);
  await using outside = await outsideDir();
  await Deno.writeTextFile(`${outside.dir}/secret.txt`, "outside");
  await Deno.symlink(outside.dir, `${h.root}/escape`);
  await Deno.symlink(`${outside.dir}/secret.txt`, `${h.root}/secret_link.txt`);
  await Deno.writeTextFile(`${h.root}/in.txt`, "inside");
  await Deno.symlink(`${h.root}/in.txt`, `${h.root}/in_link.txt`);

  strictEqual(h.registries.tool.get("read")?.tool.readOnly, true);
  strictEqual(h.registries.tool.get("read")?.tool.verb, "reading");
  strictEqual(h.approval("read", { path: "in.txt" }), false);
  strictEqual(h.approval("read", { path: `${h.root}/in.txt` }), false);
  strictEqual(h.approval("read", { path: "in_link.txt" }), false);
  strictEqual(h.approval("read", { path: "not/yet/there.txt" }), false);
  strictEqual(h.approval("read", { path: `${outside.dir}/secret.txt` }), true);
  strictEqual(h.approval("read", { path: "../x.txt" }), true);
  strictEqual(h.approval("read", { path: "escape/secret.txt" }), true);
  strictEqual(h.approval("read", { path: "secret_link.txt" }), true);
  strictEqual(h.approval("read", { path: "escape/new/deeper.txt" }), true);
  // Approval is the kernel's business; the tool itself reads what it is told to.
  strictEqual(okOutput(await h.run("read", { path: "secret_link.txt" })), "    1\toutside");
  strictEqual(h.registries.tool.get("read")?.tool.summarize?.({ path: "a.ts" }), "read a.ts");
});

// ---------------------------------------------------------------------------------------------
// write

Deno.test("write: creates parents, reports bytes and created or overwrote, leaves no temp", async () => {
  await using h = await harness([createToolWritePlugin()]);
  strictEqual(
    okOutput(await h.run("write", { path: "a/b/c.txt", content: "hello" })),
    "Created a/b/c.txt (5 bytes)",
  );
  strictEqual(await Deno.readTextFile(`${h.root}/a/b/c.txt`), "hello");
  strictEqual(
    okOutput(await h.run("write", { path: "a/b/c.txt", content: "héé" })),
    "Overwrote a/b/c.txt (5 bytes; it had 5)",
  );
  strictEqual(await Deno.readTextFile(`${h.root}/a/b/c.txt`), "héé");
  strictEqual(
    okOutput(await h.run("write", { path: "empty", content: "" })),
    "Created empty (0 bytes)",
  );
  deepStrictEqual((await Array.fromAsync(Deno.readDir(`${h.root}/a/b`))).map((e) => e.name), [
    "c.txt",
  ]);
  strictEqual(h.registries.tool.get("write")?.tool.readOnly, undefined);
});

Deno.test("write: keeps permissions, writes through symlinks, refuses directories", async () => {
  await using h = await harness([createToolWritePlugin()]);
  await Deno.writeTextFile(`${h.root}/run.sh`, "#!/bin/sh\n");
  await Deno.chmod(`${h.root}/run.sh`, 0o755);
  okOutput(await h.run("write", { path: "run.sh", content: "#!/bin/sh\necho hi\n" }));
  strictEqual((await Deno.stat(`${h.root}/run.sh`)).mode! & 0o777, 0o755);

  await Deno.writeTextFile(`${h.root}/target.txt`, "old");
  await Deno.symlink(`${h.root}/target.txt`, `${h.root}/link.txt`);
  okOutput(await h.run("write", { path: "link.txt", content: "new" }));
  strictEqual(await Deno.readTextFile(`${h.root}/target.txt`), "new");
  ok((await Deno.lstat(`${h.root}/link.txt`)).isSymlink);

  await Deno.mkdir(`${h.root}/dir`);
  strictEqual(
    errorOf(await h.run("write", { path: "dir", content: "x" })),
    "cannot write dir: it is a directory",
  );
  match(errorOf(await h.run("write", { path: "x" })), /invalid arguments for tool 'write'/);
});

Deno.test("write: approval only outside the workspace", async () => {
  await using h = await harness([createToolWritePlugin()]);
  await using outside = await outsideDir();
  await Deno.symlink(outside.dir, `${h.root}/out`);
  strictEqual(h.approval("write", { path: "new/file.txt", content: "" }), false);
  strictEqual(h.approval("write", { path: `${outside.dir}/x`, content: "" }), true);
  strictEqual(h.approval("write", { path: "out/x", content: "" }), true);
  // A dangling link that points outside still leads outside.
  await Deno.symlink(`${outside.dir}/later.txt`, `${h.root}/dangling.txt`);
  strictEqual(h.approval("write", { path: "dangling.txt", content: "" }), true);
});

// ---------------------------------------------------------------------------------------------
// edit

Deno.test("edit: replaces one occurrence and shows the region with line numbers", async () => {
  await using h = await harness([createToolEditPlugin()]);
  const text = ["a", "b", "c", "function f() {", "  return 1;", "}", "d", "e", "f", "g"].join("\n");
  await Deno.writeTextFile(`${h.root}/f.ts`, `${text}\n`);
  const out = okOutput(
    await h.run("edit", {
      path: "f.ts",
      old_string: "  return 1;",
      new_string: "  return 2;\n  // two",
    }),
  );
  strictEqual(
    out,
    [
      "Edited f.ts: replaced 1 occurrence.",
      "    2\tb",
      "    3\tc",
      "    4\tfunction f() {",
      "    5\t  return 2;",
      "    6\t  // two",
      "    7\t}",
      "    8\td",
      "    9\te",
    ].join("\n"),
  );
  strictEqual(
    await Deno.readTextFile(`${h.root}/f.ts`),
    `${text.replace("  return 1;", "  return 2;\n  // two")}\n`,
  );
  deepStrictEqual((await Array.fromAsync(Deno.readDir(h.root))).map((e) => e.name), ["f.ts"]);
});

Deno.test("edit: every documented error, and nothing is written", async () => {
  await using h = await harness([createToolEditPlugin()]);
  const original = "one\ntwo\n\tindented(x)\nfoo\nbar\nfoo\n";
  await Deno.writeTextFile(`${h.root}/t.txt`, original);
  const edit = (args: Record<string, unknown>) => h.run("edit", { path: "t.txt", ...args });

  match(
    errorOf(await h.run("edit", { path: "missing.txt", old_string: "a", new_string: "b" })),
    /^file not found: missing\.txt/,
  );
  match(errorOf(await edit({ old_string: "", new_string: "x" })), /^old_string is empty/);
  strictEqual(
    errorOf(await edit({ old_string: "two", new_string: "two" })),
    "old_string and new_string are the same: there is nothing to change",
  );
  match(
    errorOf(await edit({ old_string: "three", new_string: "3" })),
    /^old_string was not found in t\.txt\. Read the file again/,
  );
  // Spaces where the file has a tab, and no space where it has none.
  match(
    errorOf(await edit({ old_string: "    indented(x)", new_string: "y" })),
    /differs from it only in whitespace starts on line 3\./,
  );
  match(
    errorOf(await edit({ old_string: "indented( x )", new_string: "y" })),
    /only in whitespace starts on line 3\./,
  );
  strictEqual(
    errorOf(await edit({ old_string: "foo", new_string: "baz" })),
    "old_string occurs 2 times in t.txt (lines 4, 6). Include more surrounding text to make it " +
      "unique, or set replace_all to replace every occurrence.",
  );
  await Deno.mkdir(`${h.root}/d`);
  strictEqual(
    errorOf(await h.run("edit", { path: "d", old_string: "a", new_string: "b" })),
    "cannot edit d: it is a directory",
  );
  strictEqual(await Deno.readTextFile(`${h.root}/t.txt`), original);
});

Deno.test("edit: replace_all, CRLF files, deletion", async () => {
  await using h = await harness([createToolEditPlugin()]);
  await Deno.writeTextFile(`${h.root}/t.txt`, "foo\nbar\nfoo\nfoo\n");
  match(
    okOutput(
      await h.run("edit", {
        path: "t.txt",
        old_string: "foo",
        new_string: "baz",
        replace_all: true,
      }),
    ),
    /^Edited t\.txt: replaced 3 occurrences\.\n {4}1\tbaz\n/,
  );
  strictEqual(await Deno.readTextFile(`${h.root}/t.txt`), "baz\nbar\nbaz\nbaz\n");

  await Deno.writeTextFile(`${h.root}/w.txt`, "a\r\nb\r\nc\r\n");
  okOutput(await h.run("edit", { path: "w.txt", old_string: "a\nb", new_string: "a\nB\nb" }));
  strictEqual(await Deno.readTextFile(`${h.root}/w.txt`), "a\r\nB\r\nb\r\nc\r\n");

  okOutput(await h.run("edit", { path: "t.txt", old_string: "bar\n", new_string: "" }));
  strictEqual(await Deno.readTextFile(`${h.root}/t.txt`), "baz\nbaz\nbaz\n");
});

Deno.test("edit: approval only outside the workspace", async () => {
  await using h = await harness([createToolEditPlugin()]);
  await using outside = await outsideDir();
  await Deno.symlink(`${outside.dir}`, `${h.root}/out`);
  const args = (path: string) => ({ path, old_string: "a", new_string: "b" });
  strictEqual(h.approval("edit", args("src/x.ts")), false);
  strictEqual(h.approval("edit", args(`${outside.dir}/x.ts`)), true);
  strictEqual(h.approval("edit", args("out/x.ts")), true);
  strictEqual(h.registries.tool.get("edit")?.tool.summarize?.(args("x.ts")), "edit x.ts");
});

// ---------------------------------------------------------------------------------------------
// todowrite, task, and declining

Deno.test("todowrite: replaces the host's list and returns a checklist", async () => {
  const todos = createTodoService();
  await using h = await harness([createToolPlanPlugin()], { todos });
  const out = okOutput(
    await h.run("todowrite", {
      todos: [
        { content: "Read the code", status: "completed" },
        { content: "Fix the bug", status: "in_progress" },
        { content: "Add a test", status: "pending" },
      ],
    }),
  );
  strictEqual(out, "Todos (1 of 3 done):\n[x] Read the code\n[~] Fix the bug\n[ ] Add a test");
  deepStrictEqual(todos.list().map((t) => t.status), ["completed", "in_progress", "pending"]);
  strictEqual(okOutput(await h.run("todowrite", { todos: [] })), "Todos: (empty)");
  deepStrictEqual(todos.list(), []);
  match(
    errorOf(await h.run("todowrite", { todos: [{ content: "x", status: "done" }] })),
    /invalid arguments for tool 'todowrite'/,
  );
  strictEqual(h.registries.tool.get("todowrite")?.tool.readOnly, true);
});

Deno.test("task: runs the sub-agent with the run's signal and returns its answer", async () => {
  const seen: { prompt: string; signal: AbortSignal }[] = [];
  const waitingStarted = Promise.withResolvers<void>();
  const subagents = {
    run(prompt: string, options: { signal: AbortSignal }): Promise<string> {
      seen.push({ prompt, signal: options.signal });
      if (prompt === "fail") return Promise.reject(new Error("model unavailable"));
      if (prompt === "wait") {
        waitingStarted.resolve();
        return new Promise((_, reject) =>
          options.signal.addEventListener("abort", () => reject(new Error("aborted")), {
            once: true,
          })
        );
      }
      return Promise.resolve(`answer to: ${prompt}`);
    },
  };
  await using h = await harness([createToolTaskPlugin()], { subagents });
  const controller = new AbortController();
  strictEqual(
    okOutput(
      await h.run("task", { prompt: "find the bug", description: "Find bug" }, controller.signal),
    ),
    "answer to: find the bug",
  );
  strictEqual(seen[0].signal, controller.signal);
  strictEqual(
    errorOf(await h.run("task", { prompt: "fail" })),
    "the sub-agent failed: model unavailable",
  );
  const waiting = h.run("task", { prompt: "wait" }, controller.signal);
  await waitingStarted.promise;
  controller.abort();
  strictEqual(errorOf(await waiting), "cancelled: the sub-agent was stopped");
  strictEqual(
    h.registries.tool.get("task")?.tool.summarize?.({ prompt: "x", description: "Find bug" }),
    "task: Find bug",
  );
  strictEqual(
    errorOf(await h.run("task", { prompt: "late" }, controller.signal)),
    "cancelled before the sub-agent started",
  );
});

Deno.test("tools that need a host service decline without it; the plugin stays active", async () => {
  await using h = await harness([
    createToolPlanPlugin(),
    createToolTaskPlugin(),
    createToolProcessPlugin(),
  ]);
  for (
    const [id, capability] of [["tool_plan", "todowrite"], ["tool_task", "task"], [
      "tool_process",
      "process",
    ]]
  ) {
    strictEqual(h.runtime.state(id).status, "active", id);
    deepStrictEqual(h.runtime.info(id).declined.map((d) => d.name), [capability], id);
    // tool_task's `/agents` command stays: it says the host runs no sub-agents.
    const kept = h.runtime.info(id).contributions.map((c) => `${c.kind}:${c.name}`);
    deepStrictEqual(kept, id === "tool_task" ? ["command:agents"] : [], id);
  }
  deepStrictEqual(h.registries.tool.list(), []);
});

Deno.test("each tool plugin is bounded to exactly its tools, in category tools", async () => {
  const todos = createTodoService();
  const subagents = { run: () => Promise.resolve("") };
  await using h = await harness(
    [
      createToolReadPlugin(),
      createToolWritePlugin(),
      createToolEditPlugin(),
      createToolPlanPlugin(),
      createToolTaskPlugin(),
    ],
    { todos, subagents },
  );
  deepStrictEqual(h.registries.tool.list().map((e) => `${e.owner}:${e.tool.name}`), [
    "tool_read:read",
    "tool_write:write",
    "tool_edit:edit",
    "tool_plan:todowrite",
    "tool_task:task",
  ]);
  for (const entry of h.registries.tool.list()) {
    strictEqual(h.runtime.info(entry.owner).plugin.category, "tools");
    ok(entry.tool.description.length > 40, entry.tool.name);
    ok(typeof entry.tool.verb === "string", entry.tool.name);
    ok(typeof entry.tool.summarize === "function", entry.tool.name);
    strictEqual(entry.schema.type, "object");
    for (
      const [key, property] of Object.entries(
        entry.schema.properties as Record<string, { description?: string }>,
      )
    ) {
      ok(typeof property.description === "string", `${entry.tool.name}.${key} has a description`);
    }
  }
});

// ---------------------------------------------------------------------------------------------
// prompts

function systemTexts(messages: readonly Message[]): string[] {
  return messages.filter((m) => m.role === "system").map((m) => String(m.content));
}

Deno.test("prompts: three blocks in order, stable across assemblies", async () => {
  const prompts = createPromptsPlugin({ now: () => new Date(2025, 2, 7, 12) });
  await using h = await harness([createToolReadPlugin(), createToolWritePlugin(), prompts]);
  await Deno.writeTextFile(`${h.root}/AGENTS.md`, "ignored: written after initialize");

  const first = h.registries.prompt.assemble([{ role: "user", content: "hi" }]);
  deepStrictEqual(first.blocks, ["core_system", "tool_docs"]);
  strictEqual(first.firstChanged, "core_system");
  const [system, tools] = systemTexts(first.messages);
  match(system, /^You are amber, a coding agent\./);
  match(system, new RegExp(`Workspace root: ${h.root}\n`));
  match(system, /Today's date: 2025-03-07$/);
  strictEqual(
    tools,
    "Tools you can call:\n- read: Read a text file from the workspace.\n" +
      "- write: Write a whole file: creates it (and any missing parent directories) or replaces " +
      "its entire content.",
  );
  const second = h.registries.prompt.assemble([{ role: "user", content: "hi" }]);
  strictEqual(second.firstChanged, undefined);
  deepStrictEqual(second.messages, first.messages);

  // The tool list changes: the tool_docs block follows, and only it changes.
  await h.runtime.setState("tool_write", false);
  const third = h.registries.prompt.assemble([]);
  strictEqual(third.firstChanged, "tool_docs");
  strictEqual(
    systemTexts(third.messages)[1],
    "Tools you can call:\n- read: Read a text file from the workspace.",
  );
  strictEqual(h.registries.prompt.assemble([]).firstChanged, undefined);
});

Deno.test("prompts: AGENTS.md is read at initialize and re-read by tick only when it changes", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-prompts-" }));
  try {
    await Deno.writeTextFile(`${root}/AGENTS.md`, "Use tabs.\n");
    const prompts = createPromptsPlugin();
    const { runtime, registries } = makeRuntime({ workspace: { root }, allOn: true });
    runtime.register(prompts);
    await runtime.start();
    const facts = (): string | undefined => {
      const messages = registries.prompt.assemble([]).messages;
      return messages.find((m) => (m as { source?: string }).source === "project_facts")?.content as
        | string
        | undefined;
    };
    strictEqual(
      facts(),
      "Project instructions (from AGENTS.md in the workspace root; follow them):\n\nUse tabs.",
    );
    deepStrictEqual(registries.prompt.assemble([]).blocks, ["core_system", "project_facts"]);

    // Unchanged: a tick changes nothing.
    runtime.tick();
    await prompts.settled();
    strictEqual(registries.prompt.assemble([]).firstChanged, undefined);

    // Changed (a new mtime and size): picked up after the tick's background check.
    await Deno.writeTextFile(`${root}/AGENTS.md`, "Use spaces, four of them.\n");
    await Deno.utime(`${root}/AGENTS.md`, new Date(2030, 0, 1), new Date(2030, 0, 1));
    match(facts() ?? "", /Use tabs\./); // render never does I/O
    runtime.tick();
    await prompts.settled();
    const changed = registries.prompt.assemble([]);
    strictEqual(changed.firstChanged, "project_facts");
    match(facts() ?? "", /Use spaces, four of them\.$/);

    // Removed: the block goes away.
    await Deno.remove(`${root}/AGENTS.md`);
    runtime.tick();
    await prompts.settled();
    deepStrictEqual(registries.prompt.assemble([]).blocks, ["core_system"]);
    strictEqual(runtime.info("prompts").plugin.category, "other");
    await runtime.stop();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
