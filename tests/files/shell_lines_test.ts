// `` !`cmd` `` lines of markdown commands go through amber's approval: the permission rules, the
// approval policy, and the question to the user; a refusal sends nothing and is no plugin fault.
// And CLAUDE.md beside AGENTS.md.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { UiService } from "@amber/core";
import { createPromptsPlugin } from "@amber/plugins/prompts";
import { openHost } from "../../cli/host.ts";
import { runSlashCommand } from "../../cli/slash_line.ts";

function askingUi(answer: boolean, asked: string[]): UiService {
  return {
    interactive: true,
    askText: () => Promise.resolve(undefined),
    askSecret: () => Promise.resolve(undefined),
    choose: () => Promise.resolve(undefined),
    confirm: (question) => {
      asked.push(question);
      return Promise.resolve(answer);
    },
    notify: () => {},
  };
}

async function withCommand(
  config: string,
  ui: UiService | undefined,
  check: (host: Awaited<ReturnType<typeof openHost>>) => Promise<void>,
): Promise<void> {
  const workspace = await Deno.makeTempDir();
  const configDir = await Deno.makeTempDir();
  const home = await Deno.makeTempDir();
  const before = Deno.env.get("HOME");
  Deno.env.set("HOME", home);
  await Deno.mkdir(`${workspace}/.amber/commands/git`, { recursive: true });
  await Deno.writeTextFile(
    `${workspace}/.amber/commands/git/commit.md`,
    "Write a commit message for:\n!`echo staged-change`\n",
  );
  if (config !== "") await Deno.writeTextFile(`${configDir}/config.yaml`, config);
  const host = await openHost({
    configDir,
    workspace,
    thirdParty: false,
    ...(ui !== undefined ? { ui } : {}),
  });
  try {
    await check(host);
  } finally {
    await host.close();
    if (before === undefined) Deno.env.delete("HOME");
    else Deno.env.set("HOME", before);
    for (const dir of [workspace, configDir, home]) await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a `!` line asks the user; yes puts its output in the prompt", async () => {
  const asked: string[] = [];
  await withCommand("", askingUi(true, asked), async (host) => {
    const outcome = await runSlashCommand(host, "/git:commit");
    deepStrictEqual(outcome, {
      ok: true,
      text: "",
      prompt: "Write a commit message for:\nstaged-change\n",
    });
    deepStrictEqual(asked, [
      "/git:commit runs `echo staged-change` and sends its output. Run it?",
    ]);
  });
});

Deno.test("no to the question sends nothing, says why, and is not the plugin's fault", async () => {
  const asked: string[] = [];
  await withCommand("", askingUi(false, asked), async (host) => {
    for (let i = 0; i < 5; i++) {
      const outcome = await runSlashCommand(host, "/git:commit");
      strictEqual(outcome?.ok, true);
      strictEqual(outcome?.ok === true ? outcome.prompt : "?", undefined);
      match(outcome?.ok === true ? outcome.text : "", /was not run: the user said no/);
    }
    strictEqual(host.runtime.state("files.commands").status, "active");
  });
});

Deno.test("a deny rule refuses without asking; an allow rule runs headless", async () => {
  const asked: string[] = [];
  const deny = "permissions:\n  deny: ['bash(echo *)']\n";
  await withCommand(deny, askingUi(true, asked), async (host) => {
    const outcome = await runSlashCommand(host, "/git:commit");
    match(
      outcome?.ok === true ? outcome.text : "",
      /denied by the permission rule 'bash\(echo \*\)' \(config\.yaml\)/,
    );
    deepStrictEqual(asked, []);
  });
  await withCommand("", undefined, async (host) => {
    const outcome = await runSlashCommand(host, "/git:commit");
    match(outcome?.ok === true ? outcome.text : "", /no one to ask/);
  });
  const allow = "permissions:\n  allow: ['bash(echo staged-change)']\n";
  await withCommand(allow, undefined, async (host) => {
    const outcome = await runSlashCommand(host, "/git:commit");
    strictEqual(
      outcome?.ok === true ? outcome.prompt : "",
      "Write a commit message for:\nstaged-change\n",
    );
  });
});

Deno.test("CLAUDE.md is read beside AGENTS.md, once if they are one file, and not with compat off", async () => {
  const workspace = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${workspace}/AGENTS.md`, "Use tabs.\n");
    await Deno.writeTextFile(`${workspace}/CLAUDE.md`, "Use pnpm.\n");
    const render = async (claude: boolean) => {
      const plugin = createPromptsPlugin();
      const context = {
        workspace: { root: workspace },
        config: () => ({ plugins: {}, ...(claude ? {} : { compat: { claude: false } }) }),
      };
      await plugin.initialize(context as never);
      const facts = plugin.capabilities().find((c) => c.name === "project_facts");
      return facts?.kind === "prompt" ? String(facts.render()) : "";
    };
    const both = await render(true);
    match(both, /from AGENTS\.md[^]*Use tabs\.[^]*from CLAUDE\.md[^]*Use pnpm\./);
    strictEqual(/CLAUDE/.test(await render(false)), false);
    await Deno.remove(`${workspace}/CLAUDE.md`);
    await Deno.symlink(`${workspace}/AGENTS.md`, `${workspace}/CLAUDE.md`);
    const linked = await render(true);
    strictEqual(linked.match(/Use tabs\./g)?.length, 1);
    ok(!linked.includes("CLAUDE.md"));
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});
