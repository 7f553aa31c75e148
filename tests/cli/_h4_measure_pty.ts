import { slowStream } from "./_slow_stream.ts";
import { PERMISSIONS } from "./_subprocess.ts";
const root = Deno.args[0] ?? Deno.cwd();
const main = `${root}/cli/main.ts`;
const frameMs = 50;
await using s = slowStream({ text: "word ".repeat(400), chunkSize: 5, usage: { promptTokens: 10, completionTokens: 400 } }, frameMs);
const cfg = await Deno.makeTempDir();
const q = (v: string) => `'${v}'`;
for (let i = 0; i < 3; i++) {
  const cmd = `exec ${Deno.execPath()} run ${PERMISSIONS.join(" ")} ${q(main)} run hi --base-url ${s.url}`;
  const child = new Deno.Command("script", {
    args: ["-qec", cmd, "/dev/null"],
    env: { AMBER_CONFIG_DIR: cfg, INIT_CWD: cfg, NO_COLOR: "1", OPENAI_API_KEY: "sk-x-1234" },
    cwd: cfg, stdin: "piped", stdout: "piped", stderr: "piped",
  }).spawn();
  const before = s.chats();
  while (s.chats() === before || s.sent() < 20) await new Promise((r) => setTimeout(r, 20));
  const ps = new TextDecoder().decode((await new Deno.Command("pgrep", { args: ["-P", String(child.pid)] }).output()).stdout).trim();
  const t0 = performance.now();
  Deno.kill(Number(ps), "SIGINT");
  const out = await child.output();
  console.log(`exit ${out.code} after ${(performance.now() - t0).toFixed(0)} ms (stream ${s.durationMs} ms)`);
  if (i === 0) console.log(new TextDecoder().decode(out.stdout).slice(-400));
}
