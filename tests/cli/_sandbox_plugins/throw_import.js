// Throws while it is imported.
throw new Error("attack_import refuses to load");
