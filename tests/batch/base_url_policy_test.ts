// Where a worker sends its provider key (cli/batch/base_url_policy.ts): a job's baseUrl is used
// only when it is the provider's own or listed in the worker's allowBaseUrls. Against real
// loopback servers that record every request and its headers: an unlisted one gets nothing (not
// even a model listing), a listed one gets the job and the key, and the provider's own URL from
// config.yaml needs no listing.

import assert from "node:assert/strict";
import { join } from "node:path";
import { makeBundledPlugins } from "@amber/plugins";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import {
  BaseUrlEntryError,
  BaseUrlNotAllowedError,
  checkAllowEntry,
  checkJobBaseUrl,
  isBaseUrlAllowed,
} from "../../cli/batch/base_url_policy.ts";
import { runJob, type RunJobOptions } from "../../cli/batch/run_job.ts";

const KEY = "sk-base-url-policy-test-key";

Deno.test("an allowBaseUrls entry allows its own scheme, host and port, at or below its path", () => {
  const allowed = ["http://127.0.0.1:8080", "https://gw.example/openai/"];
  const cases: [string, boolean][] = [
    ["http://127.0.0.1:8080", true],
    ["http://127.0.0.1:8080/v1", true],
    ["http://127.0.0.1:8080/v1/", true],
    ["http://127.0.0.1:8081/v1", false],
    ["http://localhost:8080/v1", false],
    ["https://127.0.0.1:8080/v1", false],
    ["https://gw.example/openai", true],
    ["https://gw.example/openai/v1", true],
    ["https://gw.example/openai-old/v1", false],
    ["https://gw.example/", false],
    ["https://gw.example:443/openai/v1", true],
    // The host is what a URL's userinfo trick cannot change.
    ["http://127.0.0.1:8080@collector.example/v1", false],
    ["https://gw.example.collector.example/openai", false],
    ["not a url", false],
    ["ftp://127.0.0.1:8080/v1", false],
  ];
  for (const [url, expected] of cases) assert.equal(isBaseUrlAllowed(url, allowed), expected, url);
  assert.equal(isBaseUrlAllowed("http://127.0.0.1:8080/v1", []), false);
});

Deno.test("an allowBaseUrls entry must be a plain http(s) URL", () => {
  assert.equal(checkAllowEntry("https://GW.example:443/openai/"), "https://gw.example/openai");
  for (const entry of ["127.0.0.1:8080", "file:///tmp/x", "http://u:p@h/", "http://h/?a=1"]) {
    assert.throws(() => checkAllowEntry(entry), BaseUrlEntryError, entry);
  }
});

Deno.test("the error names the URL, the provider's own and how to allow it", () => {
  let error: unknown;
  try {
    checkJobBaseUrl({
      url: "http://collector.example:9000/v1/",
      provider: "openai",
      ownUrl: "https://api.openai.com/v1",
      allowed: [],
      settingsFile: "/home/w/.config/amber/batch.yaml",
    });
  } catch (thrown) {
    error = thrown;
  }
  assert.ok(error instanceof BaseUrlNotAllowedError);
  assert.equal(error.name, "BaseUrlNotAllowedError");
  assert.equal(error.url, "http://collector.example:9000/v1/");
  assert.equal(
    error.message,
    "baseUrl 'http://collector.example:9000/v1/' is not allowed on this worker (provider " +
      "'openai' is at https://api.openai.com/v1), so nothing was sent there; to let jobs send " +
      "this worker's key to it, add 'http://collector.example:9000/v1' to allowBaseUrls in " +
      "/home/w/.config/amber/batch.yaml",
  );
});

// Two loopback servers that record every request: the one the worker allows, and another.
async function setUp(configYaml?: (allowed: FakeProvider) => string) {
  const allowed = await FakeProvider.start({ encoders: [openaiEncoder] });
  const collector = await FakeProvider.start({ encoders: [openaiEncoder] });
  const workspace = await Deno.makeTempDir();
  const configDir = await Deno.makeTempDir();
  if (configYaml !== undefined) {
    await Deno.writeTextFile(join(configDir, "config.yaml"), configYaml(allowed));
  }
  const options: RunJobOptions = {
    plugins: makeBundledPlugins,
    configDir,
    env: () => KEY,
    allowBaseUrls: [allowed.url],
  };
  return {
    allowed,
    collector,
    workspace,
    options,
    [Symbol.asyncDispose]: async () => {
      await allowed.close();
      await collector.close();
      await Deno.remove(workspace, { recursive: true });
      await Deno.remove(configDir, { recursive: true });
    },
  };
}

Deno.test("a job's unlisted baseUrl fails the job; the key never reaches that server", async () => {
  await using t = await setUp();
  t.collector.script({ text: "got your key" });
  const job = { workspace: t.workspace, prompt: "hi", provider: "openai", model: "m" };
  await assert.rejects(
    runJob({ ...job, baseUrl: `${t.collector.url}/v1` }, t.options),
    (error: Error) =>
      error instanceof BaseUrlNotAllowedError &&
      error.message.includes(`baseUrl '${t.collector.url}/v1' is not allowed`) &&
      error.message.includes(`add '${t.collector.url}/v1' to allowBaseUrls in `) &&
      error.message.includes(join(t.options.configDir, "batch.yaml")),
  );
  // Loopback is no exception: nothing listed means nothing allowed.
  await assert.rejects(
    runJob({ ...job, baseUrl: `${t.allowed.url}/v1` }, { ...t.options, allowBaseUrls: [] }),
    BaseUrlNotAllowedError,
  );
  assert.deepEqual(t.collector.requests, []);
  assert.deepEqual(t.allowed.requests, []);

  // The listed one gets the job, with the worker's key.
  t.allowed.script({ text: "fine" });
  const result = await runJob({ ...job, baseUrl: `${t.allowed.url}/v1` }, t.options);
  assert.equal(result.answer, "fine");
  assert.equal(t.allowed.chats.length, 1);
  assert.equal(t.allowed.chats[0].headers.authorization, `Bearer ${KEY}`);
  assert.deepEqual(t.collector.requests, []);
});

Deno.test("the provider's own base URL (config.yaml's) needs no listing", async () => {
  await using t = await setUp((own) => `provider: openai\nbaseUrl: ${own.url}/v1\n`);
  const options = { ...t.options, allowBaseUrls: [] };
  t.allowed.script({ text: "own" }, { text: "own again" });
  const job = { workspace: t.workspace, prompt: "hi", model: "m" };
  // Named by the job, or left to the worker's configuration.
  const named = await runJob({ ...job, baseUrl: `${t.allowed.url}/v1/` }, options);
  assert.equal(named.answer, "own");
  const left = await runJob(job, options);
  assert.equal(left.answer, "own again");
  assert.ok(t.allowed.chats.every((chat) => chat.headers.authorization === `Bearer ${KEY}`));
  // config.yaml's URL is the configured provider's only: another provider's job may not use it.
  await assert.rejects(
    runJob({ ...job, provider: "ollama", baseUrl: `${t.allowed.url}/v1` }, options),
    (error: Error) =>
      error instanceof BaseUrlNotAllowedError &&
      error.message.includes("(provider 'ollama' is at http://127.0.0.1:11434/v1)"),
  );
  assert.equal(t.allowed.chats.length, 2);
});
