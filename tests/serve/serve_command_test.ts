// `amber serve` as a user starts it: a real subprocess of cli/main.ts that prints its URL and
// token, answers on them, warns about a non-loopback address and closes on SIGTERM.

import assert from "node:assert/strict";
import { MAIN, PERMISSIONS } from "../cli/_subprocess.ts";

interface Started {
  readonly child: Deno.ChildProcess;
  readonly lines: string[];
  readonly err: Promise<string>;
}

// Starts `amber serve ARGS` and reads stdout up to its two lines (URL, token).
async function start(
  args: readonly string[],
  env: Record<string, string>,
  permissions: readonly string[] = PERMISSIONS,
): Promise<Started> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, MAIN, "serve", ...args],
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const err = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (text.split("\n").length < 3) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  reader.releaseLock();
  // The rest of stdout is drained so that the child never blocks on it.
  child.stdout.pipeTo(new WritableStream()).catch(() => {});
  return { child, lines: text.trim().split("\n"), err };
}

Deno.test("amber serve prints its URL and a generated token and stops on SIGTERM", async () => {
  const configDir = await Deno.makeTempDir({ prefix: "amber-serve-cmd-" });
  try {
    const { child, lines, err } = await start(["--port", "0", "--config-dir", configDir], {
      AMBER_SERVE_TOKEN: "",
    });
    const url = lines[0].match(/^amber: serving on (http:\/\/127\.0\.0\.1:\d+)$/)?.[1];
    const token = lines[1].match(/^amber: token ([0-9a-f]{64})$/)?.[1];
    assert.ok(url !== undefined && token !== undefined, lines.join("\n"));
    const ok = await fetch(`${url}/sessions`, { headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual(await ok.json(), { sessions: [] });
    const refused = await fetch(`${url}/sessions`, { headers: { authorization: "Bearer x" } });
    assert.equal(refused.status, 401);
    await refused.body?.cancel();
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 143);
    assert.match(await err, /closing the sessions/);
  } finally {
    await Deno.remove(configDir, { recursive: true });
  }
});

Deno.test("amber serve takes AMBER_SERVE_TOKEN without printing it, and warns off loopback", async () => {
  const configDir = await Deno.makeTempDir({ prefix: "amber-serve-cmd-" });
  try {
    const { child, lines, err } = await start(
      ["--host", "0.0.0.0", "--port", "0", "--config-dir", configDir],
      { AMBER_SERVE_TOKEN: "from-the-environment" },
      PERMISSIONS.map((flag) => flag.startsWith("--allow-net=") ? `${flag},0.0.0.0` : flag),
    );
    assert.equal(lines[1], "amber: token from AMBER_SERVE_TOKEN");
    assert.ok(!lines.join("\n").includes("from-the-environment"));
    const port = lines[0].match(/:(\d+)$/)![1];
    const ok = await fetch(`http://127.0.0.1:${port}/sessions`, {
      headers: { authorization: "Bearer from-the-environment" },
    });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    child.kill("SIGTERM");
    await child.status;
    assert.match(await err, /warning: serving on 0\.0\.0\.0, not loopback/);
  } finally {
    await Deno.remove(configDir, { recursive: true });
  }
});

Deno.test("amber serve refuses a port out of range", async () => {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, MAIN, "serve", "--port", "70000"],
    env: { NO_COLOR: "1" },
  }).output();
  assert.equal(code, 2);
  assert.match(new TextDecoder().decode(stderr), /--port must be a whole number from 0 to 65535/);
});
