// Ctrl-C in `amber run`, as a user meets it: in a real terminal (a pty from `script`), where the
// run's end waits for nothing the user no longer wants (the wallet readout of the closing bar),
// so amber exits as soon as the kernel has committed the cancelled step; and one Ctrl-C that
// reaches amber twice (the terminal's SIGINT and `deno task` forwarding it) is one press. Time
// is measured against the slow stream's own schedule, never as a tight bound.

import assert from "node:assert/strict";
import { SessionFile } from "@amber/core/kernel";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { tempDir } from "../_helpers.ts";
import { slowStream } from "./_slow_stream.ts";
import { MAIN, PERMISSIONS } from "./_subprocess.ts";

const ENV = { OPENAI_API_KEY: "sk-test-key-1234", NO_COLOR: "1" };

function hasScript(): boolean {
  try {
    return new Deno.Command("script", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

async function sessionIds(configDir: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const entry of Deno.readDir(`${configDir}/sessions`)) {
    if (entry.name.endsWith(".jsonl")) ids.push(entry.name.replace(/\.jsonl$/, ""));
  }
  return ids.sort();
}

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

// `amber ARGS` with stdin, stdout and stderr on a terminal; `exec` makes amber the shell's
// successor, so script's child is amber itself.
function inTerminal(dir: string, args: readonly string[]): Deno.ChildProcess {
  const line = ["exec", Deno.execPath(), "run", ...PERMISSIONS, MAIN, ...args].map(quote)
    .join(" ");
  return new Deno.Command("script", {
    args: ["-qec", line, "/dev/null"],
    env: { ...ENV, AMBER_CONFIG_DIR: dir, INIT_CWD: dir, SHELL: "/bin/sh" },
    cwd: dir,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function childOf(pid: number): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const out = await new Deno.Command("pgrep", { args: ["-P", String(pid)] }).output();
    const child = Number(new TextDecoder().decode(out.stdout).trim().split("\n")[0]);
    if (child > 0) return child;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no child of ${pid}`);
}

async function until(test: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await test()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}

Deno.test({
  name: "in a terminal, amber run exits 130 once the cancelled step is committed, not later",
  ignore: !hasScript(),
  async fn() {
    await using tmp = await tempDir();
    // Frames 100 ms apart; the signal goes when the rest would take 1.5 s, less than the
    // 2 s the closing bar's wallet readout was once waited for.
    const frameMs = 100;
    await using server = slowStream({ text: "word ".repeat(30), chunkSize: 5 }, frameMs);
    const child = inTerminal(tmp.dir, ["run", "count", "--base-url", server.url]);
    const amber = await childOf(child.pid);
    await until(() => server.sent() >= server.frames - 15, "the stream to be well under way");
    const interruptedAt = performance.now();
    const left = (server.frames - server.sent()) * frameMs;
    Deno.kill(amber, "SIGINT");
    const output = await child.output();
    const took = performance.now() - interruptedAt;
    const screen = new TextDecoder().decode(output.stdout);
    assert.equal(output.code, 130, screen);
    assert.ok(
      took < left,
      `exited ${took.toFixed(0)} ms after Ctrl-C; the stream had ${left} ms left`,
    );
    assert.ok(server.sent() < server.frames, "the stream did not run to its end");
    const [id] = await sessionIds(tmp.dir);
    assert.match(screen, new RegExp(`amber: session ${id}`));
    const loaded = await SessionFile.load(tmp.dir, id);
    assert.equal(loaded.steps.at(-1)?.end, "cancelled");
    const said = loaded.messages.find((m) => m.role === "assistant");
    assert.match(String(said?.content), /^(word )+/, "the text streamed so far is kept");
  },
});

Deno.test("two SIGINTs 50 ms apart are one Ctrl-C: the run is cancelled and committed, not cut", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  // A command that shrugs off the cancel's SIGTERM holds the step open (until its SIGKILL), so
  // a second press, were the echo one, would exit before the step is committed.
  const stubborn = "touch started; trap '' TERM; sleep 30";
  server.script({ toolCalls: [{ name: "bash", arguments: { command: stubborn } }] });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...PERMISSIONS,
      MAIN,
      "run",
      "hold",
      "--approve",
      "auto",
      "--base-url",
      `${server.url}/v1`,
    ],
    env: { ...ENV, AMBER_CONFIG_DIR: tmp.dir, INIT_CWD: tmp.dir },
    cwd: tmp.dir,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await until(() => Deno.stat(`${tmp.dir}/started`).then(() => true, () => false), "the command");
  child.kill("SIGINT");
  await new Promise((resolve) => setTimeout(resolve, 50));
  child.kill("SIGINT");
  const output = await child.output();
  const err = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 130, err);
  assert.equal(err.match(/cancelling/g)?.length, 1, err);
  assert.match(err, /amber: cancelled/);
  const [id] = await sessionIds(tmp.dir);
  const loaded = await SessionFile.load(tmp.dir, id);
  assert.equal(loaded.steps.at(-1)?.end, "cancelled");
  assert.ok(loaded.messages.some((m) => m.role === "tool"), "the command's result is committed");
});

Deno.test({
  name: "in a terminal, Ctrl-C at an approval question refuses the call and amber exits 130",
  ignore: !hasScript(),
  async fn() {
    await using tmp = await tempDir();
    await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
    server.script({ toolCalls: [{ name: "bash", arguments: { command: "touch ran" } }] });
    const child = inTerminal(tmp.dir, ["run", "ask me", "--base-url", `${server.url}/v1`]);
    const amber = await childOf(child.pid);
    const reader = child.stdout.getReader();
    let screen = "";
    while (!screen.includes("? allow")) {
      const { value, done } = await reader.read();
      if (done) break;
      screen += new TextDecoder().decode(value);
    }
    assert.match(screen, /\? allow \$ touch ran/);
    Deno.kill(amber, "SIGINT");
    // Without an answer the question once held amber until a line was typed: a pending read of
    // stdin. The child is killed if it is still there when the test gives up.
    const gaveUp = setTimeout(() => Deno.kill(amber, "SIGKILL"), 15_000);
    const status = await child.status;
    clearTimeout(gaveUp);
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      screen += new TextDecoder().decode(part.value);
    }
    assert.equal(status.code, 130, screen);
    assert.match(screen, /amber: cancelled/);
    await assert.rejects(Deno.stat(`${tmp.dir}/ran`), Deno.errors.NotFound);
    const [id] = await sessionIds(tmp.dir);
    const loaded = await SessionFile.load(tmp.dir, id);
    assert.equal(loaded.steps.at(-1)?.end, "cancelled");
  },
});
