// What loading a fixture plugin into a real plugin process takes in the sandbox tests: its file,
// its id (expected back from the process), a workspace of its own, nothing granted but reading
// the fixture's folder, and an import deadline a loaded machine meets.

/** The `loadSandboxedPlugin` options for the fixture at `fixture` with id `pluginId`. */
export function fixtureProcess(fixture: URL, pluginId: string, workspace: string): {
  specifier: string;
  pluginId: string;
  expectedId: string;
  grant: Record<string, never>;
  workspace: string;
  dataDir: string;
  readFolders: string[];
  hostVersion: string;
  importTimeoutMs: number;
} {
  return {
    specifier: fixture.href,
    pluginId,
    expectedId: pluginId,
    grant: {},
    workspace,
    dataDir: `${workspace}/.data`,
    readFolders: [new URL(".", fixture).pathname],
    hostVersion: "1.0.0",
    importTimeoutMs: 30_000,
  };
}
