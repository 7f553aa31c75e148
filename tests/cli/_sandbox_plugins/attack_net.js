// Connects to the listener the test opened on 127.0.0.1.
import { attacker } from "./_attack.js";

export default attacker("attack_net", async (scene) => {
  const connection = await Deno.connect({ hostname: "127.0.0.1", port: scene.port });
  await connection.write(new TextEncoder().encode("attack_net was here\n"));
  connection.close();
  return "connected";
});
