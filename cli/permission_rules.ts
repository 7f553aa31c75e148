/**
 * The files permission rules live in, and the trust a workspace's file needs. `config.yaml`'s
 * `permissions` section is the user's; a workspace's `.amber/permissions.yaml` (the same shape)
 * came with the folder, perhaps with a cloned repository, so its `deny` and `ask` rules always
 * apply but its `allow` rules only once the user trusted exactly that content: amber keeps the
 * SHA-256 of the trusted text per file in `trusted_permissions.json` in the config directory. A
 * rule saved through amber (the approval prompt's "always ... in this workspace") re-trusts the
 * file it wrote, unless the file holds allow rules the user has not trusted (then nothing is
 * saved); `/permissions trust` trusts the file as it is. A changed file is untrusted again.
 *
 * Edits go through the `yaml` package's document API, so comments, order and other keys of the
 * file stay as they were.
 *
 * @module
 */

import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import {
  COMMAND_RULE_TOOLS,
  parsePermissions,
  PATH_RULE_TOOLS,
  type PermissionEffect,
  type PermissionEntry,
} from "@amber/core";
import { writeTextAtomic } from "./atomic_file.ts";

/** Where a workspace keeps its rules, relative to the workspace root. */
export const WORKSPACE_PERMISSIONS_FILE = ".amber/permissions.yaml";

const TRUST_FILE = "trusted_permissions.json";

/** A permissions file that cannot be read or edited; names the file and, where it can, the line. */
export class PermissionsFileError extends Error {
  /** The file, with `:line:col` when the problem has a place in it. */
  readonly path: string;
  /** Creates the error. */
  constructor(path: string, detail: string, options?: ErrorOptions) {
    super(`${path}: ${detail}`, options);
    this.name = "PermissionsFileError";
    this.path = path;
  }
}

/** What reading a workspace's permissions file found. */
export interface WorkspacePermissions {
  /** The file's path. */
  readonly path: string;
  /** Whether the file exists. */
  readonly exists: boolean;
  /** The SHA-256 of its text, hex (of the empty text when there is no file). */
  readonly hash: string;
  /** The rules that parsed, each with the file as its source. */
  readonly entries: readonly PermissionEntry[];
  /** Every problem, each naming the file, the line and the rule where it can. */
  readonly problems: readonly PermissionsFileError[];
}

/**
 * Reads `<workspace>/.amber/permissions.yaml`; no file has no rules. Nothing is thrown for bad
 * content: the rules that parse are kept and every other one is a problem.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readWorkspacePermissions } from "./permission_rules.ts";
 * const workspace = await Deno.makeTempDir();
 * await Deno.mkdir(`${workspace}/.amber`);
 * await Deno.writeTextFile(
 *   `${workspace}/.amber/permissions.yaml`,
 *   "permissions:\n  deny: [bash(rm *)]\n  allow:\n    - read\n    - write(../x)\n",
 * );
 * const read = await readWorkspacePermissions(workspace);
 * assert.deepEqual(read.entries.map((e) => `${e.effect} ${e.rule.text}`), ["deny bash(rm *)", "allow read"]);
 * assert.match(read.problems[0].message, /permissions\.yaml:5:7: permissions\.allow\[1\]: permission rule 'write\(\.\.\/x\)'/);
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export async function readWorkspacePermissions(workspace: string): Promise<WorkspacePermissions> {
  const path = join(workspace, WORKSPACE_PERMISSIONS_FILE);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    const none = { path, exists: false, hash: await sha256(""), entries: [] };
    if (error instanceof Deno.errors.NotFound) return { ...none, problems: [] };
    const problem = new PermissionsFileError(path, `cannot read: ${(error as Error).message}`, {
      cause: error,
    });
    return { ...none, problems: [problem] };
  }
  const read = await readPermissionsText(path, text, WORKSPACE_PERMISSIONS_FILE);
  return { path, exists: true, hash: await sha256(text), ...read };
}

/**
 * The rules of a YAML text holding a `permissions` section, with every problem located in
 * `path` by line and column. Other top-level keys are left alone (config.yaml has many);
 * `source` names where the rules come from.
 */
export async function readPermissionsText(
  path: string,
  text: string,
  source: string,
): Promise<{ entries: readonly PermissionEntry[]; problems: readonly PermissionsFileError[] }> {
  const { LineCounter, parseDocument } = await import("yaml");
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines });
  const problems: PermissionsFileError[] = [];
  for (const error of document.errors) {
    const pos = error.linePos?.[0];
    const detail = error.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
    problems.push(new PermissionsFileError(pos ? `${path}:${pos.line}:${pos.col}` : path, detail));
  }
  if (problems.length > 0) return { entries: [], problems };
  const data: unknown = document.toJS() ?? {};
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return {
      entries: [],
      problems: [new PermissionsFileError(path, "expected a mapping with a permissions key")],
    };
  }
  const parsed = parsePermissions((data as Record<string, unknown>).permissions, source);
  for (const problem of parsed.problems) {
    let where = path;
    for (let n = problem.keys.length; n > 0; n--) {
      const node = document.getIn(problem.keys.slice(0, n), true) as
        | { range?: [number, number] }
        | undefined;
      if (node?.range) {
        const { line, col } = lines.linePos(node.range[0]);
        where = `${path}:${line}:${col}`;
        break;
      }
    }
    problems.push(new PermissionsFileError(where, problem.message));
  }
  return { entries: parsed.entries, problems };
}

/**
 * Adds `rule` to the `effect` list of the permissions file at `path` (creating the file, its
 * folder and the section when missing) or, with `remove`, takes it out; comments and every
 * other key stay. Returns the SHA-256 of the text written. Adding a rule the list holds, or
 * removing one it does not, writes nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { editPermissionsFile } from "./permission_rules.ts";
 * const dir = await Deno.makeTempDir();
 * const path = `${dir}/.amber/permissions.yaml`;
 * await editPermissionsFile(path, "allow", "bash(npm test *)");
 * assert.equal(await Deno.readTextFile(path), "permissions:\n  allow:\n    - bash(npm test *)\n");
 * await Deno.writeTextFile(path, "# mine\npermissions:\n  deny: [bash(rm *)] # never\n");
 * await editPermissionsFile(path, "allow", "read");
 * assert.match(await Deno.readTextFile(path), /# mine\n[\s\S]*# never\n[\s\S]*- read/);
 * await editPermissionsFile(path, "deny", "bash(rm *)", { remove: true });
 * assert.doesNotMatch(await Deno.readTextFile(path), /bash/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function editPermissionsFile(
  path: string,
  effect: PermissionEffect,
  rule: string,
  options: { readonly remove?: boolean } = {},
): Promise<string> {
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound) || options.remove) {
      throw new PermissionsFileError(path, `cannot read: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  const { isSeq, parseDocument } = await import("yaml");
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    throw new PermissionsFileError(path, `cannot edit: ${document.errors[0].message}`);
  }
  const keys = ["permissions", effect];
  const list = document.getIn(keys, true);
  const values = isSeq(list) ? list.items.map((item) => String(valueOf(item))) : [];
  const index = values.indexOf(rule);
  if (options.remove) {
    if (index === -1 || !isSeq(list)) return await sha256(text);
    list.delete(index);
  } else {
    if (index !== -1) return await sha256(text);
    if (isSeq(list)) list.add(document.createNode(rule));
    else if (list === undefined || list === null) document.setIn(keys, document.createNode([rule]));
    else throw new PermissionsFileError(path, `permissions.${effect}: expected a list of rules`);
  }
  const written = document.toString();
  await Deno.mkdir(dirname(path), { recursive: true });
  await writeTextAtomic(path, written);
  return await sha256(written);
}

function valueOf(item: unknown): unknown {
  return typeof item === "object" && item !== null && "value" in item ? item.value : item;
}

/**
 * The trusted content of workspace permissions files, kept in the config directory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PermissionTrust } from "./permission_rules.ts";
 * const dir = await Deno.makeTempDir();
 * const trust = new PermissionTrust(dir);
 * assert.equal(await trust.trusted("/w/.amber/permissions.yaml", "abc"), false);
 * await trust.trust("/w/.amber/permissions.yaml", "abc");
 * assert.equal(await trust.trusted("/w/.amber/permissions.yaml", "abc"), true);
 * assert.equal(await trust.trusted("/w/.amber/permissions.yaml", "abd"), false);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class PermissionTrust {
  readonly #path: string;

  /** The trust kept in `configDir`. */
  constructor(configDir: string) {
    this.#path = join(configDir, TRUST_FILE);
  }

  /** Whether the file at `path` is trusted with the content whose SHA-256 is `hash`. */
  async trusted(path: string, hash: string): Promise<boolean> {
    return (await this.#read())[path] === hash;
  }

  /** Trusts the file at `path` with the content whose SHA-256 is `hash` (and no other). */
  async trust(path: string, hash: string): Promise<void> {
    const files = await this.#read();
    files[path] = hash;
    await Deno.mkdir(dirname(this.#path), { recursive: true });
    await writeTextAtomic(this.#path, JSON.stringify({ files }, null, 2) + "\n");
  }

  // A missing or unreadable trust file trusts nothing: the allow rules wait for the user.
  async #read(): Promise<Record<string, string>> {
    try {
      const data = JSON.parse(await Deno.readTextFile(this.#path));
      const files = data?.files;
      return typeof files === "object" && files !== null && !Array.isArray(files) ? files : {};
    } catch {
      return {};
    }
  }
}

/** The SHA-256 of `text`, hex. */
export async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** An allow rule the approval prompt offers to save for the workspace, and how it reads. */
export interface SuggestedRule {
  /** The rule: `bash(npm test *)`, `edit(src/app/**)`, `mcp__github__create_issue`. */
  readonly rule: string;
  /** The choice's words: "always for commands starting with `npm test` in this workspace". */
  readonly label: string;
}

// A word that ends a command's prefix: an option, a path, a glob, a variable, quotes, an
// assignment, or a shell operator.
const NOT_PREFIX = /^-|[/.~*?[\]$'"`=\\;&|<>(){}]/;
const MAX_PREFIX_WORDS = 3;

/**
 * The prefix of a command line that the approval prompt offers to allow: its first words, up to
 * (not including) the first that looks like an option, a path or anything but a plain word, and
 * at most three (`npm test -- x` gives `npm test`, `git log --oneline` gives `git log`, `deno
 * test -A tests/x.ts` gives `deno test`). Undefined for a line of several commands, or one
 * that starts with no plain word.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandPrefix } from "./permission_rules.ts";
 * assert.equal(commandPrefix("npm test -- x"), "npm test");
 * assert.equal(commandPrefix("cat src/main.ts"), "cat");
 * assert.equal(commandPrefix("npm test && rm -rf x"), undefined);
 * ```
 */
export function commandPrefix(command: string): string | undefined {
  const line = command.trim();
  if (/[;&|\n`]|\$\(/.test(line)) return undefined;
  const words: string[] = [];
  for (const word of line.split(/\s+/)) {
    if (word === "" || NOT_PREFIX.test(word) || words.length === MAX_PREFIX_WORDS) break;
    words.push(word);
  }
  return words.length === 0 ? undefined : words.join(" ");
}

/**
 * The workspace rule the approval prompt offers for a call, or undefined when none fits: for
 * `bash` and `process_start`, the command's prefix (`bash(npm test *)`, see
 * {@linkcode commandPrefix}); for `read`, `write`, `edit` and `search`, the file's folder in the
 * workspace (`edit(src/app/**)`), or the file itself when it is at the top (`edit(notes.txt)`),
 * nothing for a path outside the workspace; for any other tool, the tool.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { suggestWorkspaceRule } from "./permission_rules.ts";
 * const rule = (name: string, args: unknown) => suggestWorkspaceRule(name, args, "/w")?.rule;
 * assert.equal(rule("bash", { command: "npm test -- x" }), "bash(npm test *)");
 * assert.equal(rule("edit", { path: "./src/app/x.ts" }), "edit(src/app/**)");
 * assert.equal(rule("write", { path: "notes.txt" }), "write(notes.txt)");
 * assert.equal(rule("write", { path: "../elsewhere.txt" }), undefined);
 * assert.equal(rule("mcp__github__create_issue", {}), "mcp__github__create_issue");
 * ```
 */
export function suggestWorkspaceRule(
  tool: string,
  args: unknown,
  workspace: string,
): SuggestedRule | undefined {
  const arg = (key: string): string | undefined => {
    const value = typeof args === "object" && args !== null
      ? (args as Record<string, unknown>)[key]
      : undefined;
    return typeof value === "string" ? value : undefined;
  };
  if (COMMAND_RULE_TOOLS.has(tool)) {
    const prefix = commandPrefix(arg("command") ?? "");
    if (prefix === undefined) return undefined;
    return {
      rule: `${tool}(${prefix} *)`,
      label: `always for commands starting with \`${prefix}\` in this workspace`,
    };
  }
  if (PATH_RULE_TOOLS.has(tool)) {
    const path = relative(workspace, resolve(workspace, arg("path") ?? "."));
    if (path === "" || path === ".." || path.startsWith(`..${sep}`) || isAbsolute(path)) {
      return undefined;
    }
    if (/[*?[\]()]/.test(path)) return undefined;
    const folder = dirname(path);
    const pattern = folder === "." ? path : `${folder.split(sep).join("/")}/**`;
    return {
      rule: `${tool}(${pattern})`,
      label: `always for ${tool} of ${pattern} in this workspace`,
    };
  }
  if (!/^[A-Za-z0-9_.:-]+$/.test(tool)) return undefined;
  return { rule: tool, label: `always for every ${tool} call in this workspace` };
}
