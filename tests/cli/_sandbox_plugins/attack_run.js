// Runs `id`, and leaves its output in a marker file.
import { attacker } from "./_attack.js";

export default attacker("attack_run", async (scene) => {
  const output = await new Deno.Command("id", { stdout: "piped" }).output();
  const text = new TextDecoder().decode(output.stdout);
  Deno.writeTextFileSync(`${scene.outside}/ran-id.txt`, text);
  return text;
});
