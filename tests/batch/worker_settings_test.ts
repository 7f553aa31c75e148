// A worker's batch.yaml (cli/batch/worker_settings.ts): the defaults without a file, the values it
// gives, and an error naming the key for everything it cannot use.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  DEFAULT_WORKER_SETTINGS,
  readWorkerSettings,
  WorkerSettingsError,
} from "../../cli/batch/worker_settings.ts";

async function read(text: string | undefined) {
  const dir = await Deno.makeTempDir();
  try {
    if (text !== undefined) await Deno.writeTextFile(join(dir, "batch.yaml"), text);
    return await readWorkerSettings(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("no batch.yaml, or an empty one: the defaults", async () => {
  assert.deepEqual(await read(undefined), DEFAULT_WORKER_SETTINGS);
  assert.deepEqual(await read(""), DEFAULT_WORKER_SETTINGS);
});

Deno.test("batch.yaml's values replace the defaults", async () => {
  const settings = await read(
    "rateLimits:\n  anthropic: {max: 50, durationMs: 60000}\n  default: {max: 1, durationMs: 10}\n" +
      "lockDurationMs: 5000\nstalledIntervalMs: 2000\nmaxStalledCount: 4\n" +
      "allowBaseUrls: [http://127.0.0.1:8080/, https://gw.example/openai]\n",
  );
  assert.deepEqual(settings, {
    rateLimits: {
      anthropic: { max: 50, durationMs: 60000 },
      default: { max: 1, durationMs: 10 },
    },
    lockDurationMs: 5000,
    stalledIntervalMs: 2000,
    maxStalledCount: 4,
    allowBaseUrls: ["http://127.0.0.1:8080", "https://gw.example/openai"],
  });
});

Deno.test("what batch.yaml cannot say is an error naming the key", async () => {
  const cases: [string, RegExp][] = [
    ["lockDuration: 5\n", /lockDuration: unknown key \(keys: rateLimits, lockDurationMs/],
    ["lockDurationMs: 0\n", /lockDurationMs: expected a whole number above 0, got 0/],
    ["maxStalledCount: 1.5\n", /maxStalledCount: expected a whole number above 0/],
    ["rateLimits: [1]\n", /rateLimits: expected a mapping of queue names/],
    ["rateLimits: {openai: 5}\n", /rateLimits\.openai: expected \{max, durationMs\}/],
    ["rateLimits: {openai: {max: 5}}\n", /rateLimits\.openai: max and durationMs must be/],
    ["rateLimits: {openai: {max: 5, per: 1}}\n", /rateLimits\.openai\.per: unknown key/],
    ["- a list\n", /expected a mapping of settings/],
    ["allowBaseUrls: http://h\n", /allowBaseUrls: expected a list of base URLs/],
    ["allowBaseUrls: [5]\n", /allowBaseUrls\[0\]: expected a URL, got 5/],
    [
      "allowBaseUrls: [http://h, 127.0.0.1:8080]\n",
      /allowBaseUrls\[1\]: '127\.0\.0\.1:8080' is not a/,
    ],
    ["allowBaseUrls: ['http://u:p@h/']\n", /allowBaseUrls\[0\]: .* has credentials/],
    ["a: [\n", /batch\.yaml: /],
  ];
  for (const [text, message] of cases) {
    await assert.rejects(
      read(text),
      (error: Error) => error instanceof WorkerSettingsError && message.test(error.message),
      text,
    );
  }
});

// The yaml blocks of a markdown file that set a worker setting.
async function documentedSettings(file: string): Promise<string[]> {
  const text = await Deno.readTextFile(new URL(`../../${file}`, import.meta.url));
  return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1])
    .filter((block) => /lockDurationMs/.test(block));
}

Deno.test("the documented batch.yaml examples are valid, with the stall defaults", async () => {
  const blocks = [
    ...await documentedSettings("docs/batch.md"),
    ...await documentedSettings("README.md"),
  ];
  assert.equal(blocks.length, 2);
  for (const block of blocks) {
    const settings = await read(block);
    assert.equal(settings.lockDurationMs, DEFAULT_WORKER_SETTINGS.lockDurationMs, block);
    assert.equal(settings.stalledIntervalMs, DEFAULT_WORKER_SETTINGS.stalledIntervalMs, block);
    assert.ok(settings.allowBaseUrls.length > 0, block);
  }
});

Deno.test("the docs give the time a dead worker's job takes to come back, from the defaults", async () => {
  const { lockDurationMs, stalledIntervalMs } = DEFAULT_WORKER_SETTINGS;
  // The lock was renewed before half of it ran out; the lapse is found at the next stall check.
  const window = `${lockDurationMs / 2 / 1000} to ${(lockDurationMs + stalledIntervalMs) / 1000} s`;
  assert.equal(window, "15 to 60 s");
  for (const file of ["docs/batch.md", "README.md"]) {
    const text = (await Deno.readTextFile(new URL(`../../${file}`, import.meta.url)))
      .replace(/\s+/g, " ");
    assert.ok(text.includes(`${window} with the defaults`), file);
    assert.ok(
      text.includes("between `lockDurationMs / 2` and `lockDurationMs + stalledIntervalMs`"),
      file,
    );
  }
});
