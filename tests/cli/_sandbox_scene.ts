// The stage the sandbox tests play on: a workspace, a config directory, a folder outside both
// that holds a secret, the fixture plugins copied to a folder of their own, a fake model, a
// listener on 127.0.0.1 that counts who connects, and the provider key in amber's environment.

import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { PluginPermissions } from "@amber/core";
import { FakeProvider, openaiEncoder } from "@amber/providers/testing";
import { computeModuleGraph } from "../../cli/module_graph.ts";
import { lockEntry, sha256, writeLock } from "./_plugin_lock.ts";
import { MAIN, PERMISSIONS, type Result } from "./_subprocess.ts";

const FIXTURES = fileURLToPath(new URL("./_sandbox_plugins/", import.meta.url));

/** Everything one sandbox test runs against; disposing it closes and removes everything. */
export interface Scene extends AsyncDisposable {
  /** The workspace amber runs in (`notes/granted.txt` is in it). */
  readonly work: string;
  /** amber's config directory. */
  readonly config: string;
  /** A folder outside the workspace: `secret.txt` is there, and attackers try to write here. */
  readonly outside: string;
  /** The copies of the fixture plugins (`tests/cli/_sandbox_plugins`). */
  readonly plugins: string;
  /** The value of OPENAI_API_KEY in amber's environment. */
  readonly key: string;
  /** The text of `outside/secret.txt`. */
  readonly secret: string;
  /** The fake model. */
  readonly server: FakeProvider;
  /** The port of the listener on 127.0.0.1. */
  readonly port: number;
  /** How many connections the listener has accepted. */
  connections(): number;
}

/** Sets the stage. */
export async function openScene(): Promise<Scene> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "amber-sandbox-" }));
  const work = join(root, "work");
  const config = join(root, "config");
  const outside = join(root, "outside");
  const plugins = join(root, "plugins");
  for (const dir of [join(work, "notes"), config, outside, plugins]) {
    await Deno.mkdir(dir, { recursive: true });
  }
  for await (const entry of Deno.readDir(FIXTURES)) {
    if (entry.isFile) await Deno.copyFile(join(FIXTURES, entry.name), join(plugins, entry.name));
  }
  const unique = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
  const key = `sk-sandbox-${unique}`;
  const secret = `outside-secret-${unique}`;
  await Deno.writeTextFile(join(outside, "secret.txt"), secret);
  await Deno.writeTextFile(join(work, "notes", "granted.txt"), "granted to attack_read\n");
  const server = await FakeProvider.start({ encoders: [openaiEncoder] });
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  const accepting = (async () => {
    try {
      for await (const connection of listener) {
        connections++;
        connection.close();
      }
    } catch {
      // Closed.
    }
  })();
  return {
    work,
    config,
    outside,
    plugins,
    key,
    secret,
    server,
    port: listener.addr.port,
    connections: () => connections,
    async [Symbol.asyncDispose]() {
      listener.close();
      await accepting;
      await server.close();
      await Deno.remove(root, { recursive: true });
    },
  };
}

/**
 * Starts `amber <args>` in the scene's workspace, with the key in its environment and
 * `deno task amber`'s leave to run programs (a sandboxed plugin's process is one); its output
 * piped, or dropped.
 */
export function spawnAmber(
  scene: Scene,
  args: readonly string[],
  output: "piped" | "null" = "piped",
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, "--allow-run", MAIN, ...args],
    cwd: scene.work,
    env: {
      NO_COLOR: "1",
      AMBER_CONFIG_DIR: scene.config,
      INIT_CWD: scene.work,
      OPENAI_API_KEY: scene.key,
    },
    stdin: "null",
    stdout: output,
    stderr: output,
  }).spawn();
}

/**
 * Runs `amber <args>` as {@linkcode spawnAmber} starts it. An amber that has not exited after
 * `limitMs` (a plugin hung it) is killed, and the result says so.
 */
export async function amberIn(
  scene: Scene,
  args: readonly string[],
  limitMs = 120_000,
): Promise<Result> {
  const child = spawnAmber(scene, args);
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    child.kill("SIGKILL");
  }, limitMs);
  const output = await child.output();
  clearTimeout(timer);
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes).trimEnd();
  const err = text(output.stderr);
  return {
    code: output.code,
    out: text(output.stdout),
    err: late ? `${err}\n(killed: amber ${args[0]} had not exited after ${limitMs} ms)` : err,
  };
}

/** `amber plugins add <fixture> <options>`, which must succeed. */
export async function addFixture(
  scene: Scene,
  fixture: string,
  ...options: string[]
): Promise<void> {
  const added = await amberIn(scene, ["plugins", "add", join(scene.plugins, fixture), ...options]);
  if (added.code !== 0) {
    throw new Error(`amber plugins add ${fixture} exited with ${added.code}: ${added.err}`);
  }
}

/**
 * Records `fixture` as plugin `id` in the lock by hand, as `amber plugins add` would with `grant`
 * (its module graph included): the lock format is documented. Quicker than `add`, which starts
 * every plugin added so far, and the way to record a module `add` refuses (one that throws at
 * import).
 */
export async function lockFixture(
  scene: Scene,
  id: string,
  fixture: string,
  grant?: PluginPermissions,
): Promise<void> {
  const file = join(scene.plugins, fixture);
  let entries: ReturnType<typeof lockEntry>[] = [];
  try {
    entries = JSON.parse(await Deno.readTextFile(join(scene.config, "plugins.lock.json"))).plugins;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const entry = {
    ...lockEntry(id, file, await sha256(file)),
    graph: await computeModuleGraph(pathToFileURL(file).href, scene.plugins),
    ...(grant === undefined ? {} : { grant }),
  };
  await writeLock(scene.config, [...entries, entry]);
}

/**
 * Writes config.yaml (JSON is YAML): the section of each of `ids` is the scene (`{outside, port}`),
 * and `timeouts` as given.
 */
export async function writeConfig(
  scene: Scene,
  ids: readonly string[],
  timeouts: Record<string, unknown> = {},
): Promise<void> {
  const section = { outside: scene.outside, port: scene.port };
  const plugins = Object.fromEntries(ids.map((id) => [id, section]));
  await Deno.writeTextFile(
    join(scene.config, "config.yaml"),
    JSON.stringify({ timeouts, plugins }, null, 2),
  );
}

/** `text` reversed, as the attackers show what they got (`_sandbox_plugins/_attack.js`). */
export function reversed(text: string): string {
  return [...text].reverse().join("");
}

/** Whether `path` exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
