// amber's own config directory is protected: write, edit and bash touching it are put to the
// user even under --approve auto, and blocked, naming the path, when no one can answer.

import assert from "node:assert/strict";
import { openHost } from "@amber/cli";
import { AgentSession, ProtectedPaths } from "@amber/cli/session";
import type { ApprovalRequest } from "@amber/core/kernel";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { runAmber } from "./_subprocess.ts";

const KEY = { OPENAI_API_KEY: "sk-test-key-1234" };

interface Tmp {
  readonly workspace: string;
  readonly config: string;
  [Symbol.asyncDispose](): Promise<void>;
}

// A workspace holding amber's config directory as `.amber`, with a lock file and a config file.
async function workspaceWithConfig(): Promise<Tmp> {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-protect-" }));
  const config = `${workspace}/.amber`;
  await Deno.mkdir(config);
  await Deno.writeTextFile(`${config}/config.yaml`, "approval: ask\n");
  await Deno.writeTextFile(`${config}/plugins.lock.json`, '{ "version": 1, "plugins": [] }\n');
  return {
    workspace,
    config,
    [Symbol.asyncDispose]: () => Deno.remove(workspace, { recursive: true }),
  };
}

function amber(tmp: Tmp, args: string[]) {
  return runAmber(tmp.config, args, {
    cwd: tmp.workspace,
    env: { INIT_CWD: tmp.workspace, ...KEY },
    flags: ["--allow-run"],
  });
}

// What the model was told each tool call came to, from the request after it.
function toolResults(server: FakeProvider): string[] {
  const last = server.chats.at(-1)!.body as { messages: { role: string; content: string }[] };
  return last.messages.filter((m) => m.role === "tool").map((m) => m.content);
}

const ATTACKS = [
  { name: "write", arguments: { path: ".amber/plugins.lock.json", content: "{}" } },
  {
    name: "edit",
    arguments: { path: "src/../.amber/config.yaml", old_string: "ask", new_string: "auto" },
  },
  { name: "bash", arguments: { command: "echo approval: auto > .amber/config.yaml" } },
  { name: "bash", arguments: { command: `rm -f ${"$"}HOME/../${"$"}HOME/x; cd .amber; rm *` } },
  { name: "write", arguments: { path: "linked/config.yaml", content: "approval: auto\n" } },
];

Deno.test("amber run --approve auto without a terminal blocks every call touching the config directory", async () => {
  await using tmp = await workspaceWithConfig();
  await Deno.mkdir(`${tmp.workspace}/src`);
  await Deno.symlink(".amber", `${tmp.workspace}/linked`);
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(
    {
      toolCalls: [
        ...ATTACKS,
        { name: "write", arguments: { path: "notes.md", content: "fine\n" } },
      ],
    },
    { text: "done" },
  );
  const result = await amber(tmp, [
    "run",
    "change your settings",
    "--approve",
    "auto",
    "--base-url",
    `${server.url}/v1`,
  ]);
  assert.equal(result.code, 0, result.err);
  const results = toolResults(server);
  assert.equal(results.length, ATTACKS.length + 1);
  for (const [i, text] of results.slice(0, ATTACKS.length).entries()) {
    assert.match(text, /touches amber's config directory/, `call ${i}: ${text}`);
    assert.match(text, /there is no one to ask/, `call ${i}: ${text}`);
    assert.ok(text.includes(tmp.config), `call ${i} names the path: ${text}`);
  }
  assert.ok(results[0].includes(`${tmp.config}/plugins.lock.json`));
  assert.ok(results[1].includes(`${tmp.config}/config.yaml`));
  // Nothing of the config directory changed; the ordinary write went through.
  assert.equal(await Deno.readTextFile(`${tmp.config}/config.yaml`), "approval: ask\n");
  assert.equal(
    await Deno.readTextFile(`${tmp.config}/plugins.lock.json`),
    '{ "version": 1, "plugins": [] }\n',
  );
  assert.equal(await Deno.readTextFile(`${tmp.workspace}/notes.md`), "fine\n");
});

Deno.test("amber run --approve deny blocks a write to the config directory, naming it", async () => {
  await using tmp = await workspaceWithConfig();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script(
    { toolCalls: [{ name: "write", arguments: { path: ".amber/config.yaml", content: "x" } }] },
    { text: "done" },
  );
  const result = await amber(tmp, [
    "run",
    "go",
    "--approve",
    "deny",
    "--base-url",
    `${server.url}/v1`,
  ]);
  assert.equal(result.code, 0, result.err);
  const [text] = toolResults(server);
  assert.match(text, /'write' touches amber's config directory \(.*\.amber\/config\.yaml\)/);
  assert.match(text, /the approval policy is deny/);
  assert.equal(await Deno.readTextFile(`${tmp.config}/config.yaml`), "approval: ask\n");
});

Deno.test("under approval auto a session asks the user before touching the config directory", async () => {
  await using tmp = await workspaceWithConfig();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const session = await AgentSession.open({
    openHost: (services) =>
      openHost({ ...services, configDir: tmp.config, workspace: tmp.workspace }),
    overrides: { provider: "openai", model: "fake-model", baseUrl: `${server.url}/v1` },
    approval: "auto",
    env: () => "sk-fake-key",
  });
  try {
    const asked: ApprovalRequest[] = [];
    server.script(
      {
        toolCalls: [
          { name: "write", arguments: { path: ".amber/config.yaml", content: "first\n" } },
          { name: "write", arguments: { path: "plain.txt", content: "no question\n" } },
        ],
      },
      { text: "tried" },
      { toolCalls: [{ name: "write", arguments: { path: ".amber/config.yaml", content: "2\n" } }] },
      { text: "tried again" },
    );
    // "always" does not stick for a protected path: each call is asked again.
    await session.turn("first", {
      ask: (request) => {
        asked.push(request);
        return Promise.resolve("always");
      },
    });
    assert.equal(await Deno.readTextFile(`${tmp.config}/config.yaml`), "first\n");
    await session.turn("second", {
      ask: (request) => {
        asked.push(request);
        return Promise.resolve("deny");
      },
    });
    assert.equal(asked.length, 2, "asked for each protected write, not for plain.txt");
    assert.match(asked[0].correlationId ?? "", /^amber-config:.*\.amber\/config\.yaml$/);
    assert.equal(await Deno.readTextFile(`${tmp.config}/config.yaml`), "first\n");
    assert.equal(await Deno.readTextFile(`${tmp.workspace}/plain.txt`), "no question\n");
  } finally {
    session.close();
    await session.host.close();
  }
});

Deno.test("protected paths: spellings, symlinks and a config directory that is the workspace", async () => {
  await using tmp = await workspaceWithConfig();
  const home = tmp.workspace;
  const paths = new ProtectedPaths({ configDir: tmp.config, workspace: tmp.workspace, home });
  const bash = (command: string) => paths.touchedBy("bash", { command });
  assert.equal(bash("cat .amber/config.yaml"), tmp.config);
  assert.equal(bash(`cat ${tmp.config}/config.yaml`), tmp.config);
  assert.equal(bash("ls ./.amber"), tmp.config);
  assert.equal(bash("ls ~/.amber"), tmp.config);
  assert.equal(bash('cat "$HOME/.amber/plugins.lock.json"'), tmp.config);
  assert.equal(bash("cat src/../.amber/config.yaml"), tmp.config);
  assert.equal(paths.touchedBy("process_start", { command: "vi .amber/x" }), tmp.config);
  assert.equal(bash("ls .amberlike && echo amber"), undefined);
  assert.equal(bash("deno test -A"), undefined);
  await Deno.symlink(tmp.config, `${tmp.workspace}/cfg`);
  assert.equal(bash("cat cfg/config.yaml"), tmp.config);
  assert.equal(paths.pathTouched("cfg/new.yaml"), `${tmp.config}/new.yaml`);
  // A dangling link into the directory still counts: a write through it lands there.
  await Deno.symlink(".amber/not-yet.yaml", `${tmp.workspace}/dangling`);
  assert.equal(paths.pathTouched("dangling"), `${tmp.config}/not-yet.yaml`);
  assert.equal(paths.touchedBy("read", { path: ".amber/config.yaml" }), undefined);

  // The config directory is the workspace itself: only amber's own files are protected.
  const same = new ProtectedPaths({ configDir: tmp.workspace, workspace: tmp.workspace, home });
  assert.equal(same.touchedBy("write", { path: "notes.md" }), undefined);
  assert.equal(
    same.touchedBy("write", { path: "plugins.lock.json" }),
    `${tmp.workspace}/plugins.lock.json`,
  );
  assert.equal(
    same.touchedBy("edit", { path: "plugins/hello/plugin.conf" }),
    `${tmp.workspace}/plugins/hello/plugin.conf`,
  );
  assert.equal(same.touchedBy("bash", { command: "rm -rf sessions" }), `${tmp.workspace}/sessions`);
});
