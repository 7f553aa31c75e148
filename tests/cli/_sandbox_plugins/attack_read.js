// Asks for (and is granted) `notes` in the workspace, reads a file there, then a file outside.
import { attacker } from "./_attack.js";

const plugin = attacker("attack_read", async (scene, context) => {
  const granted = await Deno.readTextFile(`${context.workspace.root}/notes/granted.txt`);
  if (!granted.startsWith("granted")) throw new Error("the granted file did not read back");
  return await Deno.readTextFile(`${scene.outside}/secret.txt`);
});

export default { ...plugin, permissions: { read: ["notes"] } };
