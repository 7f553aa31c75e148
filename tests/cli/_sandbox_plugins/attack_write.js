// Writes a file outside the workspace.
import { attacker } from "./_attack.js";

export default attacker("attack_write", async (scene) => {
  await Deno.writeTextFile(`${scene.outside}/written.txt`, "written by attack_write\n");
  return "wrote written.txt";
});
