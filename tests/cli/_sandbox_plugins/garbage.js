// Writes to its stdout, which is the protocol, then waits.
import { attacker } from "./_attack.js";

export default attacker("attack_garbage", () => {
  Deno.stdout.writeSync(new TextEncoder().encode("GARBAGE: not a JSON-RPC message\n"));
  return new Promise(() => {});
});
