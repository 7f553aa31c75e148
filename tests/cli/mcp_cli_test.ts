// `amber mcp`, and MCP servers in `amber run` and `amber plugins`, as a user runs them: real amber
// subprocesses, real stdio servers written with the SDK (tests/mcp/_servers), the fake provider
// on loopback.

import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { tempDir } from "../_helpers.ts";
import { MAIN, PERMISSIONS, ROOT, runAmber } from "./_subprocess.ts";

const KEY = { OPENAI_API_KEY: "sk-test-key-1234" };
const SERVERS = join(ROOT, "tests", "mcp", "_servers");
const BASIC_TOOLS = 6;

// The argv of a test server: the repository's import map, whatever the server's working directory.
function serverArgv(name: string, ...args: string[]): string[] {
  return [
    Deno.execPath(),
    "run",
    "-A",
    "--quiet",
    "--config",
    join(ROOT, "deno.json"),
    join(SERVERS, `${name}.ts`),
    ...args,
  ];
}

function stdioEntry(name: string, ...args: string[]): { command: string; args: string[] } {
  const [command, ...rest] = serverArgv(name, ...args);
  return { command, args: rest };
}

function amber(configDir: string, workspace: string, args: string[]) {
  return runAmber(configDir, args, { cwd: workspace, env: { INIT_CWD: workspace, ...KEY } });
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("amber mcp add, list and remove: config.yaml keeps its comments; list connects", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  const path = join(config.dir, "config.yaml");
  const original = "# my settings\nmodel: gpt-5 # the best one\n";
  await Deno.writeTextFile(path, original);

  const added = await amber(config.dir, workspace.dir, [
    "mcp",
    "add",
    "basic",
    "--",
    ...serverArgv("basic"),
  ]);
  assert.equal(added.code, 0, added.err);
  assert.match(added.out, /^added 'basic' \(stdio: .*basic\.ts\) to .*config\.yaml$/);
  const remote = await amber(config.dir, workspace.dir, [
    "mcp",
    "add",
    "docs",
    "--url",
    "https://example.com/mcp",
    "--type",
    "sse",
    "--header",
    "X-Key: ${DOCS_KEY}",
    "--header",
    "X-Team:blue",
  ]);
  assert.equal(remote.code, 0, remote.err);
  const text = await Deno.readTextFile(path);
  assert.ok(text.startsWith(original), text);
  assert.match(
    text,
    /docs:\n {6}type: sse\n {6}url: https:\/\/example\.com\/mcp\n {6}headers:\n {8}X-Key: \$\{DOCS_KEY\}\n {8}X-Team: blue\n/,
  );

  const again = await amber(config.dir, workspace.dir, ["mcp", "add", "Basic", "--", "x"]);
  assert.equal(again.code, 1);
  assert.match(again.err, /mcp\.servers has 'basic' already/);
  const bad = await amber(config.dir, workspace.dir, ["mcp", "add", "no good", "--", "x"]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /a server name is 1 to 48 letters/);
  const mixed = await amber(config.dir, workspace.dir, [
    "mcp",
    "add",
    "x",
    "--url",
    "u",
    "--env",
    "A=1",
  ]);
  assert.equal(mixed.code, 2);
  assert.match(mixed.err, /--env goes with a command/);

  const removed = await amber(config.dir, workspace.dir, ["mcp", "remove", "docs"]);
  assert.equal(removed.code, 0, removed.err);
  const listed = await amber(config.dir, workspace.dir, ["mcp", "list", "--json"]);
  assert.equal(listed.code, 0, listed.err);
  const rows = JSON.parse(listed.out);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].name, "basic");
  assert.equal(rows[0].pluginId, "mcp.basic");
  assert.equal(rows[0].source, "config.yaml");
  assert.equal(rows[0].transport, "stdio");
  assert.equal(rows[0].state, "connected", listed.out);
  assert.equal(rows[0].tools, BASIC_TOOLS);
  assert.equal(rows[0].prompts, 1);

  assert.equal((await amber(config.dir, workspace.dir, ["mcp", "remove", "basic"])).code, 0);
  assert.equal(await Deno.readTextFile(path), original);
  const gone = await amber(config.dir, workspace.dir, ["mcp", "remove", "basic"]);
  assert.equal(gone.code, 2);
  assert.match(gone.err, /config\.yaml has no MCP server named 'basic' \(servers: none\)/);
});

Deno.test("a bad server entry is named with file:line:col and the other servers load", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  const basic = stdioEntry("basic");
  await Deno.writeTextFile(
    join(config.dir, "config.yaml"),
    [
      "mcp:",
      "  servers:",
      "    broken:",
      "      command: 42",
      "    basic:",
      `      command: ${JSON.stringify(basic.command)}`,
      `      args: ${JSON.stringify(basic.args)}`,
      "      disabledTools: [sleep]",
      "",
    ].join("\n"),
  );
  const listed = await amber(config.dir, workspace.dir, ["mcp", "list"]);
  assert.equal(listed.code, 0, listed.err);
  assert.match(listed.err, /config\.yaml:4:16: mcp\.servers\.broken\.command: /);
  const lines = listed.out.split("\n");
  assert.match(lines[0], /^NAME +SOURCE +TRANSPORT +STATE +TOOLS$/);
  assert.match(
    lines[1],
    new RegExp(`^basic +config\\.yaml +stdio +connected +${BASIC_TOOLS - 1}$`),
  );
  assert.equal(lines.length, 2);

  const check = await amber(config.dir, workspace.dir, ["config", "check"]);
  assert.equal(check.code, 1);
  assert.match(check.out, /config\.yaml:4:16: mcp\.servers\.broken\.command: /);
});

Deno.test("a workspace's server starts only once approved; a changed entry asks again", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
  const marker = join(workspace.dir, "started");
  const writeMcpJson = (extra: string[]) =>
    Deno.writeTextFile(
      join(workspace.dir, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          ws: {
            command: "/bin/sh",
            args: [
              "-c",
              `echo started >> '${marker}'; exec "$@"`,
              "sh",
              ...serverArgv("basic"),
              ...extra,
            ],
          },
        },
      }),
    );
  await writeMcpJson([]);
  const run = (prompt: string) =>
    amber(config.dir, workspace.dir, ["run", prompt, "--base-url", `${provider.url}/v1`]);
  const toolNames = (chat: number) =>
    ((provider.chats[chat].body as { tools?: { function: { name: string } }[] }).tools ?? [])
      .map((tool) => tool.function.name);

  const listed = await amber(config.dir, workspace.dir, ["mcp", "list"]);
  assert.equal(listed.code, 0, listed.err);
  assert.match(listed.out, /^ws +.*\.mcp\.json +stdio +awaiting approval +0$/m);
  assert.match(listed.out, /approve 'ws' with: amber mcp approve ws/);
  const plugins = await amber(config.dir, workspace.dir, ["plugins", "list"]);
  assert.equal(plugins.out.includes("mcp.ws"), false, plugins.out);

  provider.script({ text: "one" });
  const before = await run("hi");
  assert.equal(before.code, 0, before.err);
  assert.match(
    before.err,
    /the server 'ws' of .*\.mcp\.json is not started: it was never approved; `amber mcp approve ws`/,
  );
  assert.equal(toolNames(0).some((name) => name.startsWith("mcp__")), false);
  assert.equal(await exists(marker), false, "the unapproved server never ran");
  const untested = await amber(config.dir, workspace.dir, ["mcp", "test", "ws"]);
  assert.equal(untested.code, 2);
  assert.match(untested.err, /is not approved: amber mcp approve ws/);
  assert.equal(await exists(marker), false);

  const removed = await amber(config.dir, workspace.dir, ["mcp", "remove", "ws"]);
  assert.equal(removed.code, 2);
  assert.match(removed.err, /'ws' is declared in .*\.mcp\.json: edit that file to remove it/);

  const approved = await amber(config.dir, workspace.dir, ["mcp", "approve", "ws"]);
  assert.equal(approved.code, 0, approved.err);
  assert.match(
    approved.out,
    /^approved 'ws' of .*\.mcp\.json \(\/bin\/sh -c .*\); it starts with the next session$/,
  );

  provider.script({ text: "two" });
  const after = await run("hi again");
  assert.equal(after.code, 0, after.err);
  assert.ok(toolNames(1).includes("mcp__ws__echo"), toolNames(1).join(", "));
  assert.equal(await exists(marker), true);

  await writeMcpJson(["--name=changed"]);
  const changed = await amber(config.dir, workspace.dir, ["mcp", "list"]);
  assert.match(changed.out, /^ws +.*changed, awaiting approval +0$/m);
  provider.script({ text: "three" });
  const third = await run("and again");
  assert.equal(third.code, 0, third.err);
  assert.match(third.err, /its entry changed since it was approved/);
  assert.equal(toolNames(2).some((name) => name.startsWith("mcp__")), false);
});

Deno.test("amber mcp tools and test connect the one server; a failure says why and exits 1", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  const basic = stdioEntry("basic");
  const garbage = stdioEntry("garbage");
  await Deno.writeTextFile(
    join(config.dir, "config.yaml"),
    JSON.stringify({
      mcp: { servers: { basic: { ...basic, disabledTools: ["sleep"] }, garbage } },
    }),
  );
  const tools = await amber(config.dir, workspace.dir, ["mcp", "tools", "basic"]);
  assert.equal(tools.code, 0, tools.err);
  assert.match(tools.out, /^TOOL +AS +MARKS +DESCRIPTION$/m);
  assert.match(tools.out, /^echo +mcp__basic__echo +- +Returns its text unchanged\.$/m);
  assert.match(tools.out, /^peek +mcp__basic__peek +read-only +/m);
  assert.match(tools.out, /^sleep +mcp__basic__sleep +disabled +/m);

  const tested = await amber(config.dir, workspace.dir, ["mcp", "test", "basic"]);
  assert.equal(tested.code, 0, tested.err);
  assert.match(tested.out, /^basic: connected over stdio in \d+ ms \(amber-test-basic 1\.0\.0\)$/m);
  assert.match(
    tested.out,
    new RegExp(`^  tools: ${BASIC_TOOLS} \\(1 disabled\\), prompts: 1, resources: 1$`, "m"),
  );

  const failed = await amber(config.dir, workspace.dir, ["mcp", "test", "garbage"]);
  assert.equal(failed.code, 1);
  assert.match(failed.err, /^amber: garbage: cannot connect: .*this is not JSON-RPC/m);
  const unknown = await amber(config.dir, workspace.dir, ["mcp", "tools", "nope"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.err, /no MCP server named 'nope' \(servers: basic, garbage\)/);
});

Deno.test("amber run '/mcp__SERVER__PROMPT args' sends the prompt's text as the user's message", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
  await Deno.writeTextFile(
    join(config.dir, "config.yaml"),
    JSON.stringify({ mcp: { servers: { basic: stdioEntry("basic") }, startupWait: 20 } }),
  );
  provider.script({ text: "Hello, Ada!" });
  const result = await amber(config.dir, workspace.dir, [
    "run",
    "/mcp__basic__greet Ada style=cheerful",
    "--base-url",
    `${provider.url}/v1`,
  ]);
  assert.equal(result.code, 0, result.err);
  assert.equal(result.out, "Hello, Ada!");
  const body = provider.chats[0].body as { messages: { role: string; content: string }[] };
  assert.deepEqual(body.messages.filter((m) => m.role === "user").map((m) => m.content), [
    "Greet Ada in a cheerful way.",
  ]);

  // A command that answers with text only prints it; nothing is sent to the model.
  const missing = await amber(config.dir, workspace.dir, [
    "run",
    "/mcp__basic__greet",
    "--base-url",
    `${provider.url}/v1`,
  ]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /missing required argument: name/);
  // A prompt of a server that is not there is an error too, not a message for the model.
  const absent = await amber(config.dir, workspace.dir, [
    "run",
    "/mcp__nowhere__greet Ada",
    "--base-url",
    `${provider.url}/v1`,
  ]);
  assert.equal(absent.code, 1);
  assert.match(absent.err, /no command '\/mcp__nowhere__greet'; `amber mcp list` shows/);
  assert.equal(provider.chats.length, 1);
});

Deno.test("amber plugins: an MCP server is a plugin of category mcp, switched off like any", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  await Deno.writeTextFile(
    join(config.dir, "config.yaml"),
    JSON.stringify({ mcp: { servers: { basic: stdioEntry("basic") } } }),
  );
  const listed = await amber(config.dir, workspace.dir, ["plugins", "list"]);
  assert.equal(listed.code, 0, listed.err);
  assert.match(listed.out, /^mcp$/m);
  assert.match(listed.out, /mcp\.basic .*config\.yaml$/m);
  assert.equal(listed.out.includes("sandboxed"), false);

  const plan = await amber(config.dir, workspace.dir, [
    "plugins",
    "disable",
    "mcp.basic",
    "--dry-run",
  ]);
  assert.equal(plan.code, 0, plan.err);
  assert.match(plan.out, /mcp__basic__echo/);
  assert.match(plan.out, /mcp__basic__greet/);
  assert.match(plan.out, /\(dry run: nothing was changed\)/);

  const off = await amber(config.dir, workspace.dir, ["plugins", "disable", "mcp.basic"]);
  assert.equal(off.code, 0, off.err);
  assert.match(off.out, /^mcp\.basic: disabled \(saved to .*plugin\.conf\)$/m);
  const state = await amber(config.dir, workspace.dir, ["mcp", "list"]);
  assert.match(state.out, /^basic +config\.yaml +stdio +off +0$/m);
  const on = await amber(config.dir, workspace.dir, ["plugins", "enable", "mcp.basic"]);
  assert.equal(on.code, 0, on.err);
  const back = await amber(config.dir, workspace.dir, ["mcp", "list"]);
  assert.match(
    back.out,
    new RegExp(`^basic +config\\.yaml +stdio +connected +${BASIC_TOOLS}$`, "m"),
  );
});

Deno.test("amber run waits mcp.startupWait for the servers, and no longer", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
  const toolNames = (chat: number) =>
    ((provider.chats[chat].body as { tools?: { function: { name: string } }[] }).tools ?? [])
      .map((tool) => tool.function.name);
  const run = async (startupWait: number) => {
    await Deno.writeTextFile(
      join(config.dir, "config.yaml"),
      JSON.stringify({
        mcp: {
          servers: { basic: stdioEntry("basic"), slow: stdioEntry("slow", "--seconds=30") },
          startupWait,
        },
      }),
    );
    provider.script({ text: "done" });
    const started = performance.now();
    const result = await amber(config.dir, workspace.dir, [
      "run",
      "hi",
      "--base-url",
      `${provider.url}/v1`,
    ]);
    assert.equal(result.code, 0, result.err);
    return performance.now() - started;
  };
  // The quick server's tools are there; the slow one is not waited for past the limit.
  const waited = await run(4);
  assert.ok(toolNames(0).includes("mcp__basic__echo"), toolNames(0).join(", "));
  assert.equal(toolNames(0).some((name) => name.startsWith("mcp__slow__")), false);
  assert.ok(waited > 4000 && waited < 20_000, `${waited} ms`);
  // No wait: the request goes out at once, before even the quick server is there.
  const atOnce = await run(0);
  assert.equal(toolNames(1).some((name) => name.startsWith("mcp__")), false);
  assert.ok(atOnce < waited - 2000, `${atOnce} ms against ${waited} ms`);
});

// Processes alive in group `pgid`, zombies aside.
async function liveInGroup(pgid: number): Promise<number> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "pgid=,stat="] }).output();
  return new TextDecoder().decode(ps.stdout).split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => Number(fields[0]) === pgid && !fields[1]?.startsWith("Z")).length;
}

Deno.test("a server an amber killed with -9 left running is stopped by the next start", async () => {
  await using config = await tempDir();
  await using workspace = await tempDir();
  await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
  // The server's group has a second process that outlives the server itself.
  const entry = {
    command: "/bin/sh",
    args: ["-c", 'sleep 300 & exec "$@"', "sh", ...serverArgv("basic")],
  };
  await Deno.writeTextFile(
    join(config.dir, "config.yaml"),
    JSON.stringify({ mcp: { servers: { basic: entry }, startupWait: 20 } }),
  );
  provider.script({ toolCalls: [{ name: "mcp__basic__sleep", arguments: { ms: 60_000 } }] });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...PERMISSIONS,
      MAIN,
      "run",
      "sleep",
      "--approve",
      "auto",
      "--base-url",
      `${provider.url}/v1`,
    ],
    env: { AMBER_CONFIG_DIR: config.dir, INIT_CWD: workspace.dir, NO_COLOR: "1", ...KEY },
    cwd: workspace.dir,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  // The server is recorded once started; the tool call is under way once the model was asked.
  const records = join(config.dir, "processes");
  let pgid: number | undefined;
  for (let i = 0; i < 600 && (pgid === undefined || provider.chats.length === 0); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    try {
      for await (const file of Deno.readDir(records)) {
        pgid = JSON.parse(await Deno.readTextFile(join(records, file.name))).pid;
      }
    } catch {
      // Not yet.
    }
  }
  assert.ok(pgid !== undefined, "the server was recorded");
  child.kill("SIGKILL");
  await child.status;
  assert.ok(await liveInGroup(pgid) > 0, "the server's group outlived amber");

  const next = await amber(config.dir, workspace.dir, ["plugins", "list"]);
  assert.equal(next.code, 0, next.err);
  assert.match(next.err, /stopped a process an earlier amber left running: .*amber mcp server/);
  assert.equal(await liveInGroup(pgid), 0);
});
