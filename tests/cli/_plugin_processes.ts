// Plugin processes as `ps` shows them: which are alive, whose child each is. The sandbox tests use
// it to find a plugin's process before they kill amber, and to see it gone. (`ps`, not /proc:
// Deno lets only --allow-all read /proc, and the suite runs with --allow-run.)

/** One process, from `ps`. */
export interface ProcessInfo {
  /** Its id. */
  readonly pid: number;
  /** Its parent's id. */
  readonly ppid: number;
  /** The state letters: R, S, D, Z (exited, not yet reaped), ... */
  readonly state: string;
  /** Its command line. */
  readonly command: string;
}

/** The processes `ps` lists with `selection` (`["-e"]` for all, `["-p", pid]` for one). */
async function list(selection: readonly string[]): Promise<ProcessInfo[]> {
  const { stdout } = await new Deno.Command("ps", {
    args: [...selection, "-o", "pid=,ppid=,stat=,args="],
    stdout: "piped",
    stderr: "null",
  }).output();
  const found: ProcessInfo[] = [];
  for (const line of new TextDecoder().decode(stdout).split("\n")) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (match === null) continue;
    const [, pid, ppid, state, command] = match;
    found.push({ pid: Number(pid), ppid: Number(ppid), state, command });
  }
  return found;
}

/** Whether `pid` is a process that has not exited (a zombie has). */
export async function isAlive(pid: number): Promise<boolean> {
  const [info] = await list(["-p", String(pid)]);
  return info !== undefined && !info.state.startsWith("Z");
}

/** Every live process whose command line contains `marker` (e.g. a plugin's folder). */
export async function processesWith(marker: string): Promise<ProcessInfo[]> {
  return (await list(["-e"])).filter((info) =>
    !info.state.startsWith("Z") && info.command.includes(marker) && info.pid !== Deno.pid
  );
}

/** Polls `probe` every 50 ms until it returns a value other than undefined; throws after `ms`. */
export async function until<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  ms = 20_000,
): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
