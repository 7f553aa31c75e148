// The price table's answers kept in amber's cache folder (cli/session/price_memo.ts): what one
// process kept, the next reads, within the same scope; a few scopes live side by side (two builds
// of amber started in turn keep each other's answers); a file that is missing, malformed, too big
// or not a file at all is read as empty and nothing breaks; and end to end, `amber run` with a
// model only the price table describes prices its turn the same whether the table was loaded or
// its answer was read from the file, whichever config directory it runs with.

import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { filePriceMemo } from "../../cli/session/price_memo.ts";
import { tempDir } from "../_helpers.ts";
import { runAmber } from "./_subprocess.ts";

const SCOPE = "table@1 2026-12-02";

Deno.test("what one process keeps the next recalls, in its scope only", async () => {
  await using tmp = await tempDir();
  const info = { id: "m", contextWindow: 8192, prices: { input: 1 }, sources: ["price-table"] };
  await filePriceMemo(tmp.dir).keep(SCOPE, "openai/m", info);
  await filePriceMemo(tmp.dir).keep(SCOPE, "openai/none", null);
  const next = filePriceMemo(tmp.dir);
  assert.deepEqual(await next.recall(SCOPE, "openai/m"), info);
  assert.equal(await next.recall(SCOPE, "openai/none"), null);
  assert.equal(await next.recall(SCOPE, "openai/other"), undefined);
  // A model named like an Object member is no entry.
  assert.equal(await next.recall(SCOPE, "constructor"), undefined);
  assert.equal(await next.recall("table@1 2026-12-03", "openai/m"), undefined);
  assert.equal(await next.recall("__proto__", "openai/m"), undefined);
  await next.keep("table@1 2026-12-03", "openai/m", null);
  const text = await Deno.readTextFile(join(tmp.dir, "prices.json"));
  assert.deepEqual(JSON.parse(text), {
    scopes: {
      [SCOPE]: { "openai/m": info, "openai/none": null },
      "table@1 2026-12-03": { "openai/m": null },
    },
  });
  assert.deepEqual(
    [...Deno.readDirSync(tmp.dir)].map((entry) => entry.name),
    ["prices.json"],
    "no temporary file is left",
  );
});

Deno.test("the file keeps at most 200 models, the newest", async () => {
  await using tmp = await tempDir();
  const memo = filePriceMemo(tmp.dir);
  for (let i = 0; i < 205; i++) await memo.keep(SCOPE, `openai/m${i}`, null);
  const kept = JSON.parse(await Deno.readTextFile(join(tmp.dir, "prices.json")));
  const names = Object.keys(kept.scopes[SCOPE]);
  assert.equal(names.length, 200);
  assert.equal(names[0], "openai/m5");
  assert.equal(names.at(-1), "openai/m204");
});

Deno.test("two builds started in turn keep each other's answers; past four scopes the one written longest ago goes", async () => {
  await using tmp = await tempDir();
  // A clone and the single-file build (or two versions) each have their own scope.
  const clone = "genai-prices@0.1.8 2026-12-02";
  const bundle = "amber 0.1.0 single-file build 2026-12-02";
  await filePriceMemo(tmp.dir).keep(clone, "openai/gpt-5.5", null);
  await filePriceMemo(tmp.dir).keep(bundle, "openai/gpt-5.5", null);
  assert.equal(await filePriceMemo(tmp.dir).recall(clone, "openai/gpt-5.5"), null);
  assert.equal(await filePriceMemo(tmp.dir).recall(bundle, "openai/gpt-5.5"), null);
  // Written again, a scope counts as the newest.
  await filePriceMemo(tmp.dir).keep(clone, "openai/other", null);
  for (const day of ["2026-12-03", "2026-12-04", "2026-12-05"]) {
    await filePriceMemo(tmp.dir).keep(`genai-prices@0.1.8 ${day}`, "openai/gpt-5.5", null);
  }
  const kept = JSON.parse(await Deno.readTextFile(join(tmp.dir, "prices.json")));
  assert.deepEqual(Object.keys(kept.scopes), [
    clone,
    "genai-prices@0.1.8 2026-12-03",
    "genai-prices@0.1.8 2026-12-04",
    "genai-prices@0.1.8 2026-12-05",
  ]);
  assert.equal(await filePriceMemo(tmp.dir).recall(bundle, "openai/gpt-5.5"), undefined);
});

Deno.test("a malformed, oversized or special file is read as empty, and a write that fails is no error", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.dir, "prices.json");
  const malformed = [
    "{not json",
    "[]",
    "null",
    '{"scopes": []}',
    '{"scopes": null}',
    `{"scopes": {"${SCOPE}": ["openai/m"]}}`,
    `{"scopes": {"${SCOPE}": null}}`,
    // The format before several scopes were kept.
    `{"scope": "${SCOPE}", "models": {"openai/m": null}}`,
  ];
  for (const text of malformed) {
    await Deno.writeTextFile(path, text);
    assert.equal(await filePriceMemo(tmp.dir).recall(SCOPE, "openai/m"), undefined, text);
  }
  // A malformed scope is dropped at the next write; the well-formed ones stay.
  await Deno.writeTextFile(path, `{"scopes": {"bad": 3, "good": {"openai/x": null}}}`);
  await filePriceMemo(tmp.dir).keep(SCOPE, "openai/m", null);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(path)), {
    scopes: { good: { "openai/x": null }, [SCOPE]: { "openai/m": null } },
  });
  // Too big to be this cache: not read (the check is on the size, not the content).
  await Deno.writeTextFile(
    path,
    JSON.stringify({ scopes: { [SCOPE]: { "openai/m": null } } }) + " ".repeat(1024 * 1024),
  );
  assert.equal(await filePriceMemo(tmp.dir).recall(SCOPE, "openai/m"), undefined);
  // A FIFO in its place would block a read forever: it is not opened.
  await Deno.remove(path);
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(made.success);
  assert.equal(await filePriceMemo(tmp.dir).recall(SCOPE, "openai/m"), undefined);
  // A directory where the file goes: keeping fails quietly, and this process still recalls it.
  await Deno.remove(path);
  await Deno.mkdir(path);
  const memo = filePriceMemo(tmp.dir);
  await memo.keep(SCOPE, "openai/m", null);
  assert.equal(await memo.recall(SCOPE, "openai/m"), null);
  assert.equal((await Deno.stat(path)).isDirectory, true, "nothing of the user's is replaced");
});

Deno.test("amber run with a model only the price table knows: the same cost from the table and from the kept answer, in any config directory", async () => {
  await using tmp = await tempDir();
  await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const cache = join(tmp.dir, "cache");
  // gpt-5.5, the openai preset's default, is in the price table and not in the models.dev
  // snapshot: $5 per million input tokens, $30 per million output tokens.
  const turn = async (configDir: string) => {
    await Deno.mkdir(configDir, { recursive: true });
    server.script({ text: "Hi.", usage: { promptTokens: 100_000, completionTokens: 1_000 } });
    return runAmber(configDir, ["run", "hello", "--base-url", `${server.url}/v1`], {
      cwd: tmp.dir,
      env: { INIT_CWD: tmp.dir, OPENAI_API_KEY: "sk-test-key-1234", AMBER_CACHE_DIR: cache },
    });
  };
  const first = await turn(join(tmp.dir, "one"));
  assert.equal(first.code, 0, first.err);
  assert.match(first.err, /amber: this turn cost \$0\.530\n/);
  const path = join(cache, "prices.json");
  const kept = JSON.parse(await Deno.readTextFile(path));
  // Kept under the table's version and the day, not where this copy of amber keeps it: a clone
  // and the installed command share it.
  const [scope, ...more] = Object.keys(kept.scopes);
  assert.deepEqual(more, []);
  assert.match(scope, /^genai-prices@\d+\.\d+\.\d+ \d{4}-\d{2}-\d{2}$/);
  const models = kept.scopes[scope];
  assert.deepEqual(models["openai/gpt-5.5"].prices, { input: 5, output: 30, cacheRead: 0.5 });
  const written = (await Deno.stat(path)).mtime;
  // Another config directory (as `amber demo` and batch jobs start with) reads the same answer,
  // and writes nothing: it did not look the model up.
  const second = await turn(join(tmp.dir, "two"));
  assert.equal(second.code, 0, second.err);
  assert.match(second.err, /amber: this turn cost \$0\.530\n/);
  assert.deepEqual((await Deno.stat(path)).mtime, written);
  // The kept answer is what the next run reads (the table is not loaded to check it): edited
  // by hand, its prices are believed only within their checks. An input price of the wrong type
  // is none, and a model priced by halves shows no cost rather than a wrong one.
  models["openai/gpt-5.5"].prices = { input: 1, output: 2 };
  await Deno.writeTextFile(path, JSON.stringify(kept));
  const third = await turn(join(tmp.dir, "one"));
  assert.equal(third.code, 0, third.err);
  assert.match(third.err, /amber: this turn cost \$0\.102\n/);
  models["openai/gpt-5.5"].prices = { input: "free", output: 30 };
  await Deno.writeTextFile(path, JSON.stringify(kept));
  const fourth = await turn(join(tmp.dir, "one"));
  assert.equal(fourth.code, 0, fourth.err);
  assert.doesNotMatch(fourth.err, /cost/);
});
