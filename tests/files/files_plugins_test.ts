// The markdown folders as plugins of a real host: live refresh during a session, problems reported
// with their lines while the other files load, the switch, and what careless authors write.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { Diagnostic } from "@amber/core";
import { openHost } from "../../cli/host.ts";
import { runSlashCommand } from "../../cli/slash_line.ts";
import { commandEntries } from "../../cli/tui/drawer.ts";
import { MAX_DEFINITION_BYTES } from "../../cli/files/definitions.ts";
import type { FilesPlugin } from "../../cli/files/files_plugin.ts";
import { AMBER_COMMAND_ROOTS } from "../../cli/files/command_host.ts";
import { tuiCommands } from "../../cli/tui/core_commands.ts";
import { permissionsCommand } from "../../cli/tui/permissions_command.ts";
import { openFilesSession } from "./_files_session.ts";

// A home of the test's own, so the user's real `~/.claude` never leaks in.
async function withHome<T>(run: (home: string) => Promise<T>): Promise<T> {
  const home = await Deno.makeTempDir({ prefix: "amber-home-" });
  const before = Deno.env.get("HOME");
  Deno.env.set("HOME", home);
  try {
    return await run(home);
  } finally {
    if (before === undefined) Deno.env.delete("HOME");
    else Deno.env.set("HOME", before);
    await Deno.remove(home, { recursive: true });
  }
}

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
}

async function openTestHost(workspace: string, configDir: string, diagnostics: Diagnostic[]) {
  return await openHost({
    configDir,
    workspace,
    thirdParty: false,
    onDiagnostic: (d) => diagnostics.push(d),
  });
}

Deno.test("a command file written during a session is there at the next step; an edit too", async () => {
  // `.amber/` is there from the start, as a project that customizes amber has it.
  await using s = await openFilesSession({ "ws/.amber/.keep": "" }, [
    {
      toolCalls: [{
        name: "write",
        arguments: { path: ".amber/commands/hello.md", content: "Say hello to $1.\n" },
      }],
    },
    { text: "Written." },
    { toolCalls: [{ name: "read", arguments: { path: ".amber/commands/hello.md" } }] },
    { text: "Read." },
  ], { approval: "auto" });
  const host = s.session.host;
  const roots = () => host.registries.command.tree().map((root) => root.name);
  strictEqual(roots().includes("hello"), false);
  // `.amber/` is there, so the plugin loads its parser in the background from the start.
  const plugin = host.runtime.list().find((view) => view.plugin.id === "files.commands")?.plugin;
  await (plugin as FilesPlugin).settled();
  await s.session.turn("write the command");
  ok(roots().includes("hello"), `after the turn: ${roots().join(", ")}`);
  deepStrictEqual(await runSlashCommand(host, "/hello Ada"), {
    ok: true,
    text: "",
    prompt: "Say hello to Ada.\n",
  });
  // Edited between turns: nothing changes until a step boundary.
  await Deno.writeTextFile(`${host.workspace}/.amber/commands/hello.md`, "Wave at $1!\n");
  strictEqual((await runSlashCommand(host, "/hello Ada"))?.ok, true);
  await s.session.turn("read it");
  deepStrictEqual((await runSlashCommand(host, "/hello Ada")) as unknown, {
    ok: true,
    text: "",
    prompt: "Wave at Ada!\n",
  });
  // Removed: gone at the next boundary.
  await Deno.remove(`${host.workspace}/.amber/commands/hello.md`);
  host.runtime.refresh();
  strictEqual(roots().includes("hello"), false);
});

Deno.test("a broken file is reported with its path and line; the others load", async () => {
  await withHome(async () => {
    const workspace = await Deno.makeTempDir();
    const configDir = await Deno.makeTempDir();
    await write(`${workspace}/.amber/commands/good.md`, "---\ndescription: Good\n---\nGood $1\n");
    await write(
      `${workspace}/.amber/commands/bad.md`,
      '---\ndescription: Bad\nmodel: "unclosed\n---\nBad\n',
    );
    // The config folder's commands are amber's too.
    await write(`${configDir}/commands/mine.md`, "Mine\n");
    const diagnostics: Diagnostic[] = [];
    const host = await openTestHost(workspace, configDir, diagnostics);
    try {
      const roots = host.registries.command.tree().map((root) => root.name);
      ok(roots.includes("good") && roots.includes("mine"), roots.join(", "));
      strictEqual(roots.includes("bad"), false);
      const problem = diagnostics.find((d) => d.pluginId === "files.commands");
      match(problem?.message ?? "", new RegExp(`^${workspace}/\\.amber/commands/bad\\.md:3: `));
      strictEqual(host.runtime.state("files.commands").status, "active");
    } finally {
      await host.close();
      await Deno.remove(workspace, { recursive: true });
      await Deno.remove(configDir, { recursive: true });
    }
  });
});

Deno.test("switching files.commands off removes its commands from the drawer at once", async () => {
  await withHome(async () => {
    const workspace = await Deno.makeTempDir();
    const configDir = await Deno.makeTempDir();
    await write(
      `${workspace}/.amber/commands/review.md`,
      "---\ndescription: Review code\nargument-hint: [path] [focus]\n---\nReview $1\n",
    );
    await write(`${workspace}/.amber/commands/git/commit.md`, "Commit the staged work.\n");
    const host = await openTestHost(workspace, configDir, []);
    try {
      const lines = () => commandEntries(host.registries.command.tree()).map((e) => e.line);
      const review = commandEntries(host.registries.command.tree()).find((e) =>
        e.line === "/review"
      );
      strictEqual(review?.help, "Review code: /review [path] [focus]");
      match(review?.man ?? "", /^Usage: \/review \[path\] \[focus\]$/m);
      strictEqual(review?.owner, "files.commands");
      ok(lines().includes("/git:commit"));
      const commit = commandEntries(host.registries.command.tree()).find((e) =>
        e.line === "/git:commit"
      );
      strictEqual(commit?.help, "Commit the staged work.", "without a description, its first line");

      await host.runtime.setState("files.commands", false);
      strictEqual(lines().includes("/review"), false);
      strictEqual(lines().includes("/git:commit"), false);
      strictEqual(await runSlashCommand(host, "/review src"), undefined);
      // Kept like any plugin's state: the next host starts with it off.
      const next = await openTestHost(workspace, configDir, []);
      try {
        strictEqual(next.runtime.state("files.commands").status, "disabled");
        strictEqual(next.registries.command.tree().some((r) => r.name === "review"), false);
      } finally {
        await next.close();
      }
      await host.runtime.setState("files.commands", true);
      ok(lines().includes("/review"));
    } finally {
      await host.close();
      await Deno.remove(workspace, { recursive: true });
      await Deno.remove(configDir, { recursive: true });
    }
  });
});

Deno.test("careless files: each is reported and skipped, and the rest work", async () => {
  await withHome(async () => {
    const workspace = await Deno.makeTempDir();
    const configDir = await Deno.makeTempDir();
    const dir = `${workspace}/.amber/commands`;
    await write(`${dir}/fine.md`, "Fine $ARGUMENTS\n");
    await write(`${dir}/empty.md`, "");
    await write(`${dir}/open.md`, "---\ndescription: never closed\n\nBody\n");
    await write(`${dir}/listy.md`, "---\nmodel: m\ndescription:\n  - a\n  - b\n---\nBody\n");
    await write(`${dir}/help.md`, "My own help\n");
    await write(`${dir}/huge.md`, "x".repeat(MAX_DEFINITION_BYTES + 1));
    await write(`${dir}/Spaced Name.md`, "Body\n");
    await Deno.mkdir(`${dir}/loop`, { recursive: true });
    await Deno.symlink(dir, `${dir}/loop/back`);
    const diagnostics: Diagnostic[] = [];
    const host = await openTestHost(workspace, configDir, diagnostics);
    try {
      const roots = host.registries.command.tree();
      ok(roots.some((r) => r.name === "fine"));
      const said = diagnostics.filter((d) => d.pluginId === "files.commands").map((d) =>
        d.message.replace(`${dir}/`, "")
      );
      const about = (file: string) => said.find((m) => m.startsWith(file)) ?? `(none for ${file})`;
      match(about("empty.md"), /is empty: a command needs a prompt/);
      match(about("open.md:1:"), /never closed/);
      match(about("listy.md:3:"), /`description` must be text, not a list/);
      match(about("help.md"), /\/help is taken by amber's own command, which wins/);
      // So in every front end: the interactive session's roots are amber's, even where (as in
      // this headless host) they are not installed.
      ok(!roots.some((r) => r.name === "help" && r.owner === "files.commands"));
      match(about("huge.md"), /over the 262144 a definition may have/);
      match(about("Spaced Name.md"), /'spaced name' cannot be a command name/);
      match(about("loop/back"), /symlink loop/);
      strictEqual(host.runtime.state("files.commands").status, "active");
    } finally {
      await host.close();
      await Deno.remove(workspace, { recursive: true });
      await Deno.remove(configDir, { recursive: true });
    }
  });
});

Deno.test("the workspace's command wins over the config folder's; amber's over Claude Code's", async () => {
  await withHome(async (home) => {
    const workspace = await Deno.makeTempDir();
    const configDir = await Deno.makeTempDir();
    await write(`${workspace}/.amber/commands/deploy.md`, "Workspace deploy\n");
    await write(`${configDir}/commands/deploy.md`, "User deploy\n");
    await write(`${home}/.claude/commands/deploy.md`, "Claude deploy\n");
    await write(`${home}/.claude/commands/standup.md`, "Write my standup for $ARGUMENTS\n");
    const diagnostics: Diagnostic[] = [];
    const host = await openTestHost(workspace, configDir, diagnostics);
    try {
      strictEqual((await runSlashCommand(host, "/deploy"))?.ok, true);
      deepStrictEqual(await runSlashCommand(host, "/deploy"), {
        ok: true,
        text: "",
        prompt: "Workspace deploy\n",
      });
      deepStrictEqual(await runSlashCommand(host, "/standup today"), {
        ok: true,
        text: "",
        prompt: "Write my standup for today\n",
      });
      const messages = diagnostics.map((d) => `${d.pluginId}: ${d.message}`);
      ok(
        messages.some((m) =>
          /^files\.commands: .*commands\/deploy\.md: 'deploy' is also defined/.test(m)
        ),
        messages.join("\n"),
      );
      ok(
        messages.some((m) =>
          /^files\.commands-claude: .*deploy\.md: \/deploy is taken by the plugin files\.commands/
            .test(m)
        ),
        messages.join("\n"),
      );
    } finally {
      await host.close();
      await Deno.remove(workspace, { recursive: true });
      await Deno.remove(configDir, { recursive: true });
    }
  });
});

Deno.test("the roots markdown commands never take are every root of the interactive session", () => {
  const tui = [
    ...tuiCommands(() => undefined).map((c) => c.root),
    permissionsCommand(() => undefined).root,
    "set",
    "get",
  ];
  deepStrictEqual([...AMBER_COMMAND_ROOTS].sort(), tui.sort());
});
