// Reads a file that lies beside its module but is no module of it: a plugin saved in a folder
// (the workspace, Downloads) must not be able to read the rest of that folder.
import { attacker } from "./_attack.js";

export default attacker(
  "attack_neighbour",
  () => Deno.readTextFile(new URL("./neighbour.txt", import.meta.url)),
);
