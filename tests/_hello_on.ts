// The hello plugin (the worked example) is off by default so that real models are not offered
// its tool; tests about what a plugin contributes (its tool, its command, its config section)
// switch it on in their config directory first, as `amber plugins enable hello` would.

/** Writes hello's `plugin.conf` in `configDir` saying it is on. */
export async function switchHelloOn(configDir: string): Promise<void> {
  await Deno.mkdir(`${configDir}/plugins/hello`, { recursive: true });
  await Deno.writeTextFile(`${configDir}/plugins/hello/plugin.conf`, "enabled = true\n");
}
