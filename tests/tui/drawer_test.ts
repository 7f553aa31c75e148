// The command drawer and the slash engine over the live command tree: completions filter as the
// user types, a plugin's commands come and go with the plugin, and a typed line dispatches to
// the handler the registry holds at that moment.

import assert from "node:assert/strict";
import { PluginRuntime } from "@amber/core";
import { createHelloPlugin } from "@amber/plugins/hello";
import { createRegistries } from "@amber/registries";
import { createCommandRegistry } from "@amber/registries/commands";
import { commandEntries, Drawer, matchEntries } from "../../cli/tui/drawer.ts";
import { plainText } from "../../cli/tui/lines.ts";
import { parseSlash, runSlash } from "../../cli/tui/slash.ts";
import { tuiCommands } from "../../cli/tui/core_commands.ts";
import { coreServices, installCore } from "../../cli/core_contributions.ts";

async function harness() {
  const registries = createRegistries();
  // Every plugin on: hello, the worked example, is off by default.
  const runtime = new PluginRuntime({ registries, allOn: true });
  // Core's commands install as the host installs them: for owner "core", before any plugin.
  installCore(registries, coreServices(runtime, "/", {}), [
    ...tuiCommands(() => undefined),
    {
      kind: "command",
      name: "set",
      root: "set",
      help: "Change a setting",
      subtree: { plugin: { help: "Turn a plugin on or off" } },
      handlers: { plugin: () => "" },
    },
  ], true);
  runtime.register(createHelloPlugin());
  await runtime.start();
  return { registries, runtime };
}

const lines = (drawer: Drawer) => drawer.match.entries.map((e) => e.line);

Deno.test("the entries are every leaf of the live tree, with help", async () => {
  const { registries } = await harness();
  const entries = commandEntries(registries.command.tree());
  const hello = entries.find((e) => e.line === "/hello greet");
  assert.ok(hello, "plugin commands are listed with their full path");
  assert.equal(hello.help, "Greet someone by name");
  assert.equal(hello.owner, "hello");
  assert.ok(entries.some((e) => e.line === "/set plugin"));
  assert.ok(
    !entries.some((e) => e.line === "/set"),
    "a root with children is listed by its leaves",
  );
  assert.ok(entries.some((e) => e.line === "/quit" && e.executable));
});

Deno.test("typing filters the entries; a trailing space asks for the next word", () => {
  const entry = (line: string) => ({
    words: line.slice(1).split(" "),
    line,
    help: "",
    man: "",
    executable: true,
    owner: "core",
  });
  const entries = ["/help", "/hello greet", "/hello wave", "/set plugin", "/sessions"].map(entry);
  const match = (input: string) => matchEntries(entries, input).entries.map((e) => e.line);
  assert.deepEqual(match("/"), entries.map((e) => e.line));
  assert.deepEqual(match("/he"), ["/help", "/hello greet", "/hello wave"]);
  assert.deepEqual(match("/hello "), ["/hello greet", "/hello wave"]);
  assert.deepEqual(match("/hello w"), ["/hello wave"]);
  assert.deepEqual(match("/se"), ["/set plugin", "/sessions"]);
  assert.deepEqual(match("/nope"), []);
  assert.deepEqual(match("hello"), [], "not a command");
  const past = matchEntries(entries, "/set plugin off hello");
  assert.equal(past.argumentOf?.line, "/set plugin", "an argument is being typed");
});

Deno.test("a plugin's commands leave the drawer when it is switched off, and come back", async () => {
  const { registries, runtime } = await harness();
  const drawer = new Drawer();
  drawer.update(registries.command.tree(), "/");
  assert.ok(lines(drawer).includes("/hello greet"));
  await runtime.setState("hello", false);
  drawer.update(registries.command.tree(), "/");
  assert.ok(!lines(drawer).includes("/hello greet"));
  assert.deepEqual(await runSlash(registries.command, "/hello greet amber"), {
    ok: false,
    error:
      "unknown command '/hello'; commands: /help, /plugins, /panel, /mcp, /model, /provider, " +
      "/sessions, /resume, /compact, /clear, /quit, /set",
  });
  await runtime.setState("hello", true);
  drawer.update(registries.command.tree(), "/");
  assert.ok(lines(drawer).includes("/hello greet"));
  assert.deepEqual(await runSlash(registries.command, "/hello greet amber"), {
    ok: true,
    text: "Hello, amber!",
  });
});

Deno.test("selection, completion and dismissal", async () => {
  const { registries } = await harness();
  const tree = registries.command.tree();
  const drawer = new Drawer();
  drawer.update(tree, "/he");
  assert.equal(drawer.completion(), "/hello greet");
  drawer.move(1);
  assert.equal(drawer.completion(), "/help");
  drawer.move(1);
  assert.equal(drawer.completion(), "/hello greet", "the selection wraps around");
  drawer.dismiss();
  assert.equal(drawer.open, false);
  drawer.update(tree, "/hel");
  assert.equal(drawer.open, true, "typing opens it again");
  drawer.update(tree, "/hello greet Ada");
  assert.equal(drawer.completion(), undefined, "past the command: nothing to complete");
  const shown = drawer.lines(60, 5).map(plainText);
  assert.match(shown[0], /\/hello greet {2}Greet someone by name/);
  assert.match(
    shown[1],
    /Usage: \/hello greet <name>/,
    "the manual shows while typing the argument",
  );
});

Deno.test("the drawer keeps the selection in view and says when nothing matches", async () => {
  const { registries } = await harness();
  const drawer = new Drawer();
  drawer.update(registries.command.tree(), "/");
  for (let i = 0; i < 8; i++) drawer.move(1);
  const shown = drawer.lines(50, 3).map(plainText);
  assert.equal(shown.length, 3);
  assert.ok(shown.some((line) => line.includes(drawer.selected!.line)));
  drawer.update(registries.command.tree(), "/zzz");
  assert.deepEqual(drawer.lines(50, 3).map(plainText), ["  no command matches"]);
});

Deno.test("a command line splits into root, path and argument against the tree", () => {
  const commands = createCommandRegistry({
    coreRoots: {
      set: { help: "", subtree: { plugin: { help: "" } }, handlers: { plugin: (a) => a } },
    },
  });
  const tree = commands.tree();
  assert.deepEqual(parseSlash("/set plugin off  hello ", tree), {
    root: "set",
    path: ["plugin"],
    arg: "off  hello",
  });
  assert.deepEqual(parseSlash("/set nope", tree), { root: "set", path: [], arg: "nope" });
  assert.equal(parseSlash("no slash", tree), undefined);
  assert.equal(parseSlash("/", tree), undefined);
});
