/**
 * The permission rules a session runs with: `config.yaml`'s (the user's), the workspace's
 * `.amber/permissions.yaml` (its `allow` rules only while the file is trusted, see
 * `permission_rules.ts`), and amber's own: a `write` or `edit` of the workspace's permissions
 * file is always asked, so a model cannot quietly drop the rules that hold it back. The kernel
 * asks {@linkcode SessionPermissions.decide} for every call; saving, trusting and removing
 * rules take effect on the next call.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import {
  type AmberConfig,
  parsePermissionRule,
  parsePermissions,
  type PermissionCall,
  type PermissionEffect,
  type PermissionEntry,
  PermissionRules,
  type PermissionVerdict,
} from "@amber/core";
import {
  editPermissionsFile,
  PermissionsFileError,
  PermissionTrust,
  readPermissionsText,
  readWorkspacePermissions,
  WORKSPACE_PERMISSIONS_FILE,
  type WorkspacePermissions,
} from "../permission_rules.ts";

/** Where a listed rule comes from. */
export type RuleOrigin = "config" | "workspace" | "amber";

/** One rule as `/permissions` lists it. */
export interface ListedRule {
  /** What it does. */
  readonly effect: PermissionEffect;
  /** The rule as written. */
  readonly rule: string;
  /** Its file: config.yaml, the workspace's file, or amber's own rules. */
  readonly origin: RuleOrigin;
  /** False for a workspace allow rule while the file is not trusted. */
  readonly applies: boolean;
}

/** Where a session's rules come from. */
export interface PermissionSources {
  /** The config directory (config.yaml and the trust file). */
  readonly configDir: string;
  /** The workspace root. */
  readonly workspace: string;
  /** config.yaml as loaded. */
  readonly config: AmberConfig;
  /** The home directory, for `~/` in rules. */
  readonly home?: string;
}

// The workspace's rules file may only change with the user's say.
const OWN_RULES: readonly string[] = [
  `write(${WORKSPACE_PERMISSIONS_FILE})`,
  `edit(${WORKSPACE_PERMISSIONS_FILE})`,
];

/**
 * A session's permission rules.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SessionPermissions } from "./permissions.ts";
 * const configDir = await Deno.makeTempDir();
 * const workspace = await Deno.makeTempDir();
 * await Deno.mkdir(`${workspace}/.amber`);
 * await Deno.writeTextFile(`${workspace}/.amber/permissions.yaml`, "permissions:\n  allow: [bash]\n");
 * const rules = await SessionPermissions.load({
 *   configDir,
 *   workspace,
 *   config: { plugins: {}, permissions: { deny: ["bash(rm *)"] } },
 * });
 * assert.equal(rules.decide({ name: "bash", args: { command: "ls" } }), undefined);
 * assert.match(rules.notices[0], /ignored until you trust/);
 * await rules.trust();
 * assert.equal(rules.decide({ name: "bash", args: { command: "ls" } })?.effect, "allow");
 * assert.equal(rules.decide({ name: "bash", args: { command: "rm x" } })?.effect, "deny");
 * await Deno.remove(configDir, { recursive: true });
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export class SessionPermissions {
  readonly #sources: PermissionSources;
  readonly #trust: PermissionTrust;
  #config: readonly PermissionEntry[];
  #local: WorkspacePermissions | undefined;
  #trusted = false;
  // Compiled by #loadWorkspace, which load() always runs: compiling here too cost every session
  // start a second compilation of the same rules.
  #rules!: PermissionRules;
  #notices: string[] = [];

  private constructor(sources: PermissionSources) {
    this.#sources = sources;
    this.#trust = new PermissionTrust(sources.configDir);
    this.#config = parsePermissions(sources.config.permissions, "config.yaml").entries;
  }

  /** Loads the rules of `sources`; what the workspace file's state needs said is in `notices`. */
  static async load(sources: PermissionSources): Promise<SessionPermissions> {
    const permissions = new SessionPermissions(sources);
    await permissions.#loadWorkspace();
    permissions.#notices = permissions.#describe();
    return permissions;
  }

  /** What to tell the user when the session starts (an untrusted file, broken rules). */
  get notices(): readonly string[] {
    return this.#notices;
  }

  /** The workspace root, which relative rules are matched against. */
  get workspace(): string {
    return this.#sources.workspace;
  }

  /** The workspace's rules file. */
  get workspaceFile(): string {
    return join(this.#sources.workspace, WORKSPACE_PERMISSIONS_FILE);
  }

  /** What the rules say of `call` (for the kernel's `permissions` option). */
  decide(call: PermissionCall): PermissionVerdict | undefined {
    return this.#rules.decide(call);
  }

  /** Every rule, with where it comes from and whether it applies; numbered from 1 in lists. */
  list(): readonly ListedRule[] {
    const local = this.#local?.entries ?? [];
    return [
      ...this.#config.map((entry) => listed(entry, "config", true)),
      ...local.map((entry) =>
        listed(entry, "workspace", entry.effect !== "allow" || this.#trusted)
      ),
      ...OWN_RULES.map((rule) => ({
        effect: "ask" as const,
        rule,
        origin: "amber" as const,
        applies: true,
      })),
    ];
  }

  /**
   * Saves `rule` as an allow rule of the workspace file (created when missing) and trusts the
   * file as written: the user made this rule through amber. A file holding allow rules the user
   * has not trusted is left as it is (a {@linkcode PermissionsFileError}): trusting it as written
   * would trust those too.
   */
  async allowInWorkspace(rule: string): Promise<void> {
    const text = parsePermissionRule(rule).text;
    // As it is on disk now: the workspace (a clone, the model's write) may have added rules.
    await this.#loadWorkspace();
    const unseen = this.#trusted ? [] : this.#local!.entries.filter((e) => e.effect === "allow");
    if (unseen.length > 0) {
      throw new PermissionsFileError(
        this.workspaceFile,
        `allows ${unseen.map((e) => e.rule.text).join(", ")}, which you have not trusted; ` +
          "read it, then run /permissions trust",
      );
    }
    const hash = await editPermissionsFile(this.workspaceFile, "allow", text);
    await this.#trust.trust(this.workspaceFile, hash);
    await this.#loadWorkspace();
  }

  /** Trusts the workspace file's content as it is now; says what that did. */
  async trust(): Promise<string> {
    await this.#loadWorkspace();
    const local = this.#local!;
    if (!local.exists) {
      return `${WORKSPACE_PERMISSIONS_FILE} does not exist: there is nothing to trust`;
    }
    await this.#trust.trust(local.path, local.hash);
    await this.#loadWorkspace();
    const allows = local.entries.filter((entry) => entry.effect === "allow").length;
    return `trusted ${WORKSPACE_PERMISSIONS_FILE} as it is now (${allows} allow rule${
      allows === 1 ? " applies" : "s apply"
    }); a change to it needs trusting again`;
  }

  /**
   * Removes the rule listed at `index` (from 1, as {@linkcode SessionPermissions.list} orders
   * them) from its file; a workspace file amber edits stays trusted if it was. Says what went.
   */
  async remove(index: number): Promise<string> {
    const rules = this.list();
    const target = rules[index - 1];
    if (!Number.isInteger(index) || target === undefined) {
      throw new RangeError(`there is no rule ${index}; /permissions lists ${rules.length}`);
    }
    if (target.origin === "amber") {
      throw new RangeError(`rule ${index} is amber's own and cannot be removed`);
    }
    if (target.origin === "config") {
      const path = join(this.#sources.configDir, "config.yaml");
      await editPermissionsFile(path, target.effect, target.rule, { remove: true });
      const read = await readPermissionsText(path, await Deno.readTextFile(path), "config.yaml");
      this.#config = read.entries;
    } else {
      // As it is on disk now, not as last loaded: re-trusting must not take in a later change.
      await this.#loadWorkspace();
      const wasTrusted = this.#trusted;
      const hash = await editPermissionsFile(this.workspaceFile, target.effect, target.rule, {
        remove: true,
      });
      if (wasTrusted) await this.#trust.trust(this.workspaceFile, hash);
    }
    await this.#loadWorkspace();
    return `removed ${target.effect} rule '${target.rule}' from ${originName(target.origin)}`;
  }

  /** Reads the workspace file again (it may have changed since). */
  async reload(): Promise<void> {
    await this.#loadWorkspace();
  }

  async #loadWorkspace(): Promise<void> {
    const local = await readWorkspacePermissions(this.#sources.workspace);
    this.#local = local;
    this.#trusted = local.exists && await this.#trust.trusted(local.path, local.hash);
    this.#rules = this.#compile();
  }

  #compile(): PermissionRules {
    const local = (this.#local?.entries ?? []).filter((entry) =>
      entry.effect !== "allow" || this.#trusted
    );
    const own = OWN_RULES.map((text): PermissionEntry => ({
      effect: "ask",
      rule: parsePermissionRule(text),
      source: "amber",
    }));
    return new PermissionRules([...this.#config, ...local, ...own], {
      workspace: this.#sources.workspace,
      ...(this.#sources.home === undefined ? {} : { home: this.#sources.home }),
      realPath: followLinks,
    });
  }

  #describe(): string[] {
    const local = this.#local;
    if (local === undefined) return [];
    const notices = local.problems.map((problem) => `${problem.message} (the rule is left out)`);
    const allows = local.entries.filter((entry) => entry.effect === "allow");
    if (allows.length > 0 && !this.#trusted) {
      const names = allows.map((entry) => entry.rule.text).join(", ");
      notices.push(
        `${WORKSPACE_PERMISSIONS_FILE} allows ${names}: ignored until you trust the file ` +
          "(its deny and ask rules apply); read it, then run /permissions trust",
      );
    }
    return notices;
  }
}

function listed(entry: PermissionEntry, origin: RuleOrigin, applies: boolean): ListedRule {
  return { effect: entry.effect, rule: entry.rule.text, origin, applies };
}

/** How a rule's origin reads in a list. */
export function originName(origin: RuleOrigin): string {
  switch (origin) {
    case "config":
      return "config.yaml";
    case "workspace":
      return WORKSPACE_PERMISSIONS_FILE;
    case "amber":
      return "amber's own rules";
  }
}

// Where `path` really leads: its deepest existing ancestor's real path, with the rest of the
// path (not created yet) appended as written.
function followLinks(path: string): string {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      return join(Deno.realPathSync(at), ...rest.reverse());
    } catch {
      const parent = dirname(at);
      if (parent === at) return path;
      rest.push(basename(at));
      at = parent;
    }
  }
}
