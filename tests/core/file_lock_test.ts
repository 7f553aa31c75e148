import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { acquireFileLock, FileLockTimeoutError, withFileLock } from "../../core/file_lock.ts";
import { acquireFileLock as fromPackage } from "@amber/core";

const LOCK_MODULE = fileURLToPath(new URL("../../core/file_lock.ts", import.meta.url));

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** A child deno process that runs `script` with the lock module imported as `lock`. */
function child(script: string): Deno.ChildProcess {
  const source = `import * as lock from ${JSON.stringify(LOCK_MODULE)};\n${script}`;
  return new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", source],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  reader.releaseLock();
  return text.split("\n")[0];
}

Deno.test("file lock: the package exports acquireFileLock", () => {
  assert.equal(fromPackage, acquireFileLock);
});

Deno.test("file lock: a second holder in the same process is refused without waiting", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/plugin.conf`;
  const first = await acquireFileLock(path);
  assert.ok(first);
  assert.equal(first.path, path);
  assert.equal(await acquireFileLock(path, { wait: false }), undefined);
  first.release();
  first.release(); // a second release does nothing
  const second = await acquireFileLock(path, { wait: false });
  assert.ok(second);
  second.release();
  assert.equal(await exists(`${path}.lock`), false, "release removes the lock file");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("file lock: creates the missing directory of the lock file", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/plugins/hello/plugin.conf`;
  const lock = await acquireFileLock(path, { wait: false });
  assert.ok(lock);
  assert.equal(await exists(`${path}.lock`), true);
  lock.release();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("file lock: the timeout error names the file and the holding process", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/amber.lock`;
  const held = await acquireFileLock(path);
  const started = Date.now();
  const error = await acquireFileLock(path, { timeoutMs: 60 }).then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.ok(error instanceof FileLockTimeoutError);
  assert.equal(error.name, "FileLockTimeoutError");
  assert.equal(error.path, path);
  assert.equal(error.holderPid, Deno.pid);
  assert.ok(error.message.includes(path));
  assert.ok(Date.now() - started >= 60);
  held?.release();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("file lock: a waiter gets the lock as soon as the holder releases it", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/session.jsonl`;
  const held = await acquireFileLock(path);
  const waiting = acquireFileLock(path, { timeoutMs: 5_000 });
  setTimeout(() => held?.release(), 30);
  const next = await waiting;
  assert.ok(next);
  next.release();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("file lock: using releases at the end of the block", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/state`;
  {
    using lock = await acquireFileLock(path);
    assert.ok(lock);
    assert.equal(await acquireFileLock(path, { wait: false }), undefined);
  }
  const again = await acquireFileLock(path, { wait: false });
  assert.ok(again);
  again.release();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("file lock: withFileLock releases when the work throws", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/state`;
  await assert.rejects(
    withFileLock(path, () => Promise.reject(new Error("boom"))),
    /boom/,
  );
  const lock = await acquireFileLock(path, { wait: false });
  assert.ok(lock, "the lock was released after the throw");
  lock.release();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("file lock: many in-process read-modify-write cycles lose nothing", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/counter`;
  await Deno.writeTextFile(path, "0");
  const bump = () =>
    withFileLock(path, async () => {
      const value = Number(await Deno.readTextFile(path));
      await new Promise((resolve) => setTimeout(resolve, 0));
      await Deno.writeTextFile(path, String(value + 1));
    });
  await Promise.all(Array.from({ length: 50 }, bump));
  assert.equal(await Deno.readTextFile(path), "50");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("file lock: processes exclude each other and a killed holder frees the lock", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/plugin.conf`;
  const holder = child(
    `const held = await lock.acquireFileLock(${JSON.stringify(path)});
     console.log(held ? "held" : "none");
     await new Promise(() => setInterval(() => {}, 1000));`,
  );
  assert.equal(await firstLine(holder.stdout), "held");
  assert.equal(await acquireFileLock(path, { wait: false }), undefined);
  const error = await acquireFileLock(path, { timeoutMs: 20 }).catch((error) => error);
  assert.ok(error instanceof FileLockTimeoutError);
  assert.equal(error.holderPid, holder.pid);
  holder.kill("SIGKILL");
  await holder.status;
  await holder.stderr.cancel();
  // The kernel drops a dead process's flock; the stale lock file does not block anyone.
  assert.equal(await exists(`${path}.lock`), true);
  const after = await acquireFileLock(path, { wait: false });
  assert.ok(after);
  after.release();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("file lock: concurrent processes incrementing one counter lose nothing", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/counter`;
  await Deno.writeTextFile(path, "0");
  const rounds = 10;
  const workers = Array.from({ length: 6 }, () =>
    child(
      `const path = ${JSON.stringify(path)};
       for (let i = 0; i < ${rounds}; i++) {
         await lock.withFileLock(path, async () => {
           const value = Number(await Deno.readTextFile(path));
           await new Promise((resolve) => setTimeout(resolve, 1));
           await Deno.writeTextFile(path, String(value + 1));
         }, { timeoutMs: 30_000 });
       }`,
    ));
  for (const worker of workers) {
    const output = await worker.output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  }
  assert.equal(await Deno.readTextFile(path), String(6 * rounds));
  assert.equal(await exists(`${path}.lock`), false);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("file lock: callers in one process get the lock in the order they asked", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/state`;
  const order: number[] = [];
  await Promise.all(Array.from({ length: 20 }, (_, i) =>
    withFileLock(path, async () => {
      await new Promise((resolve) => setTimeout(resolve, (20 - i) % 3));
      order.push(i);
    })));
  assert.deepEqual(order, Array.from({ length: 20 }, (_, i) => i));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("file lock: a queued caller that times out does not break the queue", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/state`;
  const first = await acquireFileLock(path);
  const late = acquireFileLock(path, { timeoutMs: 20 });
  const patient = acquireFileLock(path, { timeoutMs: 5_000 });
  await assert.rejects(late, FileLockTimeoutError);
  assert.equal(await acquireFileLock(path, { wait: false }), undefined);
  first?.release();
  const next = await patient;
  assert.ok(next);
  next.release();
  const free = await acquireFileLock(path, { wait: false });
  assert.ok(free, "nothing of the queue is left once everyone has released");
  free.release();
  await Deno.remove(dir, { recursive: true });
});
