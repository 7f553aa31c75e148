/**
 * What a sandboxed plugin may do: the check of the `permissions` its manifest asks for, the
 * comparison of what it asks with what the user granted, the lines `amber plugins add` shows,
 * and the Deno flags a grant becomes for the plugin's process.
 *
 * Paths are relative to the workspace (`src`, `.` for all of it) or, written `data:<path>`
 * (`data:` alone for all of it), to the plugin's own data folder; `net` holds `host` or
 * `host:port`, `env` variable names, `run` command names (found on `PATH`) or paths of
 * programs, written like the paths above. A command runs outside the sandbox with the user's
 * rights, which is why the prompt says so.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkPermissions, denoPermissionFlags, exceedsGrant } from "@amber/core/sandbox";
 * const asked = checkPermissions({ read: ["src"], net: ["api.example.com"] }, "plugin 'x'");
 * assert.deepEqual(exceedsGrant(asked, { read: ["."] }), ["net api.example.com"]);
 * assert.deepEqual(
 *   denoPermissionFlags(asked, { workspace: "/ws", dataDir: "/cfg/x/data", readFolders: [] }),
 *   ["--allow-read=/ws/src", "--allow-net=api.example.com"],
 * );
 * ```
 *
 * @module
 */

import { isAbsolute, posix, resolve } from "node:path";
import { AmberError } from "../errors.ts";
import type { PluginPermissions } from "../plugin.ts";

/**
 * A `permissions` value that is not well formed, or a grant that cannot become Deno's flags.
 * The message names where it came from and the entry.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PermissionsError } from "@amber/core/sandbox";
 * const error = new PermissionsError("plugin 'x'", "permissions.read[0] '' is empty");
 * assert.equal(error.name, "PermissionsError");
 * assert.equal(error.message, "plugin 'x': permissions.read[0] '' is empty");
 * ```
 */
export class PermissionsError extends AmberError {
  /** Where the permissions came from, as in "plugin 'x'" or a lock file's entry. */
  readonly where: string;
  /** Creates the error; the message is `<where>: <problem>`. */
  constructor(where: string, problem: string, options?: ErrorOptions) {
    super(`${where}: ${problem}`, options);
    this.name = "PermissionsError";
    this.where = where;
  }
}

/** Where a grant's relative paths point, for {@linkcode denoPermissionFlags}. */
export interface PermissionPlaces {
  /** The workspace root, absolute. */
  readonly workspace: string;
  /** The plugin's data folder (`data:`), absolute. */
  readonly dataDir: string;
  /** Folders the process must read besides the grant (the plugin's own modules), absolute. */
  readonly readFolders: readonly string[];
}

type Kind = keyof PluginPermissions;

const KINDS: readonly Kind[] = ["read", "write", "net", "env", "run"];
const DATA = "data:";
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const COMMAND_NAME = /^[A-Za-z0-9_][A-Za-z0-9._+-]*$/;
const HOST_NAME =
  /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const IPV6 = /^\[[0-9A-Fa-f:.]+\]$/;
// A Windows drive (`C:`) or a URL scheme (`file:`): both point outside the workspace.
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Checks a manifest's `permissions`: an object with only `read`, `write`, `net`, `env` and
 * `run`, each a list of non-empty strings of its form. Returns it frozen, with only the lists
 * it had; throws a {@linkcode PermissionsError} naming `where`, the field and the entry.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkPermissions } from "@amber/core/sandbox";
 * assert.deepEqual(checkPermissions({ env: ["GITHUB_TOKEN"] }, "plugin 'x'"), {
 *   env: ["GITHUB_TOKEN"],
 * });
 * assert.throws(
 *   () => checkPermissions({ read: ["src", "/etc"] }, "plugin 'x'"),
 *   {
 *     name: "PermissionsError",
 *     message: "plugin 'x': permissions.read[1] '/etc' is absolute; " +
 *       "a plugin may ask for paths in the workspace or data:",
 *   },
 * );
 * ```
 */
export function checkPermissions(value: unknown, where: string): PluginPermissions {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new PermissionsError(
      where,
      "permissions must be an object of read, write, net, env and run lists",
    );
  }
  const out: { [K in Kind]?: readonly string[] } = {};
  for (const [key, list] of Object.entries(value)) {
    if (!(KINDS as readonly string[]).includes(key)) {
      throw new PermissionsError(
        where,
        `permissions.${key} is not a permission; a plugin may ask for read, write, net, env, run`,
      );
    }
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      throw new PermissionsError(where, `permissions.${key} must be a list of strings`);
    }
    const kind = key as Kind;
    list.forEach((entry: unknown, index) => {
      const field = `permissions.${kind}[${index}]`;
      if (typeof entry !== "string" || entry.trim() === "") {
        throw new PermissionsError(where, `${field} must be a non-empty string`);
      }
      const problem = entryProblem(kind, entry);
      if (problem !== undefined) {
        throw new PermissionsError(where, `${field} ${quote(entry)} ${problem}`);
      }
    });
    out[kind] = Object.freeze([...list as string[]]);
  }
  return Object.freeze(out);
}

/**
 * What `asked` asks for beyond `granted`, one phrase per entry ("net api.example.com"), in the
 * order asked; empty when the grant covers it all. A path under a granted folder is covered,
 * a written path covers reading it, a granted host covers every port of it. Both must have
 * passed {@linkcode checkPermissions}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exceedsGrant } from "@amber/core/sandbox";
 * const granted = { read: ["src"], write: ["data:"], net: ["example.com"] };
 * assert.deepEqual(
 *   exceedsGrant({ read: ["src/a.ts", "data:cache"], net: ["example.com:443"] }, granted),
 *   [],
 * );
 * assert.deepEqual(
 *   exceedsGrant({ read: ["docs"], env: ["HOME"], run: ["git"] }, granted),
 *   ["read docs", "env HOME", "run git"],
 * );
 * ```
 */
export function exceedsGrant(asked: PluginPermissions, granted: PluginPermissions): string[] {
  const out: string[] = [];
  const readable = [...granted.read ?? [], ...granted.write ?? []].map(normalPath);
  const writable = (granted.write ?? []).map(normalPath);
  for (const entry of asked.read ?? []) {
    if (!readable.some((folder) => covers(folder, normalPath(entry)))) out.push(`read ${entry}`);
  }
  for (const entry of asked.write ?? []) {
    if (!writable.some((folder) => covers(folder, normalPath(entry)))) out.push(`write ${entry}`);
  }
  const hosts = (granted.net ?? []).map((entry) => entry.toLowerCase());
  for (const entry of asked.net ?? []) {
    const wanted = entry.toLowerCase();
    if (!hosts.includes(wanted) && !hosts.includes(hostOf(wanted))) out.push(`net ${entry}`);
  }
  const names = new Set(granted.env ?? []);
  for (const entry of asked.env ?? []) if (!names.has(entry)) out.push(`env ${entry}`);
  const commands = new Set((granted.run ?? []).map(normalCommand));
  for (const entry of asked.run ?? []) {
    if (!commands.has(normalCommand(entry))) out.push(`run ${entry}`);
  }
  return out;
}

/**
 * The lines `amber plugins add` shows before asking for a grant: one per kind asked, or one
 * line saying it asks for nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describePermissions } from "@amber/core/sandbox";
 * assert.deepEqual(describePermissions({}), [
 *   "nothing: no files, network, environment or commands",
 * ]);
 * assert.deepEqual(describePermissions({ read: [".", "data:cache"], net: ["example.com"] }), [
 *   "read files: the whole workspace, cache in its data folder",
 *   "connect to: example.com",
 * ]);
 * ```
 */
export function describePermissions(permissions: PluginPermissions): string[] {
  const lines: string[] = [];
  const list = (entries: readonly string[] | undefined, show: (entry: string) => string) =>
    (entries ?? []).map(show).join(", ");
  if (permissions.read?.length) lines.push(`read files: ${list(permissions.read, showPath)}`);
  if (permissions.write?.length) {
    lines.push(`write files: ${list(permissions.write, showPath)}`);
  }
  if (permissions.net?.length) lines.push(`connect to: ${list(permissions.net, String)}`);
  if (permissions.env?.length) {
    lines.push(`read environment variables: ${list(permissions.env, String)}`);
  }
  if (permissions.run?.length) {
    lines.push(
      `run commands: ${list(permissions.run, String)} ` +
        "(a command runs outside the sandbox, with your user's rights)",
    );
  }
  return lines.length > 0 ? lines : ["nothing: no files, network, environment or commands"];
}

/**
 * The Deno permission flags for a plugin process granted `grant`: exactly the grant, with
 * its paths made absolute (`data:` under `places.dataDir`, the rest under
 * `places.workspace`), written paths readable too, plus read of `places.readFolders`. A kind
 * with nothing granted gets no flag at all (an empty `--allow-read=` would allow everything).
 * Deno splits a flag's list on commas and has no escape for them, so a path with a comma is
 * refused with a {@linkcode PermissionsError}, as is a grant that does not pass
 * {@linkcode checkPermissions} or a place that is not absolute.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { denoPermissionFlags } from "@amber/core/sandbox";
 * const places = { workspace: "/ws", dataDir: "/cfg/p/data", readFolders: ["/plugins/p"] };
 * assert.deepEqual(denoPermissionFlags({}, places), ["--allow-read=/plugins/p"]);
 * assert.deepEqual(
 *   denoPermissionFlags({ write: ["data:"], env: ["TOKEN"], run: ["git"] }, places),
 *   [
 *     "--allow-read=/cfg/p/data,/plugins/p",
 *     "--allow-write=/cfg/p/data",
 *     "--allow-env=TOKEN",
 *     "--allow-run=git",
 *   ],
 * );
 * assert.throws(
 *   () => denoPermissionFlags({ read: ["a,b"] }, places),
 *   { name: "PermissionsError" },
 * );
 * ```
 */
export function denoPermissionFlags(
  grant: PluginPermissions,
  places: PermissionPlaces,
): string[] {
  const checked = checkPermissions(grant, "grant");
  for (const [name, place] of [["workspace", places.workspace], ["dataDir", places.dataDir]]) {
    if (!isAbsolute(place)) {
      throw new PermissionsError("grant", `the ${name} '${place}' is not an absolute path`);
    }
  }
  const at = (entry: string): string =>
    entry.startsWith(DATA)
      ? resolve(places.dataDir, entry.slice(DATA.length) || ".")
      : resolve(places.workspace, entry);
  for (const folder of places.readFolders) {
    if (!isAbsolute(folder)) {
      throw new PermissionsError("grant", `the read folder '${folder}' is not an absolute path`);
    }
  }
  const write = (checked.write ?? []).map(at);
  const read = [...(checked.read ?? []).map(at), ...write, ...places.readFolders];
  const run = (checked.run ?? []).map((entry) => isCommandName(entry) ? entry : at(entry));
  const flags: string[] = [];
  const flag = (name: string, entries: readonly string[]) => {
    const unique = [...new Set(entries)];
    if (unique.length === 0) return;
    for (const entry of unique) {
      if (entry.includes(",")) {
        throw new PermissionsError(
          "grant",
          `'${entry}' contains a comma, which Deno's --allow-${name} list cannot carry`,
        );
      }
    }
    flags.push(`--allow-${name}=${unique.join(",")}`);
  };
  flag("read", read);
  flag("write", write);
  flag("net", checked.net ?? []);
  flag("env", checked.env ?? []);
  flag("run", run);
  return flags;
}

function entryProblem(kind: Kind, entry: string): string | undefined {
  if (CONTROL.test(entry)) return "holds a control character";
  if (entry.includes(",")) return "holds a comma, which Deno's permission lists cannot carry";
  switch (kind) {
    case "read":
    case "write":
      return pathProblem(entry);
    case "net":
      return netProblem(entry);
    case "env":
      return ENV_NAME.test(entry) ? undefined : "is not an environment variable name";
    case "run":
      if (isCommandName(entry)) return undefined;
      return pathProblem(entry, "a command name or ") ??
        (normalPath(entry) === "." || normalPath(entry) === `${DATA}.`
          ? "is a folder; run takes a command name or the path of a program"
          : undefined);
  }
}

const PLACES = "a plugin may ask for paths in the workspace or data:";

function pathProblem(entry: string, alternative = ""): string | undefined {
  const rest = entry.startsWith(DATA) ? entry.slice(DATA.length) : entry;
  if (rest.startsWith("/") || rest.startsWith("\\") || SCHEME.test(rest)) {
    return `is absolute; ${alternative}${PLACES}`;
  }
  if (rest.includes("\\")) return "holds a backslash; write paths with /";
  if (rest.startsWith("~")) return `points into a home folder; ${alternative}${PLACES}`;
  const normal = posix.normalize(rest === "" ? "." : rest);
  if (normal === ".." || normal.startsWith("../")) {
    return `climbs out with ..; ${alternative}${PLACES}`;
  }
  return undefined;
}

function netProblem(entry: string): string | undefined {
  if (entry.includes("://") || entry.includes("/")) {
    return "is not a host; write host or host:port, without a scheme or a path";
  }
  const match = /^(.*?)(?::(\d+))?$/.exec(entry);
  const host = match?.[1] ?? "";
  const port = match?.[2];
  if (!HOST_NAME.test(host) && !IPV6.test(host)) {
    return "is not a host; write host or host:port, without a scheme or a path";
  }
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    return "has a port outside 1-65535";
  }
  return undefined;
}

function isCommandName(entry: string): boolean {
  return COMMAND_NAME.test(entry);
}

// A path as a comparable key: `data:` keeps its prefix, so the two places never cover each other.
function normalPath(entry: string): string {
  const data = entry.startsWith(DATA);
  const rest = data ? entry.slice(DATA.length) : entry;
  const normal = posix.normalize(rest === "" ? "." : rest).replace(/\/+$/, "") || ".";
  return data ? `${DATA}${normal}` : normal;
}

function covers(folder: string, path: string): boolean {
  if (folder === path) return true;
  if (folder === ".") return !path.startsWith(DATA);
  if (folder === `${DATA}.`) return path.startsWith(DATA);
  return path.startsWith(`${folder}/`);
}

function normalCommand(entry: string): string {
  return isCommandName(entry) ? entry : `path:${normalPath(entry)}`;
}

function hostOf(entry: string): string {
  return entry.replace(/:\d+$/, "");
}

function quote(entry: string): string {
  return `'${entry.length > 80 ? `${entry.slice(0, 80)}...` : entry}'`;
}

function showPath(entry: string): string {
  const normal = normalPath(entry);
  if (normal === ".") return "the whole workspace";
  if (normal === `${DATA}.`) return "its data folder";
  if (normal.startsWith(DATA)) return `${normal.slice(DATA.length)} in its data folder`;
  return normal;
}
