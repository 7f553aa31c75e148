/**
 * `/permissions`: the permission rules in force, numbered, each with where it comes from
 * (config.yaml, the workspace's `.amber/permissions.yaml`, or amber's own) and whether it
 * applies (a workspace allow rule waits for the file to be trusted); `/permissions remove N`
 * takes rule N out of its file (`/permissions remove` alone picks it from a list), and
 * `/permissions trust` trusts the workspace file as it is now.
 *
 * @module
 */

import type { CommandCapability } from "@amber/core";
import { originName, type SessionPermissions } from "../session/permissions.ts";
import type { Dialogs } from "./dialogs.ts";

/** What `/permissions` acts on, once the interactive session runs. */
export interface PermissionsTarget {
  /** The session's rules. */
  readonly permissions: SessionPermissions;
  /** Where the picker of `/permissions remove` is asked. */
  readonly dialogs: Dialogs;
}

const MANUAL =
  "Rules live under `permissions: {allow, ask, deny}` in config.yaml (yours) and in\n" +
  ".amber/permissions.yaml in the workspace. Deny comes first, then ask, then allow. The\n" +
  "workspace file's allow rules apply only once you trusted its content (/permissions trust,\n" +
  "or saving a rule from the approval prompt); a changed file needs trusting again.";

/**
 * The `/permissions` command, acting on what `target()` returns when it runs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { permissionsCommand } from "./permissions_command.ts";
 * const command = permissionsCommand(() => undefined);
 * assert.equal(command.name, "permissions");
 * await assert.rejects(async () => await command.handlers[""]("")!, /not running/);
 * ```
 */
export function permissionsCommand(
  target: () => PermissionsTarget | undefined,
): CommandCapability {
  const running = (): PermissionsTarget => {
    const found = target();
    if (found === undefined) throw new Error("the interactive session is not running");
    return found;
  };
  return {
    kind: "command",
    name: "permissions",
    root: "permissions",
    help: "The permission rules in force; /permissions remove [N] | trust",
    man: MANUAL,
    subtree: {},
    handlers: { "": (arg) => permissions(running(), arg.trim()) },
  };
}

async function permissions(target: PermissionsTarget, arg: string): Promise<string> {
  const rules = target.permissions;
  const [word = "", ...rest] = arg.split(/\s+/).filter((w) => w !== "");
  if (word === "trust" && rest.length === 0) return await rules.trust();
  if (word === "remove" && rest.length <= 1) {
    await rules.reload();
    let index = rest.length === 1 ? Number(rest[0]) : await pickRule(target);
    if (index === undefined) return "nothing removed";
    if (!Number.isInteger(index)) index = Number.NaN;
    try {
      return await rules.remove(index);
    } catch (error) {
      if (error instanceof RangeError) return error.message;
      throw error;
    }
  }
  if (word !== "") return "usage: /permissions | /permissions remove [N] | /permissions trust";
  await rules.reload();
  return listText(rules);
}

// The rules that can be removed (not amber's own), picked from a list; their number in the list.
async function pickRule(target: PermissionsTarget): Promise<number | undefined> {
  const listed = target.permissions.list();
  const removable = listed.flatMap((rule, i) =>
    rule.origin === "amber" ? [] : [{ rule, n: i + 1 }]
  );
  if (removable.length === 0) return undefined;
  const picked = await target.dialogs.pick(
    "Remove which rule?",
    removable.map(({ rule }) => ({
      label: `${rule.effect} ${rule.rule}  (${originName(rule.origin)})`,
    })),
  );
  return picked === undefined ? undefined : removable[picked].n;
}

function listText(rules: SessionPermissions): string {
  const listed = rules.list();
  const lines = listed.map((rule, i) =>
    `${String(i + 1).padStart(3)}. ${rule.effect.padEnd(5)} ${rule.rule}  (${
      originName(rule.origin)
    }${rule.applies ? "" : ", not trusted: ignored"})`
  );
  if (listed.every((rule) => rule.origin === "amber")) {
    lines.unshift("no rules of yours; add them under permissions: in config.yaml");
  }
  if (listed.some((rule) => !rule.applies)) {
    lines.push(`read ${rules.workspaceFile}, then /permissions trust to apply its allow rules`);
  }
  return lines.join("\n");
}
