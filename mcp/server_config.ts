/**
 * MCP server entries as the user writes them (`mcp.servers` in `config.yaml`, `mcpServers` in a
 * workspace's `.mcp.json`): checking them, naming what comes of them (plugin ids, tool names),
 * expanding their `${VAR}` references when a server starts, and the fingerprint an approval of a
 * workspace's server is kept under.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { AmberError } from "@amber/core";
import type { McpOAuthSettings, McpServerEntry, McpServerSpec, McpTransportKind } from "./types.ts";

/**
 * What a server's name may be: letters, digits, `_` and `-`, 1 to 48 of them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MCP_SERVER_NAME } from "./server_config.ts";
 * assert.equal(MCP_SERVER_NAME.test("everything"), true);
 * assert.equal(MCP_SERVER_NAME.test("my server"), false);
 * ```
 */
export const MCP_SERVER_NAME: RegExp = /^[A-Za-z0-9_-]{1,48}$/;

/**
 * The plugin id of the server `name`: `mcp.` and the name in lower case.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mcpPluginId } from "./server_config.ts";
 * assert.equal(mcpPluginId("GitHub"), "mcp.github");
 * ```
 */
export function mcpPluginId(name: string): string {
  return `mcp.${name.toLowerCase()}`;
}

// Model APIs accept tool names of at most 64 characters of this set.
const TOOL_NAME_LIMIT = 64;
const TOOL_NAME_KEPT = 55;

/**
 * The name the model sees for the tool `tool` of the server `server`: `mcp__<server>__<tool>`,
 * each character outside `[A-Za-z0-9_-]` replaced by `_`. A name longer than 64 characters is cut
 * to 55 and ends in `_` and the first 8 hex digits of the SHA-256 of the full name as the server
 * gave it, so that two long names with the same start stay apart.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mcpToolName } from "./server_config.ts";
 * assert.equal(mcpToolName("everything", "echo"), "mcp__everything__echo");
 * assert.equal(mcpToolName("docs", "search.pages"), "mcp__docs__search_pages");
 * const long = mcpToolName("s", "x".repeat(80));
 * assert.equal(long.length, 64);
 * assert.match(long, /^mcp__s__x+_[0-9a-f]{8}$/);
 * ```
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `mcp__${server}__${tool}`;
  const name = full.replace(/[^A-Za-z0-9_-]/g, "_");
  if (name.length <= TOOL_NAME_LIMIT) return name;
  const hash = createHash("sha256").update(full).digest("hex").slice(0, 8);
  return `${name.slice(0, TOOL_NAME_KEPT)}_${hash}`;
}

/**
 * Something wrong with the servers' configuration. `keys` lead from the value that was checked
 * to the place of the problem (`["everything", "args", "1"]`), so that a reader can say where in
 * its file it is.
 */
export interface EntryProblem {
  /** The path to the offending value, from the value passed in. */
  readonly keys: readonly string[];
  /** What is wrong, and what became of it (`ignored`, `server not loaded`). */
  readonly message: string;
}

/** The servers that were read, and what was wrong on the way. */
export interface ParsedServers {
  /** The servers that can be started, in the order they were written. */
  readonly servers: readonly McpServerSpec[];
  /** The problems, each with where it is. */
  readonly problems: readonly EntryProblem[];
}

const COMMON_KEYS = ["type", "disabledTools", "trustReadOnly", "timeout"];
const STDIO_KEYS = new Set(["command", "args", "env", "cwd", ...COMMON_KEYS]);
const HTTP_KEYS = new Set(["url", "headers", "bearerTokenEnv", "oauth", ...COMMON_KEYS]);
const OAUTH_KEYS = new Set(["clientId", "clientSecretEnv", "scope", "callbackPort"]);
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// A problem that drops the entry it is found in.
class Dropped extends Error {
  constructor(readonly keys: readonly string[], message: string) {
    super(message);
    this.name = "Dropped";
  }
}

/**
 * Checks the servers of `value`, a mapping of server names to entries (`mcp.servers` of
 * `config.yaml`, `mcpServers` of a `.mcp.json`). An entry with a bad value is dropped, with its
 * problem reported; an unknown key is reported and ignored; the other servers load either way.
 * Two names equal but for case would be one plugin: the later one is dropped, naming both.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseServers } from "./server_config.ts";
 * const { servers, problems } = parseServers({
 *   everything: { command: "npx", args: ["-y", "server-everything", 3] },
 *   docs: { url: "https://example.com/mcp", colour: "blue" },
 *   broken: { args: ["x"] },
 * }, "config.yaml", false);
 * assert.deepEqual(servers.map((spec) => [spec.pluginId, spec.entry.transport]), [
 *   ["mcp.everything", "stdio"],
 *   ["mcp.docs", "http"],
 * ]);
 * assert.deepEqual(servers[0].entry.args, ["-y", "server-everything", "3"]);
 * assert.deepEqual(problems.map((problem) => problem.keys), [["docs", "colour"], ["broken"]]);
 * ```
 */
export function parseServers(
  value: unknown,
  source: string,
  fromWorkspace: boolean,
): ParsedServers {
  const servers: McpServerSpec[] = [];
  const problems: EntryProblem[] = [];
  if (!isRecord(value)) {
    problems.push({ keys: [], message: "must be a mapping of server names to entries" });
    return { servers, problems };
  }
  const byLowerName = new Map<string, string>();
  for (const [name, raw] of Object.entries(value)) {
    if (!MCP_SERVER_NAME.test(name)) {
      problems.push({
        keys: [name],
        message: "a server name is 1 to 48 letters, digits, '_' or '-'; server not loaded",
      });
      continue;
    }
    const taken = byLowerName.get(name.toLowerCase());
    if (taken !== undefined) {
      problems.push({
        keys: [name],
        message: `servers '${taken}' and '${name}' differ only in case (both would be plugin ` +
          `${mcpPluginId(name)}); '${name}' not loaded`,
      });
      continue;
    }
    const unknown: EntryProblem[] = [];
    try {
      const entry = parseEntry(raw, [name], unknown);
      byLowerName.set(name.toLowerCase(), name);
      servers.push({ name, pluginId: mcpPluginId(name), entry, source, fromWorkspace });
      problems.push(...unknown);
    } catch (error) {
      if (!(error instanceof Dropped)) throw error;
      problems.push(...unknown, {
        keys: error.keys,
        message: `${error.message}; server not loaded`,
      });
    }
  }
  return { servers, problems };
}

function parseEntry(raw: unknown, at: readonly string[], problems: EntryProblem[]): McpServerEntry {
  if (!isRecord(raw)) throw new Dropped(at, "an entry must be a mapping");
  const transport = entryTransport(raw, at);
  const known = transport === "stdio" ? STDIO_KEYS : HTTP_KEYS;
  for (const key of Object.keys(raw)) {
    if (known.has(key)) continue;
    const why = STDIO_KEYS.has(key) || HTTP_KEYS.has(key) ? ` for a ${transport} server` : "";
    problems.push({ keys: [...at, key], message: `unknown key${why}, ignored` });
  }
  const entry: { -readonly [K in keyof McpServerEntry]: McpServerEntry[K] } = { transport };
  if (transport === "stdio") {
    entry.command = text(raw.command, [...at, "command"], true);
    if (raw.args !== undefined) entry.args = scalarList(raw.args, [...at, "args"]);
    if (raw.env !== undefined) entry.env = scalarMap(raw.env, [...at, "env"], VARIABLE_NAME);
    if (raw.cwd !== undefined) entry.cwd = text(raw.cwd, [...at, "cwd"], true);
  } else {
    entry.url = text(raw.url, [...at, "url"], true);
    if (!entry.url.includes("${")) {
      checkUrl(entry.url, (message) => new Dropped([...at, "url"], message));
    }
    if (raw.headers !== undefined) {
      entry.headers = scalarMap(raw.headers, [...at, "headers"], /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/);
    }
  }
  if (raw.bearerTokenEnv !== undefined && known.has("bearerTokenEnv")) {
    entry.bearerTokenEnv = variableName(raw.bearerTokenEnv, [...at, "bearerTokenEnv"]);
  }
  if (raw.oauth !== undefined && transport !== "stdio") {
    const oauth = parseOAuth(raw.oauth, [...at, "oauth"], problems);
    if (oauth !== undefined) entry.oauth = oauth;
  }
  if (raw.disabledTools !== undefined) {
    const keys = [...at, "disabledTools"];
    if (!Array.isArray(raw.disabledTools)) throw new Dropped(keys, "must be a list of tool names");
    entry.disabledTools = raw.disabledTools.map((tool, index) =>
      text(tool, [...keys, `${index}`], true)
    );
  }
  if (raw.trustReadOnly !== undefined) {
    if (typeof raw.trustReadOnly !== "boolean") {
      throw new Dropped([...at, "trustReadOnly"], "must be true or false");
    }
    entry.trustReadOnly = raw.trustReadOnly;
  }
  if (raw.timeout !== undefined) {
    const timeout = raw.timeout;
    if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0) {
      throw new Dropped([...at, "timeout"], "must be a number of seconds above 0");
    }
    entry.timeout = timeout;
  }
  return entry;
}

function entryTransport(raw: Record<string, unknown>, at: readonly string[]): McpTransportKind {
  const type = raw.type;
  if (type === undefined) {
    if (raw.command !== undefined && raw.url !== undefined) {
      throw new Dropped(at, "an entry has either 'command' (stdio) or 'url' (http), not both");
    }
    if (raw.command !== undefined) return "stdio";
    if (raw.url !== undefined) return "http";
    throw new Dropped(at, "an entry needs 'command' (a stdio server) or 'url' (an http server)");
  }
  if (type === "stdio" || type === "http" || type === "sse") return type;
  throw new Dropped([...at, "type"], "must be 'stdio', 'http' or 'sse'");
}

function parseOAuth(
  raw: unknown,
  at: readonly string[],
  problems: EntryProblem[],
): McpOAuthSettings | undefined {
  if (raw === false) return undefined;
  if (raw === true) return {};
  if (!isRecord(raw)) throw new Dropped(at, "must be true, false or a mapping");
  const settings: { -readonly [K in keyof McpOAuthSettings]: McpOAuthSettings[K] } = {};
  for (const key of Object.keys(raw)) {
    if (!OAUTH_KEYS.has(key)) {
      problems.push({ keys: [...at, key], message: "unknown key, ignored" });
    }
  }
  if (raw.clientId !== undefined) settings.clientId = text(raw.clientId, [...at, "clientId"], true);
  if (raw.clientSecretEnv !== undefined) {
    settings.clientSecretEnv = variableName(raw.clientSecretEnv, [...at, "clientSecretEnv"]);
  }
  if (raw.scope !== undefined) settings.scope = text(raw.scope, [...at, "scope"], false);
  if (raw.callbackPort !== undefined) {
    const port = raw.callbackPort;
    if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new Dropped([...at, "callbackPort"], "must be a port number, 1 to 65535");
    }
    settings.callbackPort = port;
  }
  return settings;
}

function text(value: unknown, at: readonly string[], nonEmpty: boolean): string {
  if (value === undefined) throw new Dropped(at, "is missing");
  if (typeof value !== "string") throw new Dropped(at, "must be a string");
  if (nonEmpty && value.trim() === "") throw new Dropped(at, "must not be empty");
  return value;
}

function variableName(value: unknown, at: readonly string[]): string {
  if (typeof value !== "string" || !VARIABLE_NAME.test(value)) {
    throw new Dropped(at, "must be the name of an environment variable");
  }
  return value;
}

// YAML reads `3000` as a number and `yes` as a boolean; in a command line they are words.
function scalar(value: unknown, at: readonly string[]): string {
  if (typeof value === "string") return value;
  if ((typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean") {
    return String(value);
  }
  throw new Dropped(at, "must be a string");
}

function scalarList(value: unknown, at: readonly string[]): string[] {
  if (!Array.isArray(value)) throw new Dropped(at, "must be a list of strings");
  return value.map((item, index) => scalar(item, [...at, `${index}`]));
}

function scalarMap(value: unknown, at: readonly string[], names: RegExp): Record<string, string> {
  if (!isRecord(value)) throw new Dropped(at, "must be a mapping of names to strings");
  const out: Record<string, string> = {};
  for (const [name, item] of Object.entries(value)) {
    if (!names.test(name)) throw new Dropped([...at, name], "is not a valid name");
    out[name] = scalar(item, [...at, name]);
  }
  return out;
}

function checkUrl(url: string, fail: (message: string) => Error): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw fail(`'${url}' is not a URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw fail(`'${url}' is not an http or https URL`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The servers of a `.mcp.json`, and its problems as lines that say where each one is. */
export interface ParsedMcpJson {
  /** The servers that can be started, each with `fromWorkspace` true and `path` as source. */
  readonly servers: readonly McpServerSpec[];
  /** `path: mcpServers.NAME.args[1]: message` lines. */
  readonly problems: readonly string[];
}

/**
 * Reads a workspace's `.mcp.json` (`{"mcpServers": {NAME: ENTRY}}`, the format other agents use)
 * from its `text`; `path` names the file in the problems and is each server's source.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseMcpJson } from "./server_config.ts";
 * const { servers, problems } = parseMcpJson(
 *   JSON.stringify({ mcpServers: { files: { command: "npx", args: ["-y", "pkg", {}] } } }),
 *   "/ws/.mcp.json",
 * );
 * assert.equal(servers.length, 0);
 * assert.deepEqual(problems, [
 *   "/ws/.mcp.json: mcpServers.files.args[2]: must be a string; server not loaded",
 * ]);
 * ```
 */
export function parseMcpJson(text: string, path: string): ParsedMcpJson {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { servers: [], problems: [`${path}: not valid JSON: ${why}`] };
  }
  if (!isRecord(value)) {
    return { servers: [], problems: [`${path}: must be an object with "mcpServers"`] };
  }
  const problems: string[] = [];
  for (const key of Object.keys(value)) {
    if (key !== "mcpServers") problems.push(`${path}: ${keyPath([key])}: unknown key, ignored`);
  }
  if (value.mcpServers === undefined) return { servers: [], problems };
  const parsed = parseServers(value.mcpServers, path, true);
  for (const problem of parsed.problems) {
    problems.push(`${path}: ${keyPath(["mcpServers", ...problem.keys])}: ${problem.message}`);
  }
  return { servers: parsed.servers, problems };
}

// `mcpServers.files.args[2]`; a key that is not a plain word is quoted.
function keyPath(keys: readonly string[]): string {
  let out = "";
  for (const key of keys) {
    if (/^\d+$/.test(key)) out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(key)) out += out === "" ? key : `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}

/**
 * A server's configuration cannot be used as it stands: a `${VAR}` whose variable is not set,
 * or what expanding made of a URL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { McpConfigError } from "./server_config.ts";
 * const error = new McpConfigError("server 'gh': headers.Authorization: GH_PAT is not set", {
 *   server: "gh",
 *   field: "headers.Authorization",
 *   variable: "GH_PAT",
 * });
 * assert.equal(error.name, "McpConfigError");
 * assert.equal(error.variable, "GH_PAT");
 * ```
 */
export class McpConfigError extends AmberError {
  /** The server whose entry it is. */
  readonly server?: string;
  /** The field, as a path into the entry (`args[1]`, `env.TOKEN`). */
  readonly field?: string;
  /** The environment variable that was missing, if that was the trouble. */
  readonly variable?: string;
  /** Creates the error; `where` says which server, field and variable. */
  constructor(
    message: string,
    where: { readonly server?: string; readonly field?: string; readonly variable?: string } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "McpConfigError";
    this.server = where.server;
    this.field = where.field;
    this.variable = where.variable;
  }
}

// `${NAME}` or `${NAME:-default}`; anything else with a `$` is left as written.
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * The entry of `spec` with every `${VAR}` and `${VAR:-default}` in its command, args, env values,
 * cwd, url and header values replaced from `env` (amber's environment when the server starts).
 * `${VAR:-default}` takes the default when the variable is unset or empty. A variable that is
 * not set and has no default throws, naming the server, the field and the variable; so does a
 * `bearerTokenEnv` or `oauth.clientSecretEnv` whose variable is not set, and a URL that is not
 * one once expanded.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { expandEntry, McpConfigError, parseServers } from "./server_config.ts";
 * const { servers } = parseServers({
 *   api: { url: "https://${HOST:-example.com}/mcp", headers: { "X-Key": "${API_KEY}" } },
 * }, "config.yaml", false);
 * const entry = expandEntry(servers[0], { API_KEY: "k-1" });
 * assert.equal(entry.url, "https://example.com/mcp");
 * assert.deepEqual(entry.headers, { "X-Key": "k-1" });
 * assert.throws(() => expandEntry(servers[0], {}), (error: unknown) =>
 *   error instanceof McpConfigError && error.field === "headers.X-Key" &&
 *   error.variable === "API_KEY");
 * ```
 */
export function expandEntry(
  spec: McpServerSpec,
  env: Readonly<Record<string, string | undefined>>,
): McpServerEntry {
  const server = spec.name;
  const source = spec.entry;
  const expand = (value: string, field: string): string =>
    value.replace(REFERENCE, (_, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (fallback !== undefined) return found === undefined || found === "" ? fallback : found;
      if (found === undefined) {
        throw new McpConfigError(
          `server '${server}': ${field}: environment variable ${name} is not set`,
          { server, field, variable: name },
        );
      }
      return found;
    });
  const expandMap = (map: { readonly [name: string]: string }, field: string) =>
    Object.fromEntries(
      Object.entries(map).map(([name, value]) => [name, expand(value, `${field}.${name}`)]),
    );
  const entry: { -readonly [K in keyof McpServerEntry]: McpServerEntry[K] } = { ...source };
  if (source.command !== undefined) entry.command = expand(source.command, "command");
  if (source.args !== undefined) {
    entry.args = source.args.map((arg, index) => expand(arg, `args[${index}]`));
  }
  if (source.env !== undefined) entry.env = expandMap(source.env, "env");
  if (source.cwd !== undefined) entry.cwd = expand(source.cwd, "cwd");
  if (source.url !== undefined) {
    const url = expand(source.url, "url");
    checkUrl(url, (message) =>
      new McpConfigError(`server '${server}': url: ${message}`, {
        server,
        field: "url",
      }));
    entry.url = url;
  }
  if (source.headers !== undefined) entry.headers = expandMap(source.headers, "headers");
  const needed: [string, string | undefined][] = [
    ["bearerTokenEnv", source.bearerTokenEnv],
    ["oauth.clientSecretEnv", source.oauth?.clientSecretEnv],
  ];
  for (const [field, name] of needed) {
    if (name === undefined || env[name] !== undefined) continue;
    throw new McpConfigError(
      `server '${server}': ${field}: environment variable ${name} is not set`,
      { server, field, variable: name },
    );
  }
  return entry;
}

/**
 * The SHA-256 (hex) of `entry` written with its keys in order: an approval of a workspace's
 * server is kept with it, so that a changed entry is asked about again. Take it of the entry
 * as declared (before expansion), so that no secret is hashed and a changed variable does not
 * ask again.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { entryFingerprint } from "./server_config.ts";
 * const a = await entryFingerprint({ transport: "stdio", command: "x", args: ["1"] });
 * const b = await entryFingerprint({ args: ["1"], command: "x", transport: "stdio" });
 * const c = await entryFingerprint({ transport: "stdio", command: "x", args: ["2"] });
 * assert.equal(a, b);
 * assert.notEqual(a, c);
 * assert.match(a, /^[0-9a-f]{64}$/);
 * ```
 */
export async function entryFingerprint(entry: McpServerEntry): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(entry));
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isRecord(value)) {
    const fields = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${fields.join(",")}}`;
  }
  return JSON.stringify(value);
}
