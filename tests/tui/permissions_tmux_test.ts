// In a real terminal (tmux): the approval question for `bash npm test` offers "always for
// commands starting with `npm test` in this workspace"; choosing it writes the rule into the
// workspace's .amber/permissions.yaml, and the next `npm test -- x` runs without a question.
// `/permissions` then lists the rule with where it comes from.

import assert from "node:assert/strict";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { hasTmux, startAmber } from "./_tmux.ts";

const PROMPT = /^›\s*$/m;

Deno.test({
  name: "tmux: the approval saves a command-prefix rule that answers the next call",
  ignore: !hasTmux(),
  async fn() {
    const configDir = await Deno.makeTempDir({ prefix: "amber-perm-" });
    const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-perm-ws-" }));
    await Deno.writeTextFile(
      `${workspace}/package.json`,
      JSON.stringify({ name: "demo", scripts: { test: "echo tests-ran" } }),
    );
    await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
    server.script(
      { toolCalls: [{ id: "c1", name: "bash", arguments: { command: "npm test" } }] },
      { text: "First run finished." },
      { toolCalls: [{ id: "c1", name: "bash", arguments: { command: "npm test -- x" } }] },
      { text: "Second run finished." },
    );
    try {
      await using tmux = await startAmber({
        baseUrl: `${server.url}/v1`,
        configDir,
        workspace,
        columns: 120,
      });
      await tmux.waitFor(PROMPT, "the prompt");
      await tmux.type("run the tests");
      await tmux.keys("Enter");
      const question = await tmux.waitFor(
        /always for commands starting with `npm test` in this workspace/,
        "the prefix choice in the approval question",
      );
      assert.match(
        question,
        /w {2}allow always for commands starting with `npm test`.*\(bash\(npm test \*\)\)/,
      );
      await tmux.type("w");
      await tmux.waitFor(/First run finished\./, "the first answer");
      assert.equal(
        await Deno.readTextFile(`${workspace}/.amber/permissions.yaml`),
        "permissions:\n  allow:\n    - bash(npm test *)\n",
      );
      await tmux.type("and again with x");
      await tmux.keys("Enter");
      // A question would hold the turn: the answer appears only if none was asked.
      const after = await tmux.waitFor(/Second run finished\./, "the second answer, unasked");
      assert.doesNotMatch(after, /Allow bash: \$ npm test -- x/);
      await tmux.type("/permissions");
      await tmux.keys("Enter");
      await tmux.waitFor(
        /allow +bash\(npm test \*\) +\(\.amber\/permissions\.yaml\)/,
        "the saved rule in /permissions",
      );
    } finally {
      await Deno.remove(configDir, { recursive: true }).catch(() => {});
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "tmux: an untrusted workspace file's allow rules are said at start, and /permissions trust applies them",
  ignore: !hasTmux(),
  async fn() {
    const configDir = await Deno.makeTempDir({ prefix: "amber-perm-" });
    const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-perm-ws-" }));
    await Deno.mkdir(`${workspace}/.amber`);
    await Deno.writeTextFile(
      `${workspace}/.amber/permissions.yaml`,
      "permissions:\n  allow: [bash(echo *)]\n",
    );
    await using server = await FakeProvider.start({ encoders: [openaiEncoder] });
    server.script(
      { toolCalls: [{ id: "c1", name: "bash", arguments: { command: "echo trusted-now" } }] },
      { text: "Echo finished." },
    );
    try {
      await using tmux = await startAmber({
        baseUrl: `${server.url}/v1`,
        configDir,
        workspace,
        columns: 140,
      });
      await tmux.waitFor(
        /permissions\.yaml allows bash\(echo \*\): ignored until you trust the file/,
        "the notice at start",
      );
      await tmux.waitFor(PROMPT, "the prompt");
      await tmux.type("/permissions trust");
      await tmux.keys("Enter");
      await tmux.waitFor(/trusted \.amber\/permissions\.yaml as it is now/, "the trust reply");
      await tmux.type("echo something");
      await tmux.keys("Enter");
      const after = await tmux.waitFor(/Echo finished\./, "the answer, with no question asked");
      assert.doesNotMatch(after, /Allow bash/);
    } finally {
      await Deno.remove(configDir, { recursive: true }).catch(() => {});
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
    }
  },
});
