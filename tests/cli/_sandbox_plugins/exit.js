// Ends its own process in initialize.
import { attacker } from "./_attack.js";

export default attacker("attack_exit", () => Deno.exit(0));
