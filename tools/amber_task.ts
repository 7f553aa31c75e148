// What `deno task amber` runs amber with, read from a checkout's deno.json: for the terminal tests,
// which run amber as its users do, and for the start-up benchmark, which runs every checkout it is
// given as that checkout's own task did.

/**
 * The flags `deno task amber` in the checkout at `root` passes to `deno run` before
 * `cli/main.ts`, its permissions (`--allow-*`) left out: whoever calls this grants its own. Empty
 * for a checkout whose task has none.
 */
export function amberTaskFlags(root: string): string[] {
  const config = JSON.parse(Deno.readTextFileSync(`${root.replace(/\/$/, "")}/deno.json`));
  const task = String(config.tasks?.amber ?? "");
  const run = /deno run (.*?)cli\/main\.ts/.exec(task)?.[1] ?? "";
  return run.split(/\s+/).filter((flag) => flag.startsWith("--") && !flag.startsWith("--allow-"));
}
