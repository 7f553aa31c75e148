/**
 * Loads `config.yaml` from the config directory. The YAML parser is imported only when the file
 * exists, so a harness without one starts without paying for it.
 *
 * @module
 */

import { type AmberConfig, type ApprovalPolicy, SEAMS } from "@amber/core";
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
 *   "config.yaml:2:1: modle: unknown field (fields: provider, model, baseUrl, apiKeyEnv, reasoningEffort, approval, plugins, timeouts, quarantine, secrets, mcp, models, compaction)",
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
  const mapping = (keys: readonly string[], value: unknown): value is Record<string, unknown> => {
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return true;
    problem(keys, `${keys.join(".")}: expected a mapping, found ${typeOf(value)}`);
    return false;
  };
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

const MODEL_COUNTS: readonly string[] = ["contextWindow", "maxOutput"];
const MODEL_PRICES: readonly string[] = ["input", "output", "cacheRead", "cacheWrite"];
const MODEL_FIELDS: readonly string[] = [...MODEL_COUNTS, ...MODEL_PRICES];
const COMPACTION_FIELDS: readonly string[] = ["at", "keepTurns", "auto"];

// `models` and `compaction`: like the limits, a wrong value is reported and dropped so that the
// catalog's figure or the default stands; a model entry that is no mapping is dropped whole,
// and the other models stay.
function checkModels(
  record: Record<string, unknown>,
  problem: (keys: readonly string[], detail: string) => void,
): void {
  const mapping = (keys: readonly string[], value: unknown): value is Record<string, unknown> => {
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return true;
    problem(keys, `${keys.join(".")}: expected a mapping, found ${typeOf(value)}`);
    return false;
  };
  if (record.models !== undefined) {
    if (!mapping(["models"], record.models)) delete record.models;
    else {
      const models: Record<string, unknown> = {};
      for (const [name, entry] of Object.entries(record.models)) {
        const keys = ["models", name];
        if (!mapping(keys, entry)) continue;
        const model: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(entry)) {
          const at = [...keys, key];
          const path = at.join(".");
          if (!MODEL_FIELDS.includes(key)) {
            problem(at, `${path}: unknown field (fields: ${MODEL_FIELDS.join(", ")})`);
          } else if (MODEL_COUNTS.includes(key) && !positiveInteger(value)) {
            problem(
              at,
              `${path}: expected a positive whole number of tokens, found ${typeOf(value)}`,
            );
          } else if (
            MODEL_PRICES.includes(key) &&
            (typeof value !== "number" || !Number.isFinite(value) || value < 0)
          ) {
            problem(
              at,
              `${path}: expected dollars per million tokens (0 or more), found ${typeOf(value)}`,
            );
          } else model[key] = value;
        }
        models[name] = model;
      }
      record.models = models;
    }
  }
  if (record.compaction !== undefined) {
    if (!mapping(["compaction"], record.compaction)) delete record.compaction;
    else {
      const compaction: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(record.compaction)) {
        const at = ["compaction", key];
        const path = at.join(".");
        if (!COMPACTION_FIELDS.includes(key)) {
          problem(at, `${path}: unknown field (fields: ${COMPACTION_FIELDS.join(", ")})`);
        } else if (
          key === "at" &&
          (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 1)
        ) {
          problem(at, `${path}: expected a share above 0 and at most 1, found ${typeOf(value)}`);
        } else if (key === "keepTurns" && !(positiveInteger(value) || value === 0)) {
          problem(at, `${path}: expected a whole number of turns, found ${typeOf(value)}`);
        } else if (key === "auto" && typeof value !== "boolean") {
          problem(at, `${path}: expected true or false, found ${typeOf(value)}`);
        } else compaction[key] = value;
      }
      record.compaction = compaction;
    }
  }
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
