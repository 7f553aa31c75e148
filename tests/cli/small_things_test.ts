// The small things a new user hits (issue 15), each as the user meets it: amber in a real
// subprocess, against servers on loopback that answer as a provider, a proxy or a billing
// endpoint would.

import { deepStrictEqual, doesNotMatch, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { tempDir } from "../_helpers.ts";
import { hasTmux, startAmber } from "../tui/_tmux.ts";
import { ROOT, runAmber, runDeno } from "./_subprocess.ts";

// A server answering every request with `answer`; closed when the test is done.
function serve(answer: (url: URL) => Response) {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => answer(new URL(request.url)),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

async function entries(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((entry) => entry.name).sort();
  } catch {
    return [];
  }
}

const PROXY_PAGE = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>502 Bad Gateway</title>
<style>body { font-family: sans-serif; color: #333; }</style></head>
<body><h1>Bad Gateway</h1><p>The proxy server received an invalid response.</p></body></html>`;

Deno.test("config check rejects an unknown provider, naming the file, the value and a guess", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(join(tmp.dir, "config.yaml"), "model: x\nprovider: anthropik\n");
  const result = await runAmber(tmp.dir, ["config", "check"]);
  strictEqual(result.code, 1, result.err);
  match(
    result.out,
    /config\.yaml:2:11: provider: no preset 'anthropik'; did you mean 'anthropic'\?/,
  );
  match(result.out, /presets: openai, .*anthropic/);
  match(result.out, /^1 problem$/m);
  doesNotMatch(result.out, /no problems/);
  // A known one is no problem.
  await Deno.writeTextFile(join(tmp.dir, "config.yaml"), "provider: groq\n");
  const fine = await runAmber(tmp.dir, ["config", "check"]);
  strictEqual(fine.code, 0, fine.out);
  match(fine.out, /no problems/);
});

Deno.test("a --workspace that does not exist is an error naming it, and nothing is created", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  const missing = join(tmp.dir, "no-such-dir");
  const result = await runAmber(config, ["--workspace", missing, "run", "hi"], {
    env: { OPENAI_API_KEY: "sk-test-key-1234" },
  });
  strictEqual(result.code, 2, result.err);
  strictEqual(result.err, `amber: --workspace ${missing}: no such directory`);
  deepStrictEqual(await entries(tmp.dir), []);
  await Deno.writeTextFile(join(tmp.dir, "file"), "");
  const file = await runAmber(config, ["tools", "--workspace", join(tmp.dir, "file")]);
  strictEqual(file.code, 2);
  match(file.err, /--workspace .*file: not a directory/);
});

Deno.test("mistyped commands, options and plugin ids get a guess", async () => {
  await using tmp = await tempDir();
  const command = await runAmber(tmp.dir, ["sesions"]);
  strictEqual(command.code, 2);
  match(command.err, /^amber: unknown command 'sesions'; did you mean 'sessions'\?; commands: /);
  const option = await runAmber(tmp.dir, ["run", "--max-step", "3", "hi"]);
  strictEqual(option.code, 2);
  match(option.err, /unknown option '--max-step' for run; did you mean --max-steps\?/);
  // Only run's own options and those every command takes: not another command's.
  match(option.err, /run takes --approve <value>, --max-steps <value>, .*--json;/);
  doesNotMatch(option.err, /--cascade|--url|--header|--scope|--width/);
  // Without a command, the mistyped option is named, not the value after it.
  const bare = await runAmber(tmp.dir, ["--max-step", "3"]);
  strictEqual(bare.code, 2);
  match(bare.err, /unknown option '--max-step' for the interactive session; did you mean/);
  const plugin = await runAmber(tmp.dir, ["plugins", "info", "tool_bsh"]);
  strictEqual(plugin.code, 2);
  match(
    plugin.err,
    /^amber: unknown plugin 'tool_bsh'; did you mean 'tool_bash'\?; known plugins: /,
  );
  const verb = await runAmber(tmp.dir, ["plugins", "lsit"]);
  match(verb.err, /unknown plugins command 'lsit'; did you mean 'list'\?/);
  // Nothing close: no guess.
  const far = await runAmber(tmp.dir, ["deploy"]);
  doesNotMatch(far.err, /did you mean/);
});

Deno.test("run --help lists run's options only", async () => {
  await using tmp = await tempDir();
  const help = await runAmber(tmp.dir, ["run", "--help"]);
  strictEqual(help.code, 0, help.err);
  match(help.out, /^usage: amber run \[options\]/);
  match(help.out, /--max-steps N/);
  match(help.out, /--workspace DIR/);
  doesNotMatch(help.out, /plugins list|--cascade|mcp add|sessions/);
  deepStrictEqual((await runAmber(tmp.dir, ["help", "run"])).out, help.out);
});

Deno.test("a 401 names the key variable to fix, in run, models and wallet", async () => {
  await using tmp = await tempDir();
  await using server = serve(() =>
    Response.json({
      type: "error",
      error: { type: "authentication_error", message: "invalid x-api-key" },
    }, { status: 401 })
  );
  const env = { ANTHROPIC_API_KEY: "sk-ant-wrong-key-1234" };
  const base = ["--provider", "anthropic", "--base-url", server.url];
  const run = await runAmber(tmp.dir, ["run", ...base, "hi"], { env, cwd: tmp.dir });
  strictEqual(run.code, 1);
  match(
    run.err,
    /amber: ANTHROPIC_API_KEY is rejected by anthropic \(401\): set it to a valid key \(401 authentication_error: invalid x-api-key\)/,
  );
  doesNotMatch(run.err, /sk-ant-wrong/);
  const models = await runAmber(tmp.dir, ["models", ...base], { env });
  strictEqual(models.code, 1);
  match(
    models.err,
    /^amber: ANTHROPIC_API_KEY is rejected by anthropic \(401\): set it to a valid key/,
  );
  // A balance that cannot be read for a refused key says so too.
  const wallet = await runAmber(
    tmp.dir,
    ["wallet", "--provider", "deepseek", "--base-url", server.url],
    { env: { DEEPSEEK_API_KEY: "sk-ds-wrong-1234" } },
  );
  strictEqual(wallet.code, 0, wallet.err);
  match(wallet.out, /^balance: -$/m);
  match(wallet.err, /^amber: DEEPSEEK_API_KEY is rejected by deepseek \(401\): set it to a valid/);
});

Deno.test("an HTML error page is reduced to its status and title", async () => {
  await using tmp = await tempDir();
  await using proxy = serve(() =>
    new Response(PROXY_PAGE, { status: 502, headers: { "content-type": "text/html" } })
  );
  const models = await runAmber(tmp.dir, ["models", "--base-url", `${proxy.url}/v1`], {
    env: { OPENAI_API_KEY: "sk-test-key-1234" },
  });
  strictEqual(models.code, 1);
  match(models.err, /failed: 502: 502 Bad Gateway \(an HTML page\)$/);
  doesNotMatch(models.err, /<|font-family|invalid response/);
});

Deno.test("status shows the wallet the interactive bar shows; tools and plugins list show task", async () => {
  await using tmp = await tempDir();
  await using billing = serve((url) =>
    url.pathname === "/user/balance"
      ? Response.json({
        is_available: true,
        balance_infos: [{ currency: "USD", total_balance: "12.34" }],
      })
      : new Response("not found", { status: 404 })
  );
  const args = ["status", "--provider", "deepseek", "--base-url", billing.url, "--width", "100"];
  const known = await runAmber(tmp.dir, args, { env: { DEEPSEEK_API_KEY: "sk-ds-1234" } });
  strictEqual(known.code, 0, known.err);
  strictEqual(known.out, "deepseek-chat │ $12.34");
  const unknown = await runAmber(tmp.dir, args, { env: { DEEPSEEK_API_KEY: "" } });
  strictEqual(unknown.out, "deepseek-chat │ -");

  const tools = await runAmber(tmp.dir, ["tools"]);
  match(tools.out, /^task\s+tool_task\s/m);
  const plugins = await runAmber(tmp.dir, ["plugins", "list"]);
  match(plugins.out, /tool_task\s+Task\s+\S+\s+active\s+1 tool/);
});

Deno.test("a run that never reached the provider leaves no session and no lock behind", async () => {
  await using tmp = await tempDir();
  // A port nothing listens on: taken and given back.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const env = { OPENAI_API_KEY: "sk-test-key-1234" };
  const refused = await runAmber(tmp.dir, [
    "run",
    "--base-url",
    `http://127.0.0.1:${port}/v1`,
    "hi",
  ], { env, cwd: tmp.dir });
  strictEqual(refused.code, 1);
  match(refused.err, /connection refused/);
  doesNotMatch(refused.err, /--resume/);
  await using server = serve(() =>
    Response.json({
      error: { message: "The model `nope` does not exist", code: "model_not_found" },
    }, {
      status: 404,
    })
  );
  const unknownModel = await runAmber(tmp.dir, [
    "run",
    "--base-url",
    `${server.url}/v1`,
    "--model",
    "nope",
    "hi",
  ], { env, cwd: tmp.dir });
  strictEqual(unknownModel.code, 1);
  match(unknownModel.err, /does not exist/);
  deepStrictEqual(await entries(join(tmp.dir, "sessions")), []);
  deepStrictEqual(await entries(join(tmp.dir, "locks", "sessions")), []);
  match((await runAmber(tmp.dir, ["sessions"])).out, /no sessions/);

  // A fresh id to --resume is refused without creating it.
  const fresh = await runAmber(tmp.dir, [
    "run",
    "--resume",
    "20261202-000000-abcdef",
    "--base-url",
    `${server.url}/v1`,
    "hi",
  ], { env, cwd: tmp.dir });
  strictEqual(fresh.code, 1);
  match(fresh.err, /no session '20261202-000000-abcdef'/);
  deepStrictEqual(await entries(join(tmp.dir, "sessions")), []);
  deepStrictEqual(await entries(join(tmp.dir, "locks", "sessions")), []);

  // One that got its answer keeps its session, as before.
  await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
  provider.script({ text: "hello" });
  const answered = await runAmber(tmp.dir, ["run", "--base-url", `${provider.url}/v1`, "hi"], {
    env,
    cwd: tmp.dir,
  });
  strictEqual(answered.code, 0, answered.err);
  strictEqual((await entries(join(tmp.dir, "sessions"))).length, 1);
});

Deno.test("deno task test's summary: compact progress, each failure named, the counts", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(
    join(tmp.dir, "sample_test.ts"),
    [
      ...Array.from({ length: 120 }, (_, i) => `Deno.test("passes ${i}", () => {});`),
      `Deno.test("breaks", () => { throw new Error("expected 1, got 2"); });`,
      `Deno.test({ name: "later", ignore: true, fn() {} });`,
    ].join("\n"),
  );
  const result = await runDeno([
    "run",
    "--allow-run",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    join(ROOT, ".ci", "test_summary.ts"),
    "sample_test.ts",
  ], { cwd: tmp.dir });
  strictEqual(result.code, 1);
  const lines = result.out.split("\n");
  // 122 marks on two lines, not a line per test.
  match(lines[0], /^[.!,]{80}$/);
  match(lines[1], /^[.!,]{42}$/);
  match(result.out, /FAILED 1\/1: \.\/sample_test\.ts > breaks\n {2}Error: expected 1, got 2/);
  deepStrictEqual(lines.slice(-2), ["1 skipped", "120 passed, 1 failed"]);
  ok(lines.length < 20, result.out);
});

Deno.test({
  name: "tmux: `amber --resume ID` (the space form the exit line prints) resumes that session",
  ignore: !hasTmux(),
  async fn() {
    await using tmp = await tempDir();
    const configDir = join(tmp.dir, "config");
    const workspace = join(tmp.dir, "workspace");
    await Deno.mkdir(configDir);
    await Deno.mkdir(workspace);
    await using provider = await FakeProvider.start({ encoders: [openaiEncoder] });
    provider.script({ text: "first answer" });
    const first = await runAmber(configDir, ["run", "--base-url", `${provider.url}/v1`, "hello"], {
      env: { OPENAI_API_KEY: "sk-test-key-1234" },
      cwd: workspace,
    });
    strictEqual(first.code, 0, first.err);
    const [id] = (await entries(join(configDir, "sessions"))).map((name) =>
      name.replace(/\.jsonl$/, "")
    );
    await using tmux = await startAmber({
      baseUrl: `${provider.url}/v1`,
      configDir,
      workspace,
      args: ["--resume", id],
    });
    await tmux.waitFor(new RegExp(`resumed session ${id} \\(2 messages\\)`), "the resumed session");
    doesNotMatch(await tmux.scrollback(), /unknown command/);
  },
});
