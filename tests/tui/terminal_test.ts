// The terminal is always restored: a normal end, Deno.exit, an uncaught error, an unhandled
// rejection, SIGTERM. Each case runs in its own process with a terminal that records restore().

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { ENTER_SEQUENCE, RESTORE_SEQUENCE } from "../../cli/tui/terminal.ts";

const TERMINAL = fileURLToPath(new URL("../../cli/tui/terminal.ts", import.meta.url));

async function run(ending: string): Promise<{ code: number; out: string; err: string }> {
  const script = `
    import { guardTerminal } from ${JSON.stringify(TERMINAL)};
    const terminal = {
      size: () => ({ columns: 80, rows: 24 }),
      write: () => {},
      start: () => {},
      restore: () => { console.log("RESTORED"); },
    };
    guardTerminal(terminal, () => console.log("INTERRUPTED"));
    console.log("RUNNING");
    ${ending}
  `;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, out: decode(output.stdout), err: decode(output.stderr) };
}

Deno.test("an uncaught error restores the terminal before the report", async () => {
  const result = await run(`setTimeout(() => { throw new Error("boom"); }, 0);`);
  assert.equal(result.out, "RUNNING\nRESTORED\n");
  assert.notEqual(result.code, 0);
  assert.match(result.err, /boom/);
});

Deno.test("an unhandled rejection restores the terminal", async () => {
  const result = await run(`Promise.reject(new Error("rejected"));`);
  assert.match(result.out, /RESTORED/);
  assert.notEqual(result.code, 0);
  assert.match(result.err, /rejected/);
});

Deno.test("Deno.exit and a normal end restore the terminal", async () => {
  assert.match((await run(`Deno.exit(3);`)).out, /RESTORED/);
  const ended = await run(``);
  assert.match(ended.out, /RESTORED/);
  assert.equal(ended.code, 0);
});

Deno.test("SIGTERM restores the terminal and exits 143; SIGINT is an interrupt", async () => {
  const term = await run(
    `setTimeout(() => Deno.kill(Deno.pid, "SIGTERM"), 10); setTimeout(() => {}, 5000);`,
  );
  assert.match(term.out, /RESTORED/);
  assert.equal(term.code, 143);
  const int = await run(
    `setTimeout(() => Deno.kill(Deno.pid, "SIGINT"), 10); setTimeout(() => Deno.exit(0), 200);`,
  );
  assert.match(int.out, /INTERRUPTED/);
});

Deno.test("restoring undoes every mode entering set", () => {
  // Alternate screen, bracketed paste, autowrap and the cursor: each one entered is left.
  for (
    const [on, off] of [["?1049h", "?1049l"], ["?2004h", "?2004l"], ["?7l", "?7h"], [
      "?25l",
      "?25h",
    ]]
  ) {
    assert.ok(ENTER_SEQUENCE.includes(`\x1b[${on}`));
    assert.ok(RESTORE_SEQUENCE.includes(`\x1b[${off}`));
  }
});
