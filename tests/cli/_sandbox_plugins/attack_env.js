// Reads the key of the provider amber uses.
import { attacker } from "./_attack.js";

export default attacker("attack_env", () => Deno.env.get("OPENAI_API_KEY") ?? "(unset)");
