// `amber doctor` as a user runs it: real subprocesses over a real config directory holding a
// fault record, a lock whose files changed or went missing, and a process a "killed" amber left.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { applyFaultEvents, EMPTY_FAULT_RECORD } from "../../cli/fault_record.ts";
import { recordProcess } from "../../cli/leftovers.ts";
import { tempDir } from "../_helpers.ts";
import { lockEntry, sha256, writeLock } from "./_plugin_lock.ts";
import { runAmber } from "./_subprocess.ts";

// With the permissions of `deno task amber`: telling a live process from a reused pid may
// need `cat /proc/<pid>/stat`.
const doctor = (configDir: string, ...args: string[]) =>
  runAmber(configDir, ["doctor", ...args], {
    env: { INIT_CWD: configDir },
    flags: ["--allow-run"],
  });

Deno.test("amber doctor on a clean config directory: all is well, exit 0", async () => {
  await using tmp = await tempDir();
  const text = await doctor(tmp.dir);
  strictEqual(text.code, 0, text.err);
  deepStrictEqual(text.out.split("\n"), [`amber doctor: ${tmp.dir}`, "all is well"]);
  const json = await doctor(tmp.dir, "--json");
  strictEqual(json.code, 0, json.err);
  const report = JSON.parse(json.out);
  strictEqual(report.ok, true);
  deepStrictEqual(report.findings, []);
});

Deno.test("amber doctor lists holds, quarantines, faults, leftovers and lock problems, each with what to do; exit 1", async () => {
  await using tmp = await tempDir();
  const config = join(tmp.dir, "config");
  await Deno.mkdir(config, { recursive: true });
  const at = Date.UTC(2026, 0, 2, 3, 4, 5);
  const record = applyFaultEvents(EMPTY_FAULT_RECORD, [
    {
      kind: "timeout",
      pluginId: "hang",
      where: "import",
      message: "the import of plugin 'hang' did not finish within 300 ms",
      at,
      seam: "import",
    },
    { kind: "fault", pluginId: "flaky", where: "hook 'h' at AfterTool", message: "boom", at },
    {
      kind: "quarantine",
      pluginId: "flaky",
      where: "quarantine",
      message: "3 faults within 60 s",
      at,
    },
  ]);
  await Deno.writeTextFile(join(config, "faults.json"), JSON.stringify(record));

  const kept = join(tmp.dir, "kept.js");
  const changed = join(tmp.dir, "changed.js");
  await Deno.writeTextFile(kept, "export default {};\n");
  await Deno.writeTextFile(changed, "export default {};\n");
  const plugins = [
    lockEntry("kept", kept, await sha256(kept)),
    lockEntry("changed", changed, await sha256(changed)),
    lockEntry("gone", join(tmp.dir, "gone.js"), "0".repeat(64)),
  ];
  await Deno.writeTextFile(changed, "export default { changed: true };\n");
  await writeLock(config, plugins);

  // A process whose amber is gone: recorded, then its owner rewritten to a process that ended.
  const sleeper = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" })
    .spawn();
  try {
    const written = await recordProcess(config, sleeper.pid, { command: ["sleep", "30"] });
    const dir = join(config, "processes");
    const [name] = [...Deno.readDirSync(dir)].map((e) => e.name);
    await Deno.writeTextFile(
      join(dir, name),
      JSON.stringify({ ...written.record, owner: { pid: 999_999, startTime: "0" } }),
    );

    const result = await doctor(config);
    strictEqual(result.code, 1, result.err);
    const out = result.out;
    match(out, /^fault record|^plugins$/m);
    match(
      out,
      /! hang: held: its import hung at 2026-01-02T03:04:05\.000Z \(the import of plugin 'hang' did not finish within 300 ms\), so amber does not import it\n {4}what to do: `amber plugins enable hang` tries it again \(raise `timeouts\.plugins\.hang\.import`/,
    );
    match(
      out,
      /! flaky: quarantined once, last at 2026-01-02T03:04:05\.000Z: 3 faults within 60 s/,
    );
    match(
      out,
      /- flaky: 1 recent fault \(contained\), the last at 2026-01-02T03:04:05\.000Z: hook 'h' at AfterTool: boom/,
    );
    match(
      out,
      new RegExp(
        `! ${sleeper.pid}: left running by an amber that is gone: pid ${sleeper.pid}, started .*: sleep 30\\n {4}what to do: .*kill -- -${sleeper.pid}`,
      ),
    );
    match(out, /! changed: file:\/\/.*changed\.js changed since it was added, so it is refused/);
    match(out, /what to do: `amber plugins add .*changed\.js` accepts it as it is now/);
    match(out, /! gone: file:\/\/.*gone\.js is missing, so the plugin cannot load/);
    ok(!out.includes("kept:"), "a lock entry whose file is as recorded is fine");
    match(out, /5 things need attention$/);

    const json = await doctor(config, "--json");
    strictEqual(json.code, 1);
    const report = JSON.parse(json.out);
    strictEqual(report.ok, false);
    deepStrictEqual(
      report.findings.map((f: { area: string; subject: string; attention: boolean }) =>
        `${f.area}:${f.subject}:${f.attention}`
      ),
      [
        "plugin:hang:true",
        "plugin:flaky:true",
        "plugin:flaky:false",
        `process:${sleeper.pid}:true`,
        "lock:changed:true",
        "lock:gone:true",
      ],
    );
    deepStrictEqual(
      report.lock.map((check: { id: string; state: string }) => `${check.id}:${check.state}`),
      ["kept:ok", "changed:changed", "gone:missing"],
    );
    strictEqual(report.leftovers[0].pid, sleeper.pid);
    // The doctor only looks: the leftover still runs, the record is as it was.
    strictEqual(
      JSON.parse(await Deno.readTextFile(join(config, "faults.json"))).plugins.hang.hold.seam,
      "import",
    );
  } finally {
    sleeper.kill("SIGKILL");
    await sleeper.status;
  }
});

Deno.test("amber doctor says what is wrong with a fault record it cannot read", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(join(tmp.dir, "faults.json"), "{ not json");
  const result = await doctor(tmp.dir);
  strictEqual(result.code, 1);
  match(result.out, /fault record\n {2}! .*faults\.json: .*faults\.json: not JSON/);
  match(result.out, /what to do: delete it; amber starts a new one at the next fault/);
});
