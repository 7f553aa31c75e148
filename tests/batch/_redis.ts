// A real redis-server for a test: on 127.0.0.1, on a free port, in a temp dir, with nothing
// persisted (`--save "" --appendonly no`). `await using redis = await startRedis();` stops it and
// removes the dir at the end of the scope; `redis.url` is what `--queue` takes.

/** A running redis-server. */
export interface TestRedis extends AsyncDisposable {
  /** `redis://127.0.0.1:PORT/0`. */
  readonly url: string;
  /** Its port. */
  readonly port: number;
  /** A URL for another database of the same server. */
  urlFor(db: number): string;
  /** Stops it (SIGTERM, then waits for it to exit) and removes its dir; twice is harmless. */
  stop(): Promise<void>;
}

// A port nobody listens on now; redis-server failing to bind it (a race) is retried.
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

async function accepting(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

async function startOnce(dir: string, port: number): Promise<Deno.ChildProcess | undefined> {
  const child = new Deno.Command(Deno.env.get("REDIS_SERVER") ?? "redis-server", {
    args: [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "no",
      "--daemonize",
      "no",
      "--loglevel",
      "warning",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let exited = false;
  child.status.then(() => exited = true);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (exited) return undefined;
    if (await accepting(port)) return child;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  child.kill("SIGKILL");
  await child.status;
  throw new Error(`redis-server did not accept connections on port ${port} within 10 s`);
}

/** Starts a redis-server for a test. */
export async function startRedis(): Promise<TestRedis> {
  const dir = await Deno.makeTempDir({ prefix: "amber-redis-" });
  let child: Deno.ChildProcess | undefined;
  let port = 0;
  try {
    for (let tries = 0; child === undefined; tries++) {
      if (tries === 5) throw new Error("redis-server would not start (is it installed?)");
      port = freePort();
      child = await startOnce(dir, port);
    }
  } catch (error) {
    await Deno.remove(dir, { recursive: true });
    throw error;
  }
  const running = child;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      try {
        running.kill("SIGTERM");
      } catch {
        // It had already exited.
      }
      await running.status;
      await Deno.remove(dir, { recursive: true });
    })();
  const urlFor = (db: number) => `redis://127.0.0.1:${port}/${db}`;
  return { url: urlFor(0), port, urlFor, stop, [Symbol.asyncDispose]: stop };
}
