import { slowStream } from "./_slow_stream.ts";
import { MAIN, PERMISSIONS } from "./_subprocess.ts";
const root = Deno.args[0] ?? ".";
const main = root === "." ? MAIN : `${root}/cli/main.ts`;
await using s = slowStream({ text: "word ".repeat(400), chunkSize: 5, usage: { promptTokens: 10, completionTokens: 400 } }, 50);
const cfg = await Deno.makeTempDir();
for (let i = 0; i < 3; i++) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, main, "run", "hi", "--base-url", s.url],
    env: { AMBER_CONFIG_DIR: cfg, INIT_CWD: cfg, NO_COLOR: "1", OPENAI_API_KEY: "sk-x-1234" },
    cwd: cfg, stdin: "null", stdout: "piped", stderr: "piped",
  }).spawn();
  while (s.sent() < 20) await new Promise((r) => setTimeout(r, 20));
  const t0 = performance.now();
  child.kill("SIGINT");
  const out = await child.output();
  console.log(`exit ${out.code} after ${(performance.now() - t0).toFixed(0)} ms (stream ${s.durationMs} ms)`);
  if (i === 0) console.log(new TextDecoder().decode(out.stderr));
}
