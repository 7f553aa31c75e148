// One writer per session file: a second `--resume` of a session another amber process has open
// is refused at once, naming the session and that process, and writes nothing; once the holder
// is gone (however it went, kill -9 included) the session resumes. Real processes, real locks.

import assert from "node:assert/strict";
import { SessionFile } from "@amber/core/kernel";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { openHost } from "../../cli/host.ts";
import { AgentSession } from "../../cli/session/mod.ts";
import { SessionBusyError } from "../../cli/session/session_lock.ts";
import { tempDir } from "../_helpers.ts";
import { MAIN, PERMISSIONS, runAmber } from "./_subprocess.ts";

const ENV = { OPENAI_API_KEY: "sk-lock-test-2468", NO_COLOR: "1" };

async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(done(), `timed out waiting for ${what}`);
}

function userPrompts(messages: readonly { role: string; content?: string | null }[]): string[] {
  return messages.filter((m) => m.role === "user").map((m) => m.content ?? "");
}

Deno.test("a second --resume of a session in use is refused, names the holder, writes nothing", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const url = `${server.url}/v1`;
  const amber = (args: string[]) =>
    runAmber(tmp.dir, [...args, "--base-url", url], {
      cwd: tmp.dir,
      env: { INIT_CWD: tmp.dir, ...ENV },
    });

  server.script({ text: "first" });
  const created = await amber(["run", "one"]);
  assert.equal(created.code, 0, created.err);
  const id = /amber: session (\S+) /.exec(created.err)![1];

  // A holds the session: its model call does not answer.
  server.script({ text: "never", fault: { kind: "slowFirstByte", delayMs: 60_000 } });
  const holder = new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, MAIN, "run", "two", "--resume", id, "--base-url", url],
    env: { AMBER_CONFIG_DIR: tmp.dir, INIT_CWD: tmp.dir, ...ENV },
    cwd: tmp.dir,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    await until(() => server.chats.length === 2, "the holder's model call");
    const path = SessionFile.pathOf(tmp.dir, id);
    const before = await Deno.readTextFile(path);

    const refused = await amber(["run", "three", "--resume", id]);
    assert.equal(refused.code, 1);
    assert.match(
      refused.err,
      new RegExp(`session ${id} is in use by amber process ${holder.pid}\\b`),
    );
    assert.equal(server.chats.length, 2, "the refused run made no model call");
    assert.equal(await Deno.readTextFile(path), before, "the refused run wrote nothing");
  } finally {
    // A killed holder frees the lock with its file descriptors.
    holder.kill("SIGKILL");
    await holder.status;
  }

  server.script({ text: "third" });
  const resumed = await amber(["run", "three", "--resume", id]);
  assert.equal(resumed.code, 0, resumed.err);
  const saved = await SessionFile.load(tmp.dir, id);
  assert.equal(saved.torn, undefined);
  const prompts = userPrompts(saved.messages);
  assert.equal(prompts[0], "one");
  assert.equal(prompts.at(-1), "three");
  assert.equal(saved.messages.at(-1)?.content, "third");
});

Deno.test("two sessions in one process cannot hold one file; closing lets go", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  server.script({ text: "a" }, { text: "b" });
  const open = () =>
    AgentSession.open({
      openHost: (services) =>
        openHost({ ...services, configDir: tmp.dir, workspace: tmp.dir, thirdParty: false }),
      overrides: { model: "fake-model", baseUrl: `${server.url}/v1` },
      env: (name) => name === "OPENAI_API_KEY" ? ENV.OPENAI_API_KEY : undefined,
    });
  const first = await open();
  const second = await open();
  try {
    await first.turn("hello");
    const id = first.id!;
    await assert.rejects(second.resume(id), (error: unknown) => {
      assert.ok(error instanceof SessionBusyError);
      assert.equal(error.id, id);
      assert.equal(error.holderPid, Deno.pid);
      return true;
    });
    assert.equal(second.id, undefined, "the refused session holds nothing");
    first.close();
    await second.resume(id);
    await second.turn("again");
    assert.deepEqual(userPrompts((await SessionFile.load(tmp.dir, id)).messages), [
      "hello",
      "again",
    ]);
  } finally {
    first.close();
    second.close();
    await first.host.close();
    await second.host.close();
  }
});
