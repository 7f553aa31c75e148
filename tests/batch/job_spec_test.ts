// A tasks file is checked line by line: every kind of bad line is reported with the file, its
// line number and the key at fault, and never stops the lines after it.

import assert from "node:assert/strict";
import {
  JOB_SPEC_KEYS,
  JobSpecError,
  parseTasks,
  validateJobSpec,
} from "../../cli/batch/job_spec.ts";

const GOOD = '{"workspace": "/src/app", "prompt": "Fix the failing test."}';

// One bad line between two good ones: the error it gives, and the good ones still parsed.
function errorOf(bad: string) {
  const { tasks, errors } = parseTasks([GOOD, bad, GOOD].join("\n"), "tasks.jsonl");
  assert.deepEqual(tasks.map((task) => task.line), [1, 3], `the good lines around ${bad}`);
  assert.equal(errors.length, 1, `one error for ${bad}`);
  assert.equal(errors[0].line, 2);
  assert.equal(errors[0].file, "tasks.jsonl");
  assert.equal(errors[0].message, `tasks.jsonl:2: ${errors[0].problem}`);
  return errors[0];
}

Deno.test("parseTasks: every key a line may have, with its value kept", () => {
  const line = JSON.stringify({
    repo: "https://example.com/app.git",
    ref: "v1.2",
    prompt: "Bump the version.",
    provider: "anthropic",
    model: "claude-x",
    baseUrl: "http://127.0.0.1:9/v1",
    plugins: ["core.files", "core.shell"],
    maxSteps: 30,
    timeoutS: 600,
    maxCost: 1.5,
  });
  const { tasks, errors } = parseTasks(line, "t.jsonl");
  assert.deepEqual(errors, []);
  assert.deepEqual(tasks, [{ line: 1, spec: JSON.parse(line) }]);
  assert.deepEqual(
    Object.keys(JSON.parse(line)).sort(),
    [...JOB_SPEC_KEYS].filter((k) => k !== "workspace").sort(),
  );
});

Deno.test("parseTasks: blank lines are skipped and line numbers count them; CR LF is fine", () => {
  const text = `\n${GOOD}\r\n   \n${GOOD}\n`;
  const { tasks, errors } = parseTasks(text, "t.jsonl");
  assert.deepEqual(errors, []);
  assert.deepEqual(tasks.map((task) => task.line), [2, 4]);
  assert.deepEqual(parseTasks("", "empty.jsonl"), { tasks: [], errors: [] });
});

Deno.test("parseTasks: a line that is not JSON, or not an object", () => {
  assert.match(errorOf("{workspace: 1}").problem, /^not JSON: /);
  assert.match(errorOf('{"prompt": "x"').problem, /^not JSON: /);
  assert.equal(errorOf('["a"]').problem, "a task must be a JSON object, got an array");
  assert.equal(errorOf("42").problem, "a task must be a JSON object, got number 42");
  assert.equal(errorOf("null").key, undefined);
});

Deno.test("parseTasks: an unknown key is named, with the keys there are", () => {
  const error = errorOf('{"workspace": "/a", "prompt": "p", "maxStep": 3}');
  assert.equal(error.key, "maxStep");
  assert.equal(
    error.problem,
    "unknown key 'maxStep'; the keys are workspace, repo, ref, prompt, provider, model, baseUrl, " +
      "plugins, maxSteps, timeoutS, maxCost",
  );
  // A secret has no key to travel in.
  assert.equal(errorOf('{"workspace": "/a", "prompt": "p", "apiKey": "sk-1"}').key, "apiKey");
});

Deno.test("parseTasks: a value of the wrong type names its key and what it got", () => {
  const cases: [string, string, string][] = [
    ['{"workspace": 7, "prompt": "p"}', "workspace", "'workspace' must be a string, got number 7"],
    ['{"repo": true, "prompt": "p"}', "repo", "'repo' must be a string, got boolean true"],
    ['{"workspace": "/a", "prompt": ["p"]}', "prompt", "'prompt' must be a string, got an array"],
    [
      '{"workspace": "/a", "prompt": "p", "model": null}',
      "model",
      "'model' must be a string, got null",
    ],
    [
      '{"workspace": "/a", "prompt": "p", "maxSteps": "10"}',
      "maxSteps",
      `'maxSteps' must be a number, got string "10"`,
    ],
    [
      '{"workspace": "/a", "prompt": "p", "maxCost": {"usd": 1}}',
      "maxCost",
      "'maxCost' must be a number, got an object",
    ],
    [
      '{"workspace": "/a", "prompt": "p", "plugins": "core.files"}',
      "plugins",
      `'plugins' must be an array of plugin ids (non-empty strings), got string "core.files"`,
    ],
    [
      '{"workspace": "/a", "prompt": "p", "plugins": ["core.files", 3]}',
      "plugins",
      "'plugins' must be an array of plugin ids (non-empty strings), got an array",
    ],
  ];
  for (const [line, key, problem] of cases) {
    const error = errorOf(line);
    assert.equal(error.key, key, line);
    assert.equal(error.problem, problem, line);
  }
});

Deno.test("parseTasks: workspace and repo: exactly one; ref only with repo", () => {
  const both = errorOf('{"workspace": "/a", "repo": "https://x/y.git", "prompt": "p"}');
  assert.equal(both.problem, "give 'workspace' or 'repo', not both");
  assert.equal(both.key, "repo");
  const neither = errorOf('{"prompt": "p"}');
  assert.equal(neither.problem, "a task needs 'workspace' (a local path) or 'repo' (a git URL)");
  const ref = errorOf('{"workspace": "/a", "ref": "main", "prompt": "p"}');
  assert.equal(ref.key, "ref");
  assert.equal(ref.problem, "'ref' needs 'repo' (a workspace is used as it is)");
});

Deno.test("parseTasks: an empty or missing prompt, and empty strings", () => {
  assert.equal(errorOf('{"workspace": "/a"}').problem, "'prompt' is missing");
  assert.equal(errorOf('{"workspace": "/a", "prompt": ""}').problem, "'prompt' is empty");
  assert.equal(errorOf('{"workspace": "/a", "prompt": "  \\n "}').key, "prompt");
  assert.equal(errorOf('{"workspace": "", "prompt": "p"}').problem, "'workspace' is empty");
  assert.equal(errorOf('{"repo": "x", "ref": "", "prompt": "p"}').key, "ref");
});

Deno.test("parseTasks: limits must be positive, maxSteps whole; a provider name is a name", () => {
  const steps = errorOf('{"workspace": "/a", "prompt": "p", "maxSteps": 2.5}');
  assert.equal(steps.problem, "'maxSteps' must be a whole number of 1 or more, got 2.5");
  assert.equal(errorOf('{"workspace": "/a", "prompt": "p", "maxSteps": 0}').key, "maxSteps");
  assert.equal(
    errorOf('{"workspace": "/a", "prompt": "p", "timeoutS": 0}').problem,
    "'timeoutS' must be more than 0, got 0",
  );
  assert.equal(errorOf('{"workspace": "/a", "prompt": "p", "maxCost": -1}').key, "maxCost");
  const provider = errorOf('{"workspace": "/a", "prompt": "p", "provider": "open ai:x"}');
  assert.equal(provider.key, "provider");
  assert.match(provider.problem, /^'provider' must be a provider name/);
});

Deno.test("parseTasks: many bad lines, each reported once, in order, with the others kept", () => {
  const text = [
    "oops",
    GOOD,
    '{"workspace": "/a", "prompt": "p", "colour": "red"}',
    '{"prompt": ""}',
    GOOD,
  ].join("\n");
  const { tasks, errors } = parseTasks(text, "big.jsonl");
  assert.deepEqual(tasks.map((task) => task.line), [2, 5]);
  assert.deepEqual(errors.map((error) => error.line), [1, 3, 4]);
  assert.match(errors[1].message, /^big\.jsonl:3: unknown key 'colour'/);
});

Deno.test("validateJobSpec: what a worker checks a payload with throws JobSpecError", () => {
  assert.deepEqual(validateJobSpec({ workspace: "/a", prompt: "p" }), {
    workspace: "/a",
    prompt: "p",
  });
  assert.throws(
    () => validateJobSpec({ workspace: "/a", prompt: "p", secret: "sk" }),
    (error: unknown) => error instanceof JobSpecError && error.key === "secret",
  );
  const error = new JobSpecError("x", "prompt");
  assert.equal(error.name, "JobSpecError");
});

Deno.test("the README's example tasks file is valid", async () => {
  const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));
  const block = readme.match(/## Batches\n[\s\S]*?```jsonl\n([\s\S]*?)```/);
  assert.ok(block, "the Batches section has a jsonl example");
  const { tasks, errors } = parseTasks(block[1], "README.md");
  assert.deepEqual(errors, []);
  assert.equal(tasks.length, 3);
});
