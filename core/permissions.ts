/**
 * Permission rules: standing answers to "may this tool call run?", as `config.yaml` and a
 * workspace's `.amber/permissions.yaml` hold them under `permissions: {allow, ask, deny}`.
 *
 * A rule is a tool name, or a glob of names (`mcp__github__*`: `*` any text, `?` one
 * character), optionally followed by an argument pattern in parentheses. What the pattern is
 * matched against depends on the tool:
 *
 * - `bash` and `process_start`: the `command` argument, a glob where `*` is any text. The line
 *   is cut into its simple commands (at `;`, `&&`, `||`, `|`, `&`, outside quotes); an allow
 *   rule covers the line only when every command is allowed (by this rule or another) and the
 *   line neither substitutes commands (`$(...)`, backticks), nor has a here-document, nor
 *   redirects into a file; a deny or ask rule applies when any one command, or the whole line,
 *   matches, also each command read without the assignments, grouping and wrappers before it
 *   (`X=1 sudo /bin/rm x` as `rm x`). A pattern ending in ` *` also matches the bare command:
 *   `bash(npm test *)` matches `npm test` and `npm test -- x`.
 * - `read`, `write`, `edit` and `search`: the `path` argument (`.` when there is none), as a
 *   path glob: `*` and `?` stay within one directory, `**` spans any depth. The pattern is
 *   relative to the workspace unless it starts with `/` or `~/`; a relative pattern that leaves
 *   the workspace (`../x`) is an error. The call's path is resolved the same way, `..` included,
 *   so `read(~/.ssh/**)` matches `../../home/me/.ssh/id_rsa` too. Symlinks are not followed.
 * - Every other tool: its one-line summary (what the approval question shows), as a command
 *   glob: `mcp__github__create_issue(*bug*)`.
 *
 * Deny comes before ask, ask before allow: the first deny rule that matches blocks the call,
 * else the first ask rule puts it to the user (whatever the approval policy), else an allow
 * rule answers the approval question. Rules are a guard against a careless or misled model, not
 * a sandbox: a command that builds its words at run time is not seen through.
 *
 * @module
 */

import { posix } from "node:path";
import { bareCommand, splitCommandLine } from "./_command_line.ts";
import type { PermissionsConfig } from "./config.ts";

/** What a rule does to the calls it matches. */
export type PermissionEffect = "allow" | "ask" | "deny";

/** The effects, in the order they are decided. */
export const PERMISSION_EFFECTS: readonly PermissionEffect[] = Object.freeze([
  "deny",
  "ask",
  "allow",
]);

/** One rule, parsed. */
export interface PermissionRule {
  /** The rule as written (trimmed). */
  readonly text: string;
  /** The tool name or name glob. */
  readonly tool: string;
  /** The argument pattern inside the parentheses, when there is one. */
  readonly pattern?: string;
}

/** A rule that cannot be used; says which and why. */
export class PermissionRuleError extends Error {
  /** The rule as written. */
  readonly rule: string;
  /** Creates the error. */
  constructor(rule: string, detail: string, options?: ErrorOptions) {
    super(`permission rule '${rule}': ${detail}`, options);
    this.name = "PermissionRuleError";
    this.rule = rule;
  }
}

/** The tools whose argument pattern is a command-line glob over `command`. */
export const COMMAND_RULE_TOOLS: ReadonlySet<string> = new Set(["bash", "process_start"]);
/** The tools whose argument pattern is a path glob over `path`. */
export const PATH_RULE_TOOLS: ReadonlySet<string> = new Set(["read", "write", "edit", "search"]);

const TOOL_NAME = /^[A-Za-z0-9_.:*?-]+$/;

/**
 * Parses one rule; throws a {@linkcode PermissionRuleError} naming it when it is malformed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePermissionRule, PermissionRuleError } from "@amber/core";
 * assert.deepEqual(parsePermissionRule("bash(npm test *)"), {
 *   text: "bash(npm test *)",
 *   tool: "bash",
 *   pattern: "npm test *",
 * });
 * assert.deepEqual(parsePermissionRule("mcp__github__*"), { text: "mcp__github__*", tool: "mcp__github__*" });
 * assert.throws(() => parsePermissionRule("write(../etc/**)"), PermissionRuleError);
 * ```
 */
export function parsePermissionRule(text: string): PermissionRule {
  const rule = text.trim();
  if (rule === "") throw new PermissionRuleError(text, "a rule cannot be empty");
  const open = rule.indexOf("(");
  const tool = open === -1 ? rule : rule.slice(0, open).trim();
  if (open === -1 && rule.includes(")")) {
    throw new PermissionRuleError(rule, "a ')' without its '('");
  }
  if (!TOOL_NAME.test(tool)) {
    throw new PermissionRuleError(
      rule,
      "expected a tool name or glob (letters, digits, _ . : - * ?), then optionally " +
        "an argument pattern in parentheses: bash(npm test *)",
    );
  }
  if (open === -1) return { text: rule, tool };
  if (!rule.endsWith(")")) {
    throw new PermissionRuleError(rule, "the argument pattern must end the rule with ')'");
  }
  const pattern = rule.slice(open + 1, -1).trim();
  if (pattern === "") {
    throw new PermissionRuleError(rule, `an empty pattern matches nothing; write '${tool}' alone`);
  }
  if (PATH_RULE_TOOLS.has(tool)) checkPathPattern(rule, pattern);
  return { text: rule, tool, pattern };
}

// A relative path pattern stays inside the workspace: `src/../x` is `x`, `../x` is an error.
function checkPathPattern(rule: string, pattern: string): void {
  if (pattern.startsWith("/") || pattern === "~" || pattern.startsWith("~/")) return;
  const normal = posix.normalize(pattern);
  if (normal === ".." || normal.startsWith("../")) {
    throw new PermissionRuleError(
      rule,
      "a relative path pattern cannot leave the workspace; write an absolute path or ~/...",
    );
  }
}

/** One rule in force, with its effect and where it comes from. */
export interface PermissionEntry {
  /** What the rule does. */
  readonly effect: PermissionEffect;
  /** The rule. */
  readonly rule: PermissionRule;
  /** Where it comes from, as the user should read it (`config.yaml`, `.amber/permissions.yaml`). */
  readonly source: string;
}

/** A problem of one rule in a `permissions` section. */
export interface PermissionProblem {
  /** The key path of the rule in its file: `["permissions", "allow", "2"]`. */
  readonly keys: readonly string[];
  /** What is wrong, naming the rule. */
  readonly message: string;
}

/** What {@linkcode parsePermissions} read of a `permissions` section. */
export interface ParsedPermissions {
  /** The rules that parsed, in the file's order. */
  readonly entries: readonly PermissionEntry[];
  /** The section as it should be kept: the rules that parsed, by effect. */
  readonly config: PermissionsConfig;
  /** Every problem; a rule with a problem is left out. */
  readonly problems: readonly PermissionProblem[];
}

/**
 * Reads a `permissions` section (`{allow, ask, deny}`, each a list of rules) from `source`,
 * reporting every malformed rule and unknown field instead of stopping at the first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePermissions } from "@amber/core";
 * const parsed = parsePermissions({ allow: ["read", "bash(ls"] }, "config.yaml");
 * assert.deepEqual(parsed.entries.map((e) => e.rule.text), ["read"]);
 * assert.deepEqual(parsed.problems.map((p) => p.keys.join(".")), ["permissions.allow.1"]);
 * assert.match(parsed.problems[0].message, /permission rule 'bash\(ls'/);
 * ```
 */
export function parsePermissions(value: unknown, source: string): ParsedPermissions {
  const entries: PermissionEntry[] = [];
  const problems: PermissionProblem[] = [];
  const config: { -readonly [E in PermissionEffect]?: string[] } = {};
  if (value === undefined || value === null) return { entries, config, problems };
  if (typeof value !== "object" || Array.isArray(value)) {
    problems.push({
      keys: ["permissions"],
      message: `permissions: expected a mapping of allow, ask and deny lists, found ${
        kindOf(value)
      }`,
    });
    return { entries, config, problems };
  }
  const section = value as Record<string, unknown>;
  // In the file's order, so problems are listed as they are met reading it.
  for (const key of Object.keys(section)) {
    if (!(PERMISSION_EFFECTS as readonly string[]).includes(key)) {
      problems.push({
        keys: ["permissions", key],
        message: `permissions.${key}: unknown field (fields: allow, ask, deny)`,
      });
      continue;
    }
    const effect = key as PermissionEffect;
    const list = section[effect];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) {
      problems.push({
        keys: ["permissions", effect],
        message: `permissions.${effect}: expected a list of rules, found ${kindOf(list)}`,
      });
      continue;
    }
    const kept: string[] = [];
    list.forEach((item, index) => {
      const keys = ["permissions", effect, String(index)];
      if (typeof item !== "string") {
        problems.push({
          keys,
          message: `permissions.${effect}[${index}]: expected a rule, found ${kindOf(item)}`,
        });
        return;
      }
      try {
        const rule = parsePermissionRule(item);
        entries.push({ effect, rule, source });
        kept.push(rule.text);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        problems.push({ keys, message: `permissions.${effect}[${index}]: ${message}` });
      }
    });
    config[effect] = kept;
  }
  return { entries, config, problems };
}

/** A tool call as the rules see it. */
export interface PermissionCall {
  /** The tool's name. */
  readonly name: string;
  /** The parsed arguments. */
  readonly args: unknown;
  /** The tool's one-line summary of the call (for tools without a command or path). */
  readonly summary?: string;
}

/** What the rules say of one call. */
export interface PermissionVerdict {
  /** Block it, ask about it, or run it without asking. */
  readonly effect: PermissionEffect;
  /** The rule that decided (for an allowed command line of several commands, each rule). */
  readonly rule: string;
  /** Where the rule comes from. */
  readonly source: string;
}

/** Where path patterns and paths are resolved. */
export interface PermissionPlaces {
  /** The workspace root, absolute. */
  readonly workspace: string;
  /** The home directory, for `~/` (without it, `~` is an ordinary name). */
  readonly home?: string;
  /**
   * Where an absolute path really leads, symbolic links followed (for a path that does not
   * exist yet, its deepest existing folder's). With it, an allow rule covers a path only when
   * the path as written and the place it leads to both match (`write(src/**)` does not cover
   * `src/link/.bashrc` when `src/link` leads home), and a deny or ask rule matches either.
   */
  readonly realPath?: (path: string) => string;
}

/**
 * The rules in force, compiled, and the decision for a call.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePermissions, PermissionRules } from "@amber/core";
 * const { entries } = parsePermissions({
 *   allow: ["bash(npm test *)", "write(src/**)"],
 *   deny: ["bash(rm *)"],
 * }, "config.yaml");
 * const rules = new PermissionRules(entries, { workspace: "/w" });
 * assert.equal(rules.decide({ name: "bash", args: { command: "npm test -- x" } })?.effect, "allow");
 * assert.equal(rules.decide({ name: "bash", args: { command: "npm test && rm -rf /" } })?.effect, "deny");
 * assert.equal(rules.decide({ name: "write", args: { path: "./src/a/b.ts" } })?.effect, "allow");
 * assert.equal(rules.decide({ name: "write", args: { path: "src/../x.ts" } }), undefined);
 * ```
 */
export class PermissionRules {
  readonly #entries: readonly PermissionEntry[];
  readonly #compiled: readonly CompiledRule[];

  /** Compiles `entries`, resolving path patterns against `places`. */
  constructor(entries: readonly PermissionEntry[], places: PermissionPlaces) {
    this.#entries = Object.freeze([...entries]);
    this.#compiled = entries.map((entry) => compile(entry, places));
  }

  /** The rules, in the order given. */
  get entries(): readonly PermissionEntry[] {
    return this.#entries;
  }

  /** What the rules say of `call`: undefined when no rule matches it. */
  decide(call: PermissionCall): PermissionVerdict | undefined {
    if (COMMAND_RULE_TOOLS.has(call.name)) return this.#decideCommand(call);
    for (const effect of PERMISSION_EFFECTS) {
      const hit = this.#compiled.find((rule) =>
        rule.entry.effect === effect && rule.matches(call, undefined)
      );
      if (hit !== undefined) return verdictOf(hit.entry);
    }
    return undefined;
  }

  #decideCommand(call: PermissionCall): PermissionVerdict | undefined {
    const command = stringArg(call.args, "command") ?? "";
    const line = splitCommandLine(command);
    const whole = command.trim().replace(/\s+/g, " ");
    // Deny and ask rules also see each command without what leads it (`X=1 sudo rm` as `rm`).
    const parts = [...new Set([whole, ...line.commands, ...line.commands.map(bareCommand)])];
    for (const effect of ["deny", "ask"] as const) {
      const hit = this.#compiled.find((rule) =>
        rule.entry.effect === effect && parts.some((part) => rule.matches(call, part))
      );
      if (hit !== undefined) return verdictOf(hit.entry);
    }
    const allows = this.#compiled.filter((rule) => rule.entry.effect === "allow");
    // A rule for the tool alone (`bash`) allows any line; a pattern covers only what it says.
    const bare = allows.find((rule) => rule.entry.rule.pattern === undefined && rule.named(call));
    if (bare !== undefined) return verdictOf(bare.entry);
    if (line.opaque || line.commands.length === 0) return undefined;
    const used: CompiledRule[] = [];
    for (const part of line.commands) {
      const hit = allows.find((rule) => rule.matches(call, part));
      if (hit === undefined) return undefined;
      if (!used.includes(hit)) used.push(hit);
    }
    return {
      effect: "allow",
      rule: used.map((rule) => rule.entry.rule.text).join(", "),
      source: [...new Set(used.map((rule) => rule.entry.source))].join(", "),
    };
  }
}

interface CompiledRule {
  readonly entry: PermissionEntry;
  named(call: PermissionCall): boolean;
  // `command` is one simple command of a command tool's line; undefined for other tools.
  matches(call: PermissionCall, command: string | undefined): boolean;
}

function compile(entry: PermissionEntry, places: PermissionPlaces): CompiledRule {
  const { tool, pattern } = entry.rule;
  const name = new RegExp(`^${globBody(tool, "name")}$`);
  const named = (call: PermissionCall): boolean => name.test(call.name);
  if (pattern === undefined) return { entry, named, matches: named };
  if (COMMAND_RULE_TOOLS.has(tool) || !PATH_RULE_TOOLS.has(tool)) {
    const text = commandRegExp(pattern);
    return {
      entry,
      named,
      matches: (call, command) => {
        if (!named(call)) return false;
        const subject = command ??
          (COMMAND_RULE_TOOLS.has(call.name) ? stringArg(call.args, "command") : call.summary);
        return subject !== undefined && text.test(subject.trim().replace(/\s+/g, " "));
      },
    };
  }
  const path = new RegExp(`^${globBody(absolutePattern(pattern, places), "path")}$`);
  const realPath = places.realPath;
  if (realPath === undefined) {
    return {
      entry,
      named,
      matches: (call) => named(call) && path.test(absolutePattern(pathArg(call), places)),
    };
  }
  // The rule's own places followed too, so a workspace reached through a link still matches.
  const real = new RegExp(`^${globBody(absolutePattern(pattern, realPlaces(places)), "path")}$`);
  return {
    entry,
    named,
    matches: (call) => {
      if (!named(call)) return false;
      const written = absolutePattern(pathArg(call), places);
      const reached = followed(realPath, written);
      return entry.effect === "allow"
        ? path.test(written) && real.test(reached)
        : path.test(written) || real.test(reached);
    },
  };
}

function pathArg(call: PermissionCall): string {
  return stringArg(call.args, "path") ?? ".";
}

function realPlaces(places: PermissionPlaces): PermissionPlaces {
  const realPath = places.realPath!;
  const home = places.home;
  return {
    workspace: followed(realPath, places.workspace),
    ...(home === undefined ? {} : { home: followed(realPath, home) }),
  };
}

// A resolver that fails leaves the path as written: the lexical match still applies.
function followed(realPath: (path: string) => string, path: string): string {
  try {
    return realPath(path);
  } catch {
    return path;
  }
}

function verdictOf(entry: PermissionEntry): PermissionVerdict {
  return { effect: entry.effect, rule: entry.rule.text, source: entry.source };
}

// A command glob: `*` any text; a trailing ` *` may also match nothing.
function commandRegExp(pattern: string): RegExp {
  const normal = pattern.trim().replace(/\s+/g, " ");
  if (normal.endsWith(" *") && normal.length > 2) {
    return new RegExp(`^${globBody(normal.slice(0, -2), "text")}(?: [\\s\\S]*)?$`);
  }
  return new RegExp(`^${globBody(normal, "text")}$`);
}

// `~/x` under the home directory, a relative path under the workspace; `..` resolved.
function absolutePattern(path: string, places: PermissionPlaces): string {
  const home = places.home;
  if (home !== undefined && (path === "~" || path.startsWith("~/"))) {
    return posix.join(home, path.slice(1));
  }
  return posix.resolve(places.workspace, path);
}

// The regular expression body of a glob. `name` and `text`: `*` any text, `?` one character.
// `path`: `*` and `?` within one segment, `**` any depth (`a/**` also matches `a` itself).
function globBody(glob: string, kind: "name" | "text" | "path"): string {
  let body = "";
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (kind === "path" && glob.startsWith("**", i)) {
      const before = glob[i - 1];
      const after = glob[i + 2];
      if (before === "/" && after === undefined) {
        body = body.slice(0, -1) + "(?:/.*)?";
        i += 1;
      } else if (after === "/") {
        body += "(?:.*/)?";
        i += 2;
      } else {
        body += ".*";
        i += 1;
      }
    } else if (char === "*") body += kind === "path" ? "[^/]*" : "[\\s\\S]*";
    else if (char === "?") body += kind === "path" ? "[^/]" : "[\\s\\S]";
    else body += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return body;
}

function stringArg(args: unknown, key: string): string | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const value = (args as Record<string, unknown>)[key];
  return typeof value === "string" ? value : undefined;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "a mapping" : `${typeof value} ${JSON.stringify(value)}`;
}
