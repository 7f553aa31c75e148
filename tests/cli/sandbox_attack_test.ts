// The "done when", as an attacker tries it: third-party plugins (tests/cli/_sandbox_plugins)
// that read the provider key, read a file outside their grant, write a file, connect to a
// listener, run `id`, spin in initialize, spin in a tool, exit, throw at import and print garbage
// on stdout are each stopped with a diagnostic naming the plugin and the step, while `amber run`
// (a real subprocess against a fake model) finishes its turn with a good sandboxed plugin's tool.
// The same attacks, added `--trusted`, get through: the checks can see a sandbox that leaks.
// A changed imported file is refused: tests/cli/lock_graph_test.ts covers it in full; a test here
// checks that the refused module never starts a plugin process. Two more ways in are closed: the
// key through a wallet or allowance declared for another plugin's provider, and the files beside
// a plugin's module that are no module of it.

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import type { Result } from "./_subprocess.ts";
import { processesWith } from "./_plugin_processes.ts";
import {
  addFixture,
  amberIn,
  exists,
  lockFixture,
  openScene,
  reversed,
  type Scene,
  writeConfig,
} from "./_sandbox_scene.ts";

// The attacks that need only permissions amber itself has, and what gives each away.
const LEAKS = ["env", "read", "write", "net", "run"] as const;
type Leak = typeof LEAKS[number];

// Whether each attack got what it went for: anywhere in amber's output or the model's requests
// (reversed, the way the attackers show loot, or as it is), or on disk, or at the listener.
async function leaked(scene: Scene, result: Result): Promise<Record<Leak, boolean>> {
  const seen = [result.out, result.err, ...scene.server.chats.map((c) => JSON.stringify(c.body))]
    .join("\n");
  const shows = (text: string) => seen.includes(text) || seen.includes(reversed(text));
  const loot = (id: string) => exists(join(scene.outside, `loot-${id}.txt`));
  return {
    env: shows(scene.key) || await loot("attack_env"),
    read: shows(scene.secret) || await loot("attack_read"),
    write: await exists(join(scene.outside, "written.txt")),
    net: scene.connections() > 0,
    run: seen.includes("uid=") || seen.includes(reversed("uid=")) ||
      await exists(join(scene.outside, "ran-id.txt")),
  };
}

// Each attacker: its fixture, and what its diagnostics must say (the step and what was refused).
const ATTACKERS: Record<string, { readonly fixture: string; readonly says: readonly RegExp[] }> = {
  attack_env: {
    fixture: "attack_env.js",
    says: [/initialize/, /env access to "OPENAI_API_KEY"/],
  },
  attack_read: {
    fixture: "attack_read.js",
    says: [/initialize/, /read access to "[^"]*\/outside\/secret\.txt"/],
  },
  attack_write: {
    fixture: "attack_write.js",
    says: [/initialize/, /write access to "[^"]*\/outside\/written\.txt"/],
  },
  attack_net: {
    fixture: "attack_net.js",
    says: [/initialize/, /net access to "127\.0\.0\.1:\d+"/],
  },
  attack_run: { fixture: "attack_run.js", says: [/initialize/, /run access to "id"/] },
  attack_spin_init: { fixture: "spin_init.js", says: [/initialize/, /1000 ms/] },
  attack_exit: { fixture: "exit.js", says: [/initialize/, /exited with code 0/] },
  attack_import: {
    fixture: "throw_import.js",
    says: [/\(load\): .*throw_import\.js/, /attack_import refuses to load/],
  },
  attack_garbage: {
    fixture: "garbage.js",
    says: [/initialize/, /not the protocol: 'GARBAGE: not a JSON-RPC message'/],
  },
  // The kernel cancels it at 1000 ms; its process is killed when the grace is over too.
  attack_spin_tool: {
    fixture: "spin_tool.js",
    says: [/spin_forever/, /within 1\d{3} ms/, /its process was killed/],
  },
};

// Short deadlines for the two that spin, so the test takes seconds; generous ones for the rest,
// whose processes start side by side on a machine that may be busy.
const TIMEOUTS = {
  import: 20_000,
  initialize: 20_000,
  plugins: {
    attack_spin_init: { initialize: 1000 },
    // The grace is the time the kill of its process has to end the call: 200 ms was not enough
    // on a loaded machine, and a tool still running after it ends the turn (as designed).
    attack_spin_tool: { tool: 1000, toolGrace: 3000 },
  },
};

// The lines of `err` that are about plugin `id`.
function diagnosticsOf(err: string, id: string): string {
  return err.split("\n").filter((line) => line.includes(`plugin '${id}'`)).join("\n");
}

// The tool results the model was sent in its last request.
function toolResults(scene: Scene): string[] {
  const body = scene.server.chats.at(-1)?.body as {
    messages?: { role: string; content: string }[];
  };
  return (body?.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));
}

Deno.test("every attack of a sandboxed plugin is stopped with a diagnostic naming it, and amber run finishes its turn with the good plugin's tool", async () => {
  await using scene = await openScene();
  // The good plugin and the one with a grant are added as a user adds them; the rest are
  // recorded as `add` would (it cannot add the one that throws at import).
  await addFixture(scene, "good.js");
  await addFixture(scene, ATTACKERS.attack_read.fixture, "--grant");
  for (const [id, { fixture }] of Object.entries(ATTACKERS)) {
    if (id !== "attack_read") await lockFixture(scene, id, fixture);
  }
  // The attackers lie low until their sections set the scene.
  await writeConfig(scene, Object.keys(ATTACKERS), TIMEOUTS);
  // The spinning tool is called twice: the second call finds its process killed.
  scene.server.script(
    {
      toolCalls: [
        { name: "good_echo", arguments: { text: "hi" } },
        { name: "spin_forever", arguments: {} },
      ],
    },
    { toolCalls: [{ name: "spin_forever", arguments: {} }] },
    { text: "All done." },
  );

  const started = performance.now();
  const result = await amberIn(scene, [
    "run",
    "go",
    "--approve",
    "auto",
    "--base-url",
    `${scene.server.url}/v1`,
  ]);
  const seconds = (performance.now() - started) / 1000;

  strictEqual(result.code, 0, result.err);
  strictEqual(result.out, "All done.");
  strictEqual(scene.server.chats.length, 3, "the turn went on after the tools");
  const [echo, spun, again] = toolResults(scene);
  match(echo, /^good says hi \(pid \d+\)$/);
  match(spun, /tool 'spin_forever' of plugin 'attack_spin_tool' did not finish within 1000 ms/);
  // The next step finds the killed plugin either still listed (its call is refused as not
  // running) or already gone from the step's environment (no such tool): which one depends on
  // when the kill reaches the registry, and either way the tool does not run again.
  match(
    again,
    /plugin 'attack_spin_tool' is not running: its process was killed|there is no tool 'spin_forever'/,
  );
  for (const [id, { says }] of Object.entries(ATTACKERS)) {
    const lines = diagnosticsOf(result.err, id);
    ok(lines !== "", `no diagnostic names plugin '${id}':\n${result.err}`);
    for (const pattern of says) match(lines, pattern, `plugin '${id}': ${lines}`);
  }
  deepStrictEqual(await leaked(scene, result), {
    env: false,
    read: false,
    write: false,
    net: false,
    run: false,
  });
  ok(!result.err.includes(scene.key) && !result.out.includes(scene.key), "the key as it is");
  // Nothing the attackers asked for was written, and no plugin process outlived amber.
  deepStrictEqual([...Deno.readDirSync(scene.outside)].map((e) => e.name), ["secret.txt"]);
  deepStrictEqual(await processesWith(scene.plugins), []);
  // The spinning plugins cost their deadlines, not the test's: a hung start would take minutes.
  ok(seconds < 90, `amber run took ${seconds.toFixed(1)} s`);
});

Deno.test("the same attacks added --trusted run inside amber and get through: the checks see a leak", async () => {
  await using scene = await openScene();
  const trusted = ["attack_env", "attack_read", "attack_write", "attack_net", "attack_run"];
  for (const id of trusted) await addFixture(scene, ATTACKERS[id].fixture, "--trusted");
  await writeConfig(scene, trusted);
  scene.server.script({ text: "All done." });
  // In-process, a plugin has amber's own permissions: running `id` included.
  const result = await amberIn(scene, ["run", "go", "--base-url", `${scene.server.url}/v1`]);
  strictEqual(result.code, 0, result.err);
  strictEqual(result.out, "All done.");
  deepStrictEqual(await leaked(scene, result), {
    env: true,
    read: true,
    write: true,
    net: true,
    run: true,
  });
  strictEqual(
    await Deno.readTextFile(join(scene.outside, "loot-attack_env.txt")),
    reversed(scene.key),
  );
  // In-process, a plugin's failure still names it, with what it got.
  match(diagnosticsOf(result.err, "attack_write"), /attack_write got through/);
});

Deno.test("a changed imported file of a sandboxed plugin is refused before any process starts", async () => {
  await using scene = await openScene();
  await addFixture(scene, "good.js");
  const words = join(scene.plugins, "_good_words.js");
  // Were it loaded, its process would end at once saying so.
  await Deno.writeTextFile(
    words,
    'throw new Error("the changed module ran");\nexport const says = (text) => text;\n',
  );
  const list = await amberIn(scene, ["plugins", "list"]);
  strictEqual(list.code, 0, list.err);
  ok(
    list.out.includes(
      `failed: ${words}: refused: plugin 'good' imports it and it changed since it was added; ` +
        "run `amber plugins update good` to accept it",
    ),
    list.out,
  );
  ok(!`${list.out}\n${list.err}`.includes("the changed module ran"), list.err);
  deepStrictEqual(await processesWith(scene.plugins), []);
});

Deno.test("a sandboxed plugin's wallet and allowance for a provider it does not own are given no key", async () => {
  await using scene = await openScene();
  await lockFixture(scene, "attack_wallet", "attack_wallet.js");
  // `amber wallet` asks the wallet and the allowance of the provider in use (openai) for its
  // numbers: one a sandboxed plugin declared for a provider another plugin owns.
  const result = await amberIn(scene, ["wallet"]);
  strictEqual(result.code, 0, result.err);
  match(result.out, /^provider: openai /m);
  // They were asked (so a key they were given would show), and were given none.
  match(diagnosticsOf(result.err, "attack_wallet"), /wallet got no key/);
  match(diagnosticsOf(result.err, "attack_wallet"), /allowance got no key/);
  strictEqual((await leaked(scene, result)).env, false);
});

Deno.test("a sandboxed plugin cannot read the files beside its module that are no module of it", async () => {
  await using scene = await openScene();
  const neighbour = join(scene.plugins, "neighbour.txt");
  await Deno.writeTextFile(neighbour, scene.secret);
  await lockFixture(scene, "attack_neighbour", "attack_neighbour.js");
  await writeConfig(scene, ["attack_neighbour"]);
  const result = await amberIn(scene, ["plugins", "list"]);
  strictEqual(result.code, 0, result.err);
  const lines = diagnosticsOf(result.err, "attack_neighbour");
  match(lines, /initialize/);
  ok(lines.includes(`read access to "${neighbour}"`), lines);
  strictEqual((await leaked(scene, result)).read, false);
});
