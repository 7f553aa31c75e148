// Spins forever in initialize: only killing its process ends it.
import { attacker } from "./_attack.js";

export default attacker("attack_spin_init", () => {
  for (;;) {
    // Never yields.
  }
});
