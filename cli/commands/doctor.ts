/**
 * `amber doctor [--json]`: what needs looking at, each with what to do about it. It reads only
 * what amber keeps in the config directory and runs no plugin code, so it works when a plugin
 * does not:
 *
 * - every plugin's remembered faults, quarantines and holds (`faults.json`);
 * - processes an earlier amber left running (after a kill -9; see `leftovers.ts`);
 * - the lock's state: a recorded plugin whose entry file or any local file it imports (its
 *   recorded module graph) changed since it was added, or is missing; a recorded grant that is
 *   not one a manifest may ask for (edited by hand: the plugin is not started with it); and,
 *   needing nothing, each plugin that is trusted to run inside amber with all its permissions;
 * - what MCP servers logged (`mcp/logs/<name>.log`: their log messages and stderr, which a
 *   session never prints), each server's last line.
 *
 * Exit code 0 when all is well (recent faults alone are shown but need nothing), 1 when
 * something needs attention.
 *
 * @module
 */

import { configDir as defaultConfigDir, describeError } from "@amber/core";
import { checkPermissions } from "@amber/core/sandbox";
import { UsageError } from "../args.ts";
import type { CliCommand, CommandContext } from "../command.ts";
import {
  FAULT_RECORD_FILE,
  type FaultRecord,
  type PluginFaultEntry,
  readFaultRecord,
} from "../fault_record.ts";
import { describeLeftover, type Leftover, listLeftovers } from "../leftovers.ts";
import { type McpLog, readMcpLogs } from "../mcp_logs.ts";
import { graphFolder, verifyModuleGraph } from "../module_graph.ts";
import { PLUGIN_LOCK_FILE, type PluginLockEntry, readPluginLock } from "../plugin_lock.ts";

/** `amber doctor`. */
export const doctorCommand: CliCommand = {
  name: "doctor",
  usage:
    `  doctor [--json]                 plugin faults, quarantines and holds, leftover processes, and
                                  the lock's state, each with what to do; exit 1 when something
                                  needs attention`,
  flags: ["json"],
  run: doctor,
};

/** One thing the doctor found. */
export interface DoctorFinding {
  /** What it is about: a plugin's faults, a leftover process, the lock, the fault record. */
  readonly area: "plugin" | "process" | "lock" | "record" | "mcp";
  /** The plugin id, pid or file concerned. */
  readonly subject: string;
  /** Whether it needs the user (otherwise it is for information). */
  readonly attention: boolean;
  /** What was found, in one line. */
  readonly what: string;
  /** What to do about it. */
  readonly todo: string;
}

/** How a lock entry's file compares with the hash recorded when it was added. */
export interface LockCheck {
  /** The plugin. */
  readonly id: string;
  /** What it was added from. */
  readonly spec: string;
  /** The file whose hash was recorded. */
  readonly resolved: string;
  /** `ok`, `changed`, `missing`, or `unchecked` (a remote file). */
  readonly state: "ok" | "changed" | "missing" | "unchecked";
  /** The first file found changed or missing: `resolved` or a file of its module graph. */
  readonly file?: string;
  /** Whether the lock records its module graph (an older entry records only `resolved`). */
  readonly graph: boolean;
  /** Whether it is trusted: it runs inside amber, with all of amber's permissions. */
  readonly trusted: boolean;
  /** Why its recorded grant cannot be used, if it cannot. */
  readonly grantProblem?: string;
}

/** Everything `amber doctor` reports; `--json` prints it as is. */
export interface DoctorReport {
  /** The config directory looked at. */
  readonly configDir: string;
  /** True when nothing needs attention. */
  readonly ok: boolean;
  /** What was found, plugins first. */
  readonly findings: readonly DoctorFinding[];
  /** The fault record, per plugin id. */
  readonly faults: FaultRecord["plugins"];
  /** Processes an earlier amber left running. */
  readonly leftovers: readonly Leftover[];
  /** Every lock entry's state. */
  readonly lock: readonly LockCheck[];
  /** What each MCP server logged: its last lines. */
  readonly mcpLogs: readonly McpLog[];
}

/**
 * Looks at `configDir`; never throws for a file it cannot read (that is a finding).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { doctorReport } from "./doctor.ts";
 * const dir = await Deno.makeTempDir();
 * const report = await doctorReport(dir);
 * assert.equal(report.ok, true);
 * assert.deepEqual(report.findings, []);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function doctorReport(configDir: string): Promise<DoctorReport> {
  const findings: DoctorFinding[] = [];
  let faults: FaultRecord["plugins"] = {};
  try {
    faults = (await readFaultRecord(configDir)).plugins;
  } catch (error) {
    findings.push({
      area: "record",
      subject: FAULT_RECORD_FILE,
      attention: true,
      what: describeError(error),
      todo: "delete it; amber starts a new one at the next fault",
    });
  }
  for (const [id, entry] of Object.entries(faults)) findings.push(...pluginFindings(id, entry));
  let leftovers: Leftover[] = [];
  try {
    leftovers = await listLeftovers(configDir);
  } catch (error) {
    findings.push({
      area: "process",
      subject: configDir,
      attention: true,
      what: `the records of started processes cannot be read: ${describeError(error)}`,
      todo: "check the permissions of the config directory",
    });
  }
  for (const leftover of leftovers) {
    findings.push({
      area: "process",
      subject: String(leftover.pid),
      attention: true,
      what: `left running by an amber that is gone: ${describeLeftover(leftover)}`,
      todo: `the next amber command that starts plugins stops it (e.g. \`amber plugins list\`), ` +
        `or stop it yourself: kill -- -${leftover.pid}`,
    });
  }
  let lock: LockCheck[] = [];
  try {
    lock = await Promise.all((await readPluginLock(configDir)).plugins.map(checkLockEntry));
  } catch (error) {
    findings.push({
      area: "lock",
      subject: PLUGIN_LOCK_FILE,
      attention: true,
      what: describeError(error),
      todo: "fix or delete it; `amber plugins add` refuses to change it until then",
    });
  }
  for (const check of lock) {
    const remove = `\`amber plugins remove ${check.id}\` drops it`;
    if (check.grantProblem !== undefined) {
      findings.push({
        area: "lock",
        subject: check.id,
        attention: true,
        what: `its grant cannot be used, so it is not started: ${check.grantProblem}`,
        todo: `\`amber plugins update ${check.id} --grant\` records what it asks for; ${remove}`,
      });
    }
    if (check.trusted) {
      findings.push({
        area: "lock",
        subject: check.id,
        attention: false,
        what: "trusted: it runs inside amber with all of amber's permissions",
        todo: `nothing, if you trust it; \`amber plugins add ${check.spec}\` sandboxes it again`,
      });
    }
    if (check.state === "ok" || check.state === "unchecked") continue;
    const file = check.file ?? check.resolved;
    findings.push(
      check.state === "missing"
        ? {
          area: "lock",
          subject: check.id,
          attention: true,
          what: `${file} is missing, so the plugin cannot load`,
          todo: `put it back (or \`amber plugins add\` it from where it is now); ${remove}`,
        }
        : {
          area: "lock",
          subject: check.id,
          attention: true,
          what: `${file} changed since it was added, so it is refused`,
          // The entry file itself is accepted by adding its spec again, as its load error says.
          todo: `${
            check.file === undefined
              ? `\`amber plugins add ${check.spec}\``
              : `\`amber plugins update ${check.id}\``
          } accepts it as it is now; ${remove}`,
        },
    );
  }
  let mcpLogs: McpLog[] = [];
  try {
    mcpLogs = await readMcpLogs(configDir, MCP_LOG_LINES);
  } catch (error) {
    findings.push({
      area: "mcp",
      subject: configDir,
      attention: false,
      what: `cannot read the MCP servers' logs: ${describeError(error)}`,
      todo: "nothing; they are kept for you to read",
    });
  }
  for (const log of mcpLogs) {
    findings.push({
      area: "mcp",
      subject: `mcp.${log.server}`,
      attention: false,
      what: `${log.lines} ${log.lines === 1 ? "line" : "lines"} logged, the last: ${
        log.last.at(-1) ?? ""
      }`,
      todo: `read ${log.path} (\`amber doctor --json\` shows the last ${MCP_LOG_LINES})`,
    });
  }
  return {
    configDir,
    ok: findings.every((finding) => !finding.attention),
    findings,
    faults,
    leftovers,
    lock,
    mcpLogs,
  };
}

// The last lines of each server's log the report carries.
const MCP_LOG_LINES = 20;

/**
 * The report as lines of text: each finding, then what to do.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { doctorLines } from "./doctor.ts";
 * const lines = doctorLines({
 *   configDir: "/cfg",
 *   ok: false,
 *   findings: [{
 *     area: "lock",
 *     subject: "greeter",
 *     attention: true,
 *     what: "/p/mod.ts is missing",
 *     todo: "`amber plugins remove greeter` drops it",
 *   }],
 *   faults: {},
 *   leftovers: [],
 *   lock: [],
 *   mcpLogs: [],
 * });
 * assert.deepEqual(lines, [
 *   "amber doctor: /cfg",
 *   "lock",
 *   "  ! greeter: /p/mod.ts is missing",
 *   "    what to do: `amber plugins remove greeter` drops it",
 *   "1 thing needs attention",
 * ]);
 * ```
 */
export function doctorLines(report: DoctorReport): string[] {
  const lines = [`amber doctor: ${report.configDir}`];
  const titles: Record<DoctorFinding["area"], string> = {
    record: "fault record",
    plugin: "plugins",
    process: "leftover processes",
    lock: "lock",
    mcp: "MCP server logs",
  };
  for (const area of ["record", "plugin", "process", "lock", "mcp"] as const) {
    const found = report.findings.filter((finding) => finding.area === area);
    if (found.length === 0) continue;
    lines.push(titles[area]);
    for (const finding of found) {
      lines.push(`  ${finding.attention ? "!" : "-"} ${finding.subject}: ${finding.what}`);
      lines.push(`    what to do: ${finding.todo}`);
    }
  }
  const attention = report.findings.filter((finding) => finding.attention).length;
  lines.push(
    attention === 0
      ? "all is well"
      : `${attention} ${attention === 1 ? "thing needs" : "things need"} attention`,
  );
  return lines;
}

async function doctor(context: CommandContext): Promise<number> {
  if (context.words.length > 0) throw new UsageError("doctor takes no arguments");
  const configDir = context.configDir ?? defaultConfigDir(Deno.env.toObject());
  const report = await doctorReport(configDir);
  if (context.parsed.switches.has("json")) context.io.out(JSON.stringify(report, null, 2));
  else context.io.out(doctorLines(report).join("\n"));
  return report.ok ? 0 : 1;
}

function pluginFindings(id: string, entry: PluginFaultEntry): DoctorFinding[] {
  const findings: DoctorFinding[] = [];
  const again = `\`amber plugins enable ${id}\``;
  if (entry.hold !== undefined) {
    const { seam, at, message } = entry.hold;
    findings.push({
      area: "plugin",
      subject: id,
      attention: true,
      what: `held: its ${seam} hung at ${at} (${message}), so amber does not ` +
        `${seam === "import" ? "import" : "start"} it`,
      todo: `${again} tries it again (raise \`timeouts.plugins.${id}.${seam}\` in config.yaml ` +
        `if it is only slow), or switch it off: \`amber plugins disable ${id}\``,
    });
  }
  const quarantines = entry.quarantines;
  if (quarantines.length > 0) {
    const last = quarantines[quarantines.length - 1];
    findings.push({
      area: "plugin",
      subject: id,
      attention: true,
      what: `quarantined ${times(quarantines.length)}, last at ${last.at}: ${last.message}`,
      todo: `it was switched off for that session only; if it keeps faulting, ` +
        `\`amber plugins disable ${id}\` and tell its author; ${again} clears this record`,
    });
  }
  const faults = entry.faults;
  if (faults.length > 0) {
    const last = faults[faults.length - 1];
    findings.push({
      area: "plugin",
      subject: id,
      attention: false,
      what: `${faults.length} recent ${faults.length === 1 ? "fault" : "faults"} ` +
        `(contained), the last at ${last.at}: ${last.where}: ${last.message}`,
      todo: `nothing, unless it recurs: then tell its author, or \`amber plugins disable ${id}\`;` +
        ` ${again} clears this record`,
    });
  }
  return findings;
}

function times(count: number): string {
  return count === 1 ? "once" : `${count} times`;
}

async function checkLockEntry(entry: PluginLockEntry): Promise<LockCheck> {
  const base = {
    id: entry.id,
    spec: entry.spec,
    resolved: entry.resolved,
    graph: entry.graph !== undefined,
    trusted: entry.trusted === true,
    ...grantCheck(entry),
  };
  const folder = graphFolder(entry.resolved);
  if (folder === undefined) return { ...base, state: "unchecked" };
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(new URL(entry.resolved));
  } catch {
    return { ...base, state: "missing" };
  }
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  if (hex !== entry.sha256) return { ...base, state: "changed" };
  const [problem] = entry.graph === undefined ? [] : await verifyModuleGraph(entry.graph, folder);
  return problem === undefined
    ? { ...base, state: "ok" }
    : { ...base, state: problem.state, file: problem.file };
}

// A sandboxed entry's grant as its process would get it: one a manifest could not ask for
// (an absolute path, a URL) was written by hand, and the plugin is failed rather than given it.
function grantCheck(entry: PluginLockEntry): { grantProblem?: string } {
  if (entry.trusted === true) return {};
  try {
    checkPermissions(entry.grant ?? {}, "grant");
    return {};
  } catch (error) {
    return { grantProblem: describeError(error) };
  }
}
