// The whole command: `amber run` with one tool round trip against the fake provider, each run a
// fresh process, wall time and peak memory from /usr/bin/time -v; medians of 9 runs, and the
// same for `amber --version` (Deno's own start-up plus ours).
// Run: deno run -A bench/command_bench.ts

import { fileURLToPath } from "node:url";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";

const MAIN = fileURLToPath(new URL("../cli/main.ts", import.meta.url));
const RUNS = 9;
const server = await FakeProvider.start({ encoders: [openaiEncoder] });
const configDir = await Deno.makeTempDir({ prefix: "amber-bench-" });
const workspace = await Deno.makeTempDir({ prefix: "amber-bench-ws-" });
await Deno.writeTextFile(`${workspace}/notes.txt`, "forty-two\n");

async function measure(args: string[], before?: () => void): Promise<{ ms: number; mb: number }> {
  before?.();
  const output = await new Deno.Command("/usr/bin/time", {
    args: ["-v", Deno.execPath(), "run", "-A", MAIN, ...args],
    env: { AMBER_CONFIG_DIR: configDir, OPENAI_API_KEY: "sk-bench", NO_COLOR: "1" },
    cwd: workspace,
    stdout: "null",
    stderr: "piped",
  }).output();
  const report = new TextDecoder().decode(output.stderr);
  if (!output.success) throw new Error(`amber failed:\n${report}`);
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(
    report,
  )!;
  const ms = ((Number(wall[1] ?? 0) * 60 + Number(wall[2])) * 60 + Number(wall[3])) * 1000;
  const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(report)![1]);
  return { ms, mb: kb / 1024 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cases: Record<string, { ms: number[]; mb: number[] }> = {
  "amber run, one tool round trip": { ms: [], mb: [] },
  "amber --version": { ms: [], mb: [] },
};
for (let i = 0; i < RUNS; i++) {
  const run = await measure(
    ["run", "what is in notes.txt?", "--base-url", `${server.url}/v1`],
    () =>
      server.script(
        { toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
        { text: "It says forty-two.", usage: { promptTokens: 50, completionTokens: 5 } },
      ),
  );
  cases["amber run, one tool round trip"].ms.push(run.ms);
  cases["amber run, one tool round trip"].mb.push(run.mb);
  const version = await measure(["--version"]);
  cases["amber --version"].ms.push(version.ms);
  cases["amber --version"].mb.push(version.mb);
}
for (const [name, { ms, mb }] of Object.entries(cases)) {
  console.log(
    `${name}: ${median(ms).toFixed(0)} ms, ${median(mb).toFixed(0)} MB (median of ${RUNS})`,
  );
}
await server.close();
await Deno.remove(configDir, { recursive: true });
await Deno.remove(workspace, { recursive: true });
