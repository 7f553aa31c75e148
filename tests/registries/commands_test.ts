import { deepStrictEqual, match, ok, strictEqual, throws } from "node:assert/strict";
import type { CommandCapability, CommandOutcome, CommandTreeNode } from "@amber/core";
import { createCommandRegistry } from "@amber/registries/commands";
import { conflictOf, contributionOf, errorOf, services } from "./_fixtures.ts";

const hello: CommandCapability = {
  kind: "command",
  name: "hello",
  root: "hello",
  help: "Say hello",
  man: "Usage: /hello greet <name>",
  subtree: { greet: { help: "Greet someone by name" }, wave: { help: "Wave (not wired yet)" } },
  handlers: { greet: (arg) => `Hello, ${arg || "world"}!` },
};

function command(root: string, overrides: Partial<CommandCapability> = {}): CommandCapability {
  return {
    kind: "command",
    name: root,
    root,
    help: `the ${root} commands`,
    subtree: { run: { help: "run it" } },
    handlers: { run: () => `${root} ran` },
    ...overrides,
  };
}

function errorText(outcome: CommandOutcome): string {
  if (outcome.ok) throw new Error(`expected an error, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

function withCore() {
  return createCommandRegistry({
    coreRoots: {
      help: { help: "Show help", handlers: { "": (arg) => `help for ${arg || "everything"}` } },
      set: {
        help: "Change a setting",
        man: "Usage: /set plugin <id> on|off",
        subtree: { plugin: { help: "Turn a plugin on or off" } },
        handlers: { plugin: (arg) => `set ${arg}` },
      },
    },
  });
}

Deno.test("commands: the seed's hello example dispatches", async () => {
  const commands = createCommandRegistry();
  const handle = contributionOf(commands.install("hello", hello, services("hello")));
  strictEqual(handle.kind, "command");
  strictEqual(handle.name, "hello");
  deepStrictEqual(handle.ids, ["hello"]);
  deepStrictEqual(await commands.dispatch("hello", ["greet"], "amber"), {
    ok: true,
    text: "Hello, amber!",
  });
  deepStrictEqual(await commands.dispatch("/hello", ["greet"], ""), {
    ok: true,
    text: "Hello, world!",
  });
});

Deno.test("commands: the merged tree carries help, man, actions and inert leaves", () => {
  const commands = withCore();
  contributionOf(commands.install("hello", hello, services("hello")));
  const tree = commands.tree();
  deepStrictEqual(tree.map((root) => [root.name, root.owner]), [
    ["help", "core"],
    ["set", "core"],
    ["hello", "hello"],
  ]);
  strictEqual(tree[0].action, "core.help");
  strictEqual(tree[1].action, undefined, "a root with children is not itself executable");
  strictEqual(tree[1].children[0].action, "core.set.plugin");
  const root = tree[2];
  strictEqual(root.path, "");
  strictEqual(root.help, "Say hello");
  strictEqual(root.man, "Usage: /hello greet <name>");
  const [greet, wave] = root.children as CommandTreeNode[];
  deepStrictEqual(greet, {
    name: "greet",
    path: "greet",
    help: "Greet someone by name",
    man: "",
    action: "plugin.hello.hello.greet",
    children: [],
  });
  strictEqual(wave.name, "wave");
  strictEqual(wave.action, undefined, "a leaf without a handler is listed but inert");
  strictEqual(commands.tree(), tree, "cached until something changes");
});

Deno.test("commands: nested leaves get dotted paths and actions", async () => {
  const commands = createCommandRegistry();
  contributionOf(
    commands.install(
      "cfg",
      command("config", {
        subtree: {
          config: { help: "Settings", children: { set: { help: "Set one" }, get: {} } },
        },
        handlers: { "config.set": (arg) => `set ${arg}` },
      }),
      services("cfg"),
    ),
  );
  const node = commands.tree()[0].children[0];
  strictEqual(node.path, "config");
  strictEqual(node.action, undefined);
  deepStrictEqual(node.children.map((child) => [child.path, child.action]), [
    ["config.set", "plugin.cfg.config.config.set"],
    ["config.get", undefined],
  ]);
  deepStrictEqual(await commands.dispatch("config", ["config", "set"], "x=1"), {
    ok: true,
    text: "set x=1",
  });
  strictEqual(
    errorText(await commands.dispatch("config", ["config"], "")),
    "'/config config' needs a subcommand: set, get",
  );
});

Deno.test("commands: toggling a plugin rebuilds the tree at once", async () => {
  const commands = withCore();
  const before = commands.tree();
  const v0 = commands.version;
  const handle = contributionOf(commands.install("hello", hello, services("hello")));
  ok(commands.version > v0);
  const during = commands.tree();
  ok(during !== before);
  deepStrictEqual(during.map((root) => root.name), ["help", "set", "hello"]);
  handle.remove();
  deepStrictEqual(commands.tree().map((root) => root.name), ["help", "set"]);
  match(errorText(await commands.dispatch("hello", ["greet"], "")), /unknown command '\/hello'/);
  const v1 = commands.version;
  handle.remove();
  strictEqual(commands.version, v1, "remove is idempotent");
});

Deno.test("commands: a root colliding with core or another plugin fails naming both", () => {
  const commands = withCore();
  const withRoot = commands.install("x", command("help"), services("x"));
  strictEqual(errorOf(withRoot), "command root '/help' from plugin 'x' collides with core");
  deepStrictEqual(conflictOf(withRoot), { id: "help", owner: "core" });
  contributionOf(commands.install("y", command("deploy"), services("y")));
  const withPlugin = commands.install("x", command("deploy"), services("x"));
  strictEqual(
    errorOf(withPlugin),
    "command root '/deploy' from plugin 'x' collides with plugin 'y'",
  );
  deepStrictEqual(conflictOf(withPlugin), { id: "deploy", owner: "y" });
  deepStrictEqual(commands.entries(), [
    { id: "help", owner: "core" },
    { id: "set", owner: "core" },
    { id: "deploy", owner: "y" },
  ]);
});

Deno.test("commands: a root must be lower-case words", () => {
  const commands = createCommandRegistry();
  for (const root of ["Hello", "", "two words", "/hello", "dot.ted"]) {
    const error = errorOf(commands.install("x", command(root), services("x")));
    match(error, /plugin 'x' is not valid/);
  }
  strictEqual(commands.tree().length, 0);
  throws(() => createCommandRegistry({ coreRoots: { "Bad Root": { help: "" } } }), /not valid/);
});

Deno.test("commands: a handler key must name a leaf of the subtree", () => {
  const commands = createCommandRegistry();
  strictEqual(
    errorOf(
      commands.install("x", command("deploy", { handlers: { runn: () => "" } }), services("x")),
    ),
    "command root '/deploy' from plugin 'x': handler 'runn' names no leaf of its subtree",
  );
  const nested = command("deploy", {
    subtree: { env: { children: { prod: {} } } },
    handlers: { env: () => "" },
  });
  match(
    errorOf(commands.install("x", nested, services("x"))),
    /handler 'env' names 'env', which has subcommands, not a leaf/,
  );
  const notFunction = command("deploy", {
    handlers: { run: "go" as unknown as CommandCapability["handlers"][string] },
  });
  match(
    errorOf(commands.install("x", notFunction, services("x"))),
    /handler 'run' is not a function/,
  );
  const badNode = command("deploy", { subtree: { "a.b": {} }, handlers: {} });
  match(errorOf(commands.install("x", badNode, services("x"))), /node name 'a.b' is not valid/);
  strictEqual(commands.tree().length, 0, "nothing of a refused root stays");
});

Deno.test("commands: dispatch errors list what exists", async () => {
  const commands = withCore();
  contributionOf(commands.install("hello", hello, services("hello")));
  strictEqual(
    errorText(await commands.dispatch("nope", [], "")),
    "unknown command '/nope'; commands: /help, /set, /hello",
  );
  strictEqual(
    errorText(await commands.dispatch("hello", ["shout"], "")),
    "unknown command '/hello shout'; '/hello' has: greet, wave",
  );
  strictEqual(
    errorText(await commands.dispatch("hello", ["greet", "loudly"], "")),
    "unknown command '/hello greet loudly'; '/hello greet' has no subcommands",
  );
  strictEqual(
    errorText(await commands.dispatch("hello", ["wave"], "")),
    "'/hello wave' has no handler",
  );
  strictEqual(
    errorText(await commands.dispatch("hello", [], "")),
    "'/hello' needs a subcommand: greet, wave",
  );
  deepStrictEqual(await commands.dispatch("help", [], "set"), { ok: true, text: "help for set" });
  deepStrictEqual(await commands.dispatch("set", ["plugin"], "hello off"), {
    ok: true,
    text: "set hello off",
  });
});

Deno.test("commands: a throwing, rejecting or silent handler is an error outcome", async () => {
  const commands = createCommandRegistry();
  contributionOf(
    commands.install(
      "x",
      command("bad", {
        subtree: { sync: {}, async: {}, silent: {} },
        handlers: {
          sync: () => {
            throw new Error("no config");
          },
          async: () => Promise.reject(new Error("network down")),
          silent: () => undefined as unknown as string,
        },
      }),
      services("x"),
    ),
  );
  strictEqual(
    errorText(await commands.dispatch("bad", ["sync"], "")),
    "'/bad sync' failed: no config",
  );
  strictEqual(
    errorText(await commands.dispatch("bad", ["async"], "")),
    "'/bad async' failed: network down",
  );
  match(
    errorText(await commands.dispatch("bad", ["silent"], "")),
    /'\/bad silent' failed: .*undefined/,
  );
});

Deno.test("commands: dispatch resolves the handler from the live registry", async () => {
  const commands = createCommandRegistry();
  const first = contributionOf(
    commands.install("a", command("deploy", { handlers: { run: () => "a ran" } }), services("a")),
  );
  strictEqual((await commands.dispatch("deploy", ["run"], "")).ok, true);
  first.remove();
  contributionOf(
    commands.install("b", command("deploy", { handlers: { run: () => "b ran" } }), services("b")),
  );
  deepStrictEqual(await commands.dispatch("deploy", ["run"], ""), { ok: true, text: "b ran" });
  strictEqual(commands.tree()[0].children[0].action, "plugin.b.deploy.run");
  first.remove();
  strictEqual(commands.tree().length, 1, "a stale handle leaves the new owner's root alone");
});

Deno.test("commands: a plugin root that is its own leaf runs the '' handler", async () => {
  const commands = createCommandRegistry();
  contributionOf(
    commands.install(
      "todo",
      command("todo", { subtree: {}, handlers: { "": () => "3 todos" } }),
      services("todo"),
    ),
  );
  strictEqual(commands.tree()[0].action, "plugin.todo.todo");
  deepStrictEqual(await commands.dispatch("todo", [], ""), { ok: true, text: "3 todos" });
});

Deno.test("commands: purge removes plugin roots but never the fixed core roots", () => {
  const commands = withCore();
  contributionOf(commands.install("a", command("one"), services("a")));
  contributionOf(commands.install("b", command("two"), services("b")));
  contributionOf(commands.install("a", command("three"), services("a")));
  deepStrictEqual(commands.purge("a"), ["one", "three"]);
  deepStrictEqual(commands.tree().map((root) => root.name), ["help", "set", "two"]);
  deepStrictEqual(commands.purge("core"), []);
  deepStrictEqual(commands.tree().map((root) => root.name), ["help", "set", "two"]);
});
