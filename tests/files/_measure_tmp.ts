import { openHost } from "../../cli/host.ts";
const configDir = await Deno.makeTempDir();
const workspace = await Deno.makeTempDir();
Deno.env.set("HOME", await Deno.makeTempDir());
const host = await openHost({ configDir, workspace, thirdParty: false });
const ids = host.runtime.list().map((p) => p.plugin?.id ?? p.id).filter((id: string) => id.startsWith("files."));
function measure(label: string) {
  for (let i = 0; i < 2000; i++) host.runtime.refresh();
  const n = 20000;
  const t = performance.now();
  for (let i = 0; i < n; i++) host.runtime.refresh();
  console.log(label, ((performance.now() - t) / n * 1000).toFixed(2), "µs per step boundary");
}
measure("6 files plugins on, no folders:");
for (const id of ids) await host.runtime.setState(id, false);
measure("files plugins off:");
for (const id of ids) await host.runtime.setState(id, true);
await Deno.mkdir(`${workspace}/.amber/commands`, { recursive: true });
for (let i = 0; i < 20; i++) await Deno.writeTextFile(`${workspace}/.amber/commands/c${i}.md`, "---\ndescription: x\n---\nDo $1\n");
host.runtime.refresh(); await new Promise((r) => setTimeout(r, 200)); host.runtime.refresh();
console.log(JSON.stringify(host.runtime.refresh()), JSON.stringify(host.runtime.refresh()));
measure("20 command files in .amber/commands:");
console.log(ids);
await host.close();
