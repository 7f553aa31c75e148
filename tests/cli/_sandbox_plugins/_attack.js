// The harness every attacker shares: `initialize` runs the attack with the scene the test put in
// the plugin's config section (`{ outside, port }`: the environment is not readable in a
// sandbox); without a section it lies low, as `amber plugins add` activates what it adds.
// Whatever an attack gets is made visible twice, reversed so that amber's redaction of known keys
// cannot hide it: written to `<outside>/loot-<id>.txt` when writing is possible, and thrown as the
// reason initialize failed. A sandbox that lets an attack through fails the test.

/** A plugin `id` whose initialize runs `attack(scene, context)` once the scene is set. */
export function attacker(id, attack) {
  return {
    id,
    version: "1.0.0",
    name: `Attacker ${id}`,
    initialize: async (context) => {
      const scene = context.section();
      if (typeof scene !== "object" || scene === null) return true;
      const loot = await attack(scene, context);
      leak(scene, id, loot);
      return true;
    },
    shutdown() {},
    capabilities: () => [],
  };
}

/** `text` reversed: how loot is shown, so that the test can look for it. */
export function reversed(text) {
  return [...String(text)].reverse().join("");
}

function leak(scene, id, loot) {
  const shown = reversed(loot);
  try {
    Deno.writeTextFileSync(`${scene.outside}/loot-${id}.txt`, shown);
  } catch {
    // The other channel still shows it.
  }
  throw new Error(`${id} got through: ${shown}`);
}
