// `amber sessions` shows what each session cost (the sum of its steps' costs, `-` when no step
// was priced) and how often it was compacted.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../../cli/app.ts";
import { tempDir } from "../_helpers.ts";

function line(record: unknown): string {
  return `${JSON.stringify(record)}\n`;
}

async function writeSession(dir: string, id: string, records: readonly unknown[]): Promise<void> {
  await Deno.mkdir(join(dir, "sessions"), { recursive: true });
  const header = {
    type: "session",
    id,
    created: "2026-12-01T10:00:00.000Z",
    workspace: dir,
    provider: "anthropic",
    model: "claude-x",
    title: `prompt of ${id}`,
  };
  await Deno.writeTextFile(
    join(dir, "sessions", `${id}.jsonl`),
    [header, ...records].map(line).join(""),
  );
}

function step(n: number, cost?: number): unknown {
  return {
    type: "step",
    step: n,
    at: "2026-12-01T10:00:01.000Z",
    messages: [{ role: "assistant", content: `answer ${n}` }],
    usage: { promptTokens: 1000, completionTokens: 100 },
    ...(cost === undefined ? {} : { cost }),
  };
}

Deno.test("amber sessions: a cost column and the compactions of a compacted session", async () => {
  await using tmp = await tempDir();
  await writeSession(tmp.dir, "20261201-100000-aaaa", [
    step(0, 0.25),
    {
      type: "compaction",
      step: 1,
      at: "2026-12-01T10:00:02.000Z",
      reason: "auto",
      strategy: "default",
      tokensBefore: 9000,
      tokensAfter: 2000,
      messages: [{ role: "user", content: "the summary" }],
    },
    step(1, 1.5),
  ]);
  await writeSession(tmp.dir, "20261201-090000-bbbb", [step(0)]);
  const out: string[] = [];
  const code = await main(
    ["sessions", "--config-dir", tmp.dir],
    { out: (text) => out.push(text), err: (text) => out.push(text) },
  );
  assert.equal(code, 0, out.join("\n"));
  const rows = out.join("\n").split("\n").map((row) => row.split(/\s{2,}/));
  assert.deepEqual(rows, [
    ["id", "created", "steps", "cost", "model", "first prompt"],
    [
      "20261201-100000-aaaa",
      "2026-12-01 10:00:00",
      "2 (1 compacted)",
      "$1.75",
      "claude-x",
      "prompt of 20261201-100000-aaaa",
    ],
    // Nothing priced: no cost, rather than $0.00.
    [
      "20261201-090000-bbbb",
      "2026-12-01 10:00:00",
      "1",
      "-",
      "claude-x",
      "prompt of 20261201-090000-bbbb",
    ],
  ]);
});
