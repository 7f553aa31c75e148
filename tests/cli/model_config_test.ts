import assert from "node:assert/strict";
import { readConfigFile } from "../../cli/config_file.ts";
import { tempDir } from "../_helpers.ts";

Deno.test("config.yaml: models and compaction are read, and bad values are named and dropped", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(
    `${tmp.dir}/config.yaml`,
    [
      "models:",
      "  qwen3-coder: {contextWindow: 32768, maxOutput: 8192, input: 0, output: 0}",
      "  gpt-5:",
      "    input: 1.25",
      "    output: -10",
      "    cacheRead: 0.125",
      "    cacheWrite: 0",
      "    windw: 1",
      "  broken: 42",
      "  half: {contextWindow: 1.5, maxOutput: 100}",
      "compaction: {at: 0.8, keepTurns: 0, auto: false, every: 3}",
      "",
    ].join("\n"),
  );
  const read = await readConfigFile(tmp.dir);
  assert.deepEqual(read.config.models, {
    "qwen3-coder": { contextWindow: 32768, maxOutput: 8192, input: 0, output: 0 },
    "gpt-5": { input: 1.25, cacheRead: 0.125, cacheWrite: 0 },
    half: { maxOutput: 100 },
  });
  assert.deepEqual(read.config.compaction, { at: 0.8, keepTurns: 0, auto: false });
  const messages = read.problems.map((problem) => problem.message.slice(tmp.dir.length + 1));
  assert.deepEqual(messages, [
    "config.yaml:5:13: models.gpt-5.output: expected dollars per million tokens (0 or more), " +
    "found number -10",
    "config.yaml:8:12: models.gpt-5.windw: unknown field (fields: contextWindow, maxOutput, " +
    "input, output, cacheRead, cacheWrite)",
    "config.yaml:9:11: models.broken: expected a mapping, found number 42",
    "config.yaml:10:25: models.half.contextWindow: expected a positive whole number of tokens, " +
    "found number 1.5",
    "config.yaml:11:57: compaction.every: unknown field (fields: at, keepTurns, auto)",
  ]);
});

Deno.test("config.yaml: compaction's share, turns and switch are checked, each on its own", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(
    `${tmp.dir}/config.yaml`,
    "compaction:\n  at: 1.5\n  keepTurns: -1\n  auto: yes please\nmodels: [gpt-5]\n",
  );
  const read = await readConfigFile(tmp.dir);
  assert.deepEqual(read.config.compaction, {});
  assert.equal(read.config.models, undefined);
  const messages = read.problems.map((problem) => problem.message.slice(tmp.dir.length + 1));
  assert.deepEqual(messages, [
    "config.yaml:5:9: models: expected a mapping, found a list",
    "config.yaml:2:7: compaction.at: expected a share above 0 and at most 1, found number 1.5",
    "config.yaml:3:14: compaction.keepTurns: expected a whole number of turns, found number -1",
    'config.yaml:4:9: compaction.auto: expected true or false, found string "yes please"',
  ]);
});

Deno.test("config.yaml: at 1 and whole sections without problems pass as written", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(
    `${tmp.dir}/config.yaml`,
    "compaction: {at: 1}\nmodels:\n  local: {contextWindow: 4096}\n",
  );
  const read = await readConfigFile(tmp.dir);
  assert.deepEqual(read.problems, []);
  assert.deepEqual(read.config.compaction, { at: 1 });
  assert.deepEqual(read.config.models, { local: { contextWindow: 4096 } });
});

Deno.test("config.yaml: a negative window and a price in quotes are named by line and key path", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(
    `${tmp.dir}/config.yaml`,
    [
      "models:",
      "  local:",
      "    contextWindow: -4096",
      '    input: "0.5"',
      "    output: 2",
      "  other: {contextWindow: 8192}",
      "",
    ].join("\n"),
  );
  const read = await readConfigFile(tmp.dir);
  assert.deepEqual(read.config.models, { local: { output: 2 }, other: { contextWindow: 8192 } });
  const messages = read.problems.map((problem) => problem.message.slice(tmp.dir.length + 1));
  assert.deepEqual(messages, [
    "config.yaml:3:20: models.local.contextWindow: expected a positive whole number of tokens, " +
    "found number -4096",
    "config.yaml:4:12: models.local.input: expected dollars per million tokens (0 or more), " +
    'found string "0.5"',
  ]);
});
