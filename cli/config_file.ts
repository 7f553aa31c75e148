/**
 * Loads `config.yaml` from the config directory. The YAML parser is imported only when the file
 * exists, so a harness without one starts without paying for it.
 *
 * @module
 */

import { type AmberConfig, type ApprovalPolicy, parsePermissions, SEAMS } from "@amber/core";
import { join } from "node:path";
import { loadModule } from "./lazy_modules.ts";

/** A `config.yaml` that cannot be used; names the file, and the line or field at fault. */
export class ConfigFileError extends Error {
  /** The file, with `:line:col` when the problem has a place in it. */
  readonly path: string;
  /** Creates the error. */
  constructor(path: string, detail: string, options?: ErrorOptions) {
    super(`${path}: ${detail}`, options);
    this.name = "ConfigFileError";
    this.path = path;
  }
}

const STRING_FIELDS = ["provider", "model", "baseUrl", "apiKeyEnv", "reasoningEffort"] as const;
const KNOWN_FIELDS: readonly string[] = [
  ...STRING_FIELDS,
  "approval",
  "plugins",
  "timeouts",
  "quarantine",
  "secrets",
  "mcp",
  "models",
  "compaction",
  "permissions",
  "compat",
];
const APPROVALS: readonly ApprovalPolicy[] = ["ask", "auto", "deny"];

/** What reading config.yaml found: the configuration, every problem, and where things are. */
export interface ConfigRead {
  /** The file's path. */
  readonly path: string;
  /** The configuration; fields with problems are left out. */
  readonly config: AmberConfig;
  /** Every problem, each naming the file, line and column where it can. */
  readonly problems: readonly ConfigFileError[];
  /**
   * The problems (also in `problems`) of MCP server entries under `mcp.servers`: each left out
   * its server, or only a key of it, so amber starts without it and says so instead of stopping.
   */
  readonly serverProblems: readonly ConfigFileError[];
  /** `config.yaml:line:col` of the value at `path` (a key path), or the file alone. */
  locate(path: readonly string[]): string;
}

/**
 * Reads `<dir>/config.yaml` and lists every problem instead of stopping at the first: YAML
 * syntax errors with line and column, fields of the wrong type, unknown fields. No file is the
 * empty configuration.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readConfigFile } from "@amber/cli/config";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/config.yaml`, "model: 42\nmodle: gpt\n");
 * const read = await readConfigFile(dir);
 * assert.deepEqual(read.problems.map((p) => p.message.slice(dir.length + 1)), [
 *   "config.yaml:2:1: modle: unknown field (fields: provider, model, baseUrl, apiKeyEnv, reasoningEffort, approval, plugins, timeouts, quarantine, secrets, mcp, models, compaction, permissions, compat)",
 *   "config.yaml:1:8: model: expected a string, found number 42",
 * ]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readConfigFile(dir: string): Promise<ConfigRead> {
  const path = join(dir, "config.yaml");
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    const none = { path, config: { plugins: {} }, serverProblems: [], locate: () => path };
    if (error instanceof Deno.errors.NotFound) return { ...none, problems: [] };
    return {
      ...none,
      problems: [
        new ConfigFileError(path, `cannot read: ${(error as Error).message}`, { cause: error }),
      ],
    };
  }
  const { LineCounter, parseDocument } = await import("yaml");
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines });
  const at = (offset: number | undefined): string => {
    if (offset === undefined) return path;
    const { line, col } = lines.linePos(offset);
    return `${path}:${line}:${col}`;
  };
  const locate = (keys: readonly string[]): string => {
    for (let n = keys.length; n > 0; n--) {
      const node = document.getIn(keys.slice(0, n), true) as
        | { range?: [number, number] }
        | undefined;
      if (node?.range) return at(node.range[0]);
    }
    return path;
  };
  const keyAt = (key: string): string => {
    const contents = document.contents as {
      items?: { key?: { value?: unknown; range?: [number] } }[];
    };
    const pair = contents?.items?.find((item) => item.key?.value === key);
    return at(pair?.key?.range?.[0]);
  };
  const problems: ConfigFileError[] = [];
  const problem = (where: string, detail: string, cause?: unknown): void => {
    // ConfigFileError prefixes the path; `where` may already carry a line and column.
    problems.push(new ConfigFileError(where, detail, cause === undefined ? undefined : { cause }));
  };
  for (const error of document.errors) {
    const pos = error.linePos?.[0];
    // The parser's message repeats the position we already put in front of it.
    const detail = error.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
    problem(pos ? `${path}:${pos.line}:${pos.col}` : path, detail, error);
  }
  const serverProblems: ConfigFileError[] = [];
  if (document.errors.length > 0) {
    return { path, config: { plugins: {} }, problems, serverProblems, locate };
  }

  const data: unknown = document.toJS() ?? {};
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    problem(path, "expected a mapping at the top level");
    return { path, config: { plugins: {} }, problems, serverProblems, locate };
  }
  const record = { ...(data as Record<string, unknown>) };
  for (const field of Object.keys(record)) {
    if (!KNOWN_FIELDS.includes(field)) {
      problem(keyAt(field), `${field}: unknown field (fields: ${KNOWN_FIELDS.join(", ")})`);
      delete record[field];
    }
  }
  for (const field of STRING_FIELDS) {
    if (record[field] !== undefined && typeof record[field] !== "string") {
      problem(locate([field]), `${field}: expected a string, found ${typeOf(record[field])}`);
      delete record[field];
    }
  }
  if (record.approval !== undefined && !APPROVALS.includes(record.approval as ApprovalPolicy)) {
    problem(
      locate(["approval"]),
      `approval: expected one of ${APPROVALS.join(", ")}, found ${JSON.stringify(record.approval)}`,
    );
    delete record.approval;
  }
  let plugins = record.plugins ?? {};
  if (typeof plugins !== "object" || plugins === null || Array.isArray(plugins)) {
    problem(locate(["plugins"]), `plugins: expected a mapping, found ${typeOf(plugins)}`);
    plugins = {};
  }
  checkLimits(record, (keys, detail) => problem(locate(keys), detail));
  checkModels(record, (keys, detail) => problem(locate(keys), detail));
  if (record.permissions !== undefined) {
    // Each malformed rule is named with its line; the rules that parse are kept.
    const parsed = parsePermissions(record.permissions, "config.yaml");
    for (const entry of parsed.problems) problem(locate(entry.keys), entry.message);
    record.permissions = parsed.config;
  }
  checkCompat(record, (keys, detail) => problem(locate(keys), detail));
  if (record.mcp !== undefined) {
    const mcp = await checkMcp(record.mcp, (keys, detail, server) => {
      problem(locate(keys), detail);
      if (server) serverProblems.push(problems[problems.length - 1]);
    });
    if (mcp === undefined) delete record.mcp;
    else record.mcp = mcp;
  }
  return { path, config: { ...record, plugins } as AmberConfig, problems, serverProblems, locate };
}

const MCP_FIELDS: readonly string[] = ["servers", "trustReadOnly", "startupWait"];

// `compat: {claude: false}`: a wrong value is dropped, so the default (read them) stands.
function checkCompat(
  record: Record<string, unknown>,
  problem: (keys: readonly string[], detail: string) => void,
): void {
  const compat = record.compat;
  if (compat === undefined) return;
  if (typeof compat !== "object" || compat === null || Array.isArray(compat)) {
    problem(
      ["compat"],
      `compat: expected a mapping such as {claude: false}, found ${typeOf(compat)}`,
    );
    delete record.compat;
    return;
  }
  const kept: Record<string, unknown> = { ...compat };
  for (const [key, value] of Object.entries(kept)) {
    if (key !== "claude") {
      problem(["compat", key], `compat.${key}: unknown field (fields: claude)`);
      delete kept[key];
    } else if (typeof value !== "boolean") {
      problem(["compat", key], `compat.claude: expected true or false, found ${typeOf(value)}`);
      delete kept[key];
    }
  }
  record.compat = kept;
}

// The `mcp` section. The entries are checked by `@amber/mcp`, loaded only when there is one; an
// entry with a problem is left out (or keeps its good keys, as the checker decides) and the other
// servers stay.
async function checkMcp(
  value: unknown,
  problem: (keys: readonly string[], detail: string, server?: boolean) => void,
): Promise<Record<string, unknown> | undefined> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problem(["mcp"], `mcp: expected a mapping, found ${typeOf(value)}`);
    return undefined;
  }
  const mcp: Record<string, unknown> = { ...value };
  for (const [key, field] of Object.entries(mcp)) {
    const at = ["mcp", key];
    if (!MCP_FIELDS.includes(key)) {
      problem(at, `mcp.${key}: unknown field (fields: ${MCP_FIELDS.join(", ")})`);
      delete mcp[key];
    } else if (key === "trustReadOnly" && typeof field !== "boolean") {
      problem(at, `mcp.trustReadOnly: expected true or false, found ${typeOf(field)}`);
      delete mcp[key];
    } else if (
      key === "startupWait" && (typeof field !== "number" || !Number.isFinite(field) || field < 0)
    ) {
      problem(at, `mcp.startupWait: expected a number of seconds, found ${typeOf(field)}`);
      delete mcp[key];
    }
  }
  const servers = mcp.servers;
  if (servers === undefined || servers === null) {
    delete mcp.servers;
    return mcp;
  }
  if (typeof servers !== "object" || Array.isArray(servers)) {
    problem(["mcp", "servers"], `mcp.servers: expected a mapping, found ${typeOf(servers)}`);
    delete mcp.servers;
    return mcp;
  }
  if (Object.keys(servers).length === 0) return mcp;
  const { parseServers } = await loadModule<typeof import("@amber/mcp")>("@amber/mcp");
  const parsed = parseServers(servers, "config.yaml", false);
  for (const entry of parsed.problems) {
    const keys = ["mcp", "servers", ...entry.keys];
    problem(keys, `${dotted(keys)}: ${entry.message}`, true);
  }
  // What the checker kept, as the file holds it: the host reads the entries again when it starts
  // them, with the file's `${VAR}` references intact.
  const kept = new Set(parsed.servers.map((spec) => spec.name));
  mcp.servers = Object.fromEntries(Object.entries(servers).filter(([name]) => kept.has(name)));
  return mcp;
}

// `mcp.servers.everything.args[1]`: list indices in brackets, as the reader wrote them.
function dotted(keys: readonly string[]): string {
  return keys.reduce(
    (text, key, i) => i === 0 ? key : /^\d+$/.test(key) ? `${text}[${key}]` : `${text}.${key}`,
    "",
  );
}

// `timeouts`, `quarantine` and `secrets`: a field with a wrong value is reported and dropped, so
// the default stands in for it rather than a value the user did not mean.
function checkLimits(
  record: Record<string, unknown>,
  problem: (keys: readonly string[], detail: string) => void,
): void {
  const mapping = (keys: readonly string[], value: unknown): value is Record<string, unknown> =>
    isMapping(keys, value, problem);
  const numbers = (
    keys: readonly string[],
    section: Record<string, unknown>,
    allowed: readonly string[],
  ): void => {
    for (const [key, value] of Object.entries(section)) {
      const at = [...keys, key];
      if (!allowed.includes(key)) {
        problem(at, `${at.join(".")}: unknown field (fields: ${allowed.join(", ")})`);
        delete section[key];
      } else if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
        problem(at, `${at.join(".")}: expected a positive number, found ${typeOf(value)}`);
        delete section[key];
      }
    }
  };
  if (record.timeouts !== undefined) {
    if (!mapping(["timeouts"], record.timeouts)) delete record.timeouts;
    else {
      const timeouts = { ...record.timeouts };
      const perPlugin = timeouts.plugins;
      delete timeouts.plugins;
      numbers(["timeouts"], timeouts, [...SEAMS, "plugins"]);
      if (perPlugin !== undefined && mapping(["timeouts", "plugins"], perPlugin)) {
        const plugins: Record<string, unknown> = {};
        for (const [id, section] of Object.entries(perPlugin)) {
          const keys = ["timeouts", "plugins", id];
          if (!mapping(keys, section)) continue;
          const own = { ...section };
          numbers(keys, own, SEAMS);
          plugins[id] = own;
        }
        timeouts.plugins = plugins;
      }
      record.timeouts = timeouts;
    }
  }
  if (record.quarantine !== undefined) {
    if (!mapping(["quarantine"], record.quarantine)) delete record.quarantine;
    else {
      const quarantine = { ...record.quarantine };
      numbers(["quarantine"], quarantine, ["faults", "windowSeconds"]);
      record.quarantine = quarantine;
    }
  }
  if (record.secrets !== undefined) {
    if (!mapping(["secrets"], record.secrets)) delete record.secrets;
    else {
      const secrets: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(record.secrets)) {
        const at = ["secrets", key];
        if (key !== "passEnv") problem(at, `secrets.${key}: unknown field (fields: passEnv)`);
        else if (!Array.isArray(value) || !value.every((name) => typeof name === "string")) {
          problem(at, `secrets.passEnv: expected a list of variable names, found ${typeOf(value)}`);
        } else secrets.passEnv = value;
      }
      record.secrets = secrets;
    }
  }
}

// What a field of a checked section must hold: `undefined` when `value` is fine, else what was
// expected ("a positive number").
type FieldCheck = (value: unknown) => string | undefined;

const tokens: FieldCheck = (value) =>
  positiveInteger(value) ? undefined : "a positive whole number of tokens";
const dollars: FieldCheck = (value) =>
  typeof value === "number" && Number.isFinite(value) && value >= 0
    ? undefined
    : "dollars per million tokens (0 or more)";
const MODEL_FIELDS: Readonly<Record<string, FieldCheck>> = {
  contextWindow: tokens,
  maxOutput: tokens,
  input: dollars,
  output: dollars,
  cacheRead: dollars,
  cacheWrite: dollars,
};
const COMPACTION_FIELDS: Readonly<Record<string, FieldCheck>> = {
  at: (value) =>
    typeof value === "number" && Number.isFinite(value) && value > 0 && value <= 1
      ? undefined
      : "a share above 0 and at most 1",
  keepTurns: (value) =>
    positiveInteger(value) || value === 0 ? undefined : "a whole number of turns",
  auto: (value) => typeof value === "boolean" ? undefined : "true or false",
};

// `models` and `compaction`: like the limits, a wrong value is reported and dropped so that the
// catalog's figure or the default stands; a model entry that is no mapping is dropped whole,
// and the other models stay.
function checkModels(
  record: Record<string, unknown>,
  problem: (keys: readonly string[], detail: string) => void,
): void {
  if (record.models !== undefined) {
    if (!isMapping(["models"], record.models, problem)) delete record.models;
    else {
      const models: Record<string, unknown> = {};
      for (const [name, entry] of Object.entries(record.models)) {
        const keys = ["models", name];
        if (isMapping(keys, entry, problem)) {
          models[name] = keptFields(keys, entry, MODEL_FIELDS, problem);
        }
      }
      record.models = models;
    }
  }
  if (record.compaction !== undefined) {
    if (!isMapping(["compaction"], record.compaction, problem)) delete record.compaction;
    else {record.compaction = keptFields(
        ["compaction"],
        record.compaction,
        COMPACTION_FIELDS,
        problem,
      );}
  }
}

// Whether `value` at `keys` is a mapping; a problem when it is not.
function isMapping(
  keys: readonly string[],
  value: unknown,
  problem: (keys: readonly string[], detail: string) => void,
): value is Record<string, unknown> {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) return true;
  problem(keys, `${keys.join(".")}: expected a mapping, found ${typeOf(value)}`);
  return false;
}

// The fields of `section` that `fields` knows and whose check passes; a problem for each other.
function keptFields(
  keys: readonly string[],
  section: Record<string, unknown>,
  fields: Readonly<Record<string, FieldCheck>>,
  problem: (keys: readonly string[], detail: string) => void,
): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(section)) {
    const at = [...keys, key];
    const path = at.join(".");
    if (!Object.hasOwn(fields, key)) {
      problem(at, `${path}: unknown field (fields: ${Object.keys(fields).join(", ")})`);
      continue;
    }
    const expected = fields[key](value);
    if (expected === undefined) kept[key] = value;
    else problem(at, `${path}: expected ${expected}, found ${typeOf(value)}`);
  }
  return kept;
}

function positiveInteger(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

/**
 * Reads `<dir>/config.yaml`. No file is the empty configuration; the first problem
 * {@linkcode readConfigFile} finds is thrown as a {@linkcode ConfigFileError}, except those of
 * MCP server entries, which go to `options.onServerProblem`: such an entry is left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConfigFileError, loadConfigFile } from "@amber/cli/config";
 * const dir = await Deno.makeTempDir();
 * assert.deepEqual(await loadConfigFile(dir), { plugins: {} });
 * await Deno.writeTextFile(`${dir}/config.yaml`, "model: gpt-5\n");
 * assert.deepEqual(await loadConfigFile(dir), { model: "gpt-5", plugins: {} });
 * await Deno.writeTextFile(`${dir}/config.yaml`, "model: [\n");
 * await assert.rejects(loadConfigFile(dir), ConfigFileError);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadConfigFile(
  dir: string,
  options: LoadConfigOptions = {},
): Promise<AmberConfig> {
  const read = await readConfigFile(dir);
  const fatal = read.problems.find((problem) => !read.serverProblems.includes(problem));
  if (fatal !== undefined) throw fatal;
  for (const problem of read.serverProblems) options.onServerProblem?.(problem);
  return read.config;
}

/** Options of {@linkcode loadConfigFile}. */
export interface LoadConfigOptions {
  /**
   * Receives each problem of an MCP server entry, which leaves out its server (or a key of it)
   * instead of stopping amber.
   */
  readonly onServerProblem?: (problem: ConfigFileError) => void;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "a mapping" : `${typeof value} ${JSON.stringify(value)}`;
}
