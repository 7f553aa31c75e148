/**
 * A stand-in plugin process for the tests of `core/sandbox/process.ts`: it speaks the protocol's
 * peer on stdin/stdout and misbehaves on request. The last argument picks how it starts:
 * `serve` (answers), `throw` (throws at import), `garbage` (prints to stdout first),
 * `stubborn` (keeps running after its stdin closes).
 *
 * @module
 */

import { RpcPeer } from "@amber/core/sandbox";

const mode = Deno.args.at(-1);
if (mode === "throw") throw new Error("boom at import");
if (mode === "garbage") console.log("hello from a careless plugin");

const peer = new RpcPeer({ input: Deno.stdin.readable, output: Deno.stdout.writable });
type Params = Record<string, unknown>;
peer.handle("echo", (params) => params);
peer.handle("pid", () => Deno.pid);
peer.handle("spin", () => {
  while (true) {
    // A plugin that never yields: only a kill ends it.
  }
});
peer.handle("hog", () => {
  const kept: number[][] = [];
  while (true) kept.push(new Array(1_000_000).fill(kept.length));
});
peer.handle("exit", (params) => {
  console.error("Error: boom");
  Deno.exit((params as Params).code as number);
});
peer.handle("print", (params) => {
  console.log((params as Params).text);
  return true;
});
peer.handle("log", (params) => {
  for (const line of (params as Params).lines as string[]) console.error(line);
  return true;
});
peer.handle("progress", async (params, call) => {
  for (const value of (params as Params).values as unknown[]) call.progress(value);
  await new Promise((done) => setTimeout(done, 10));
  return "done";
});
peer.handle("env", (params) => Deno.env.get((params as Params).name as string) ?? null);
peer.handle("read", (params) => Deno.readTextFile((params as Params).path as string));
peer.handle("write", async (params) => {
  await Deno.writeTextFile((params as Params).path as string, "written");
  return true;
});
peer.handle("connect", async (params) => {
  const connection = await Deno.connect({
    hostname: "127.0.0.1",
    port: (params as Params).port as number,
  });
  connection.close();
  return true;
});
peer.handle("run", async (params) => {
  const output = await new Deno.Command((params as Params).command as string).output();
  return output.code;
});

await peer.closed;
if (mode === "stubborn") setInterval(() => {}, 1_000);
else Deno.exit(0);
