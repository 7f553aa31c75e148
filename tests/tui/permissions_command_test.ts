// `/permissions`: lists the rules in force with where each comes from and whether it applies,
// removes one by number or from a picker (from its own file, the rest kept), and trusts the
// workspace file.

import { equal, match } from "node:assert/strict";
import { SessionPermissions } from "../../cli/session/permissions.ts";
import { Dialogs } from "../../cli/tui/dialogs.ts";
import { permissionsCommand } from "../../cli/tui/permissions_command.ts";

async function scene() {
  const configDir = await Deno.makeTempDir();
  const workspace = await Deno.makeTempDir();
  await Deno.writeTextFile(
    `${configDir}/config.yaml`,
    "model: m # mine\npermissions:\n  deny: [bash(rm *)]\n  allow: [read]\n",
  );
  await Deno.mkdir(`${workspace}/.amber`);
  await Deno.writeTextFile(
    `${workspace}/.amber/permissions.yaml`,
    "permissions:\n  allow: [bash]\n",
  );
  const permissions = await SessionPermissions.load({
    configDir,
    workspace,
    config: { plugins: {}, model: "m", permissions: { deny: ["bash(rm *)"], allow: ["read"] } },
  });
  const dialogs = new Dialogs();
  const command = permissionsCommand(() => ({ permissions, dialogs }));
  const run = async (arg: string) => String(await command.handlers[""](arg));
  return {
    configDir,
    workspace,
    permissions,
    dialogs,
    run,
    async [Symbol.asyncDispose]() {
      await Deno.remove(configDir, { recursive: true });
      await Deno.remove(workspace, { recursive: true });
    },
  };
}

Deno.test("/permissions lists every rule with its origin, and says what is not trusted", async () => {
  await using s = await scene();
  const text = await s.run("");
  match(text, /1\. deny {2}bash\(rm \*\) {2}\(config\.yaml\)/);
  match(text, /2\. allow read {2}\(config\.yaml\)/);
  match(text, /3\. allow bash {2}\(\.amber\/permissions\.yaml, not trusted: ignored\)/);
  match(text, /4\. ask {3}write\(\.amber\/permissions\.yaml\) {2}\(amber's own rules\)/);
  match(text, /then \/permissions trust to apply its allow rules/);
  match(
    await s.run("trust"),
    /trusted \.amber\/permissions\.yaml as it is now \(1 allow rule applies\)/,
  );
  match(await s.run(""), /3\. allow bash {2}\(\.amber\/permissions\.yaml\)\n/);
  equal(s.permissions.decide({ name: "bash", args: { command: "ls" } })?.effect, "allow");
});

Deno.test("/permissions remove N takes the rule out of its file and keeps the rest", async () => {
  await using s = await scene();
  match(await s.run("remove 1"), /removed deny rule 'bash\(rm \*\)' from config\.yaml/);
  equal(
    await Deno.readTextFile(`${s.configDir}/config.yaml`),
    "model: m # mine\npermissions:\n  deny: []\n  allow: [ read ]\n",
  );
  equal(s.permissions.decide({ name: "bash", args: { command: "rm x" } }), undefined);
  match(await s.run("remove 9"), /there is no rule 9/);
  match(await s.run("remove 4"), /amber's own and cannot be removed/);
  match(await s.run("nonsense"), /usage: \/permissions/);
});

Deno.test("/permissions remove alone picks the rule from a list", async () => {
  await using s = await scene();
  const reply = s.run("remove");
  // The picker lists the removable rules: the third is the workspace's allow rule.
  while (s.dialogs.layout(80) === undefined) await new Promise((go) => setTimeout(go, 10));
  for (let i = 0; i < 2; i++) {
    s.dialogs.key({ name: "down", ctrl: false, alt: false, shift: false });
  }
  s.dialogs.key({ name: "enter", ctrl: false, alt: false, shift: false });
  match(await reply, /removed allow rule 'bash' from \.amber\/permissions\.yaml/);
  equal(
    await Deno.readTextFile(`${s.workspace}/.amber/permissions.yaml`),
    "permissions:\n  allow: []\n",
  );
});
