import { deepStrictEqual, ok, rejects, strictEqual, throws } from "node:assert/strict";
import {
  createPluginHostApi,
  isSemver,
  pluginFromExport,
  PluginRegistrationError,
  PluginShapeError,
  pluginShapeProblem,
  PluginValidationError,
  validatePlugin,
} from "@amber/core";
import { makePlugin, makeRuntime } from "../_helpers.ts";

// Versions `register` used to accept or refuse differently from `amber plugins add`.
const DISPUTED = ["01.0.0", "1.0.0-", "1.0.0+"];
const INVALID = [
  ...DISPUTED,
  "1.0",
  "v1.0.0",
  "1.00.0",
  "1.0.00",
  "1.0.0-01",
  "1.0.0-rc..1",
  "1.0.0+build..1",
  "1.0.0-rc.1+",
  " 1.0.0",
  "1.0.0 ",
  "",
];
const VALID = [
  "0.0.0",
  "1.0.0",
  "10.20.30",
  "1.0.0-0",
  "1.0.0-rc.1",
  "1.0.0-0a.1",
  "1.0.0-x-y-z.--",
  "1.0.0+build.01",
  "1.0.0-alpha+001",
];

Deno.test("isSemver is strict semver 2.0.0", () => {
  for (const version of INVALID) strictEqual(isSemver(version), false, version);
  for (const version of VALID) strictEqual(isSemver(version), true, version);
});

Deno.test("register refuses 01.0.0, 1.0.0- and 1.0.0+ with the plugin id and the field", () => {
  const { runtime } = makeRuntime();
  for (const version of INVALID) {
    throws(
      () => runtime.register(makePlugin("v", [], { version }), { source: "/p/v.ts" }),
      (error: unknown) => {
        ok(error instanceof PluginValidationError, version);
        ok(error instanceof PluginRegistrationError);
        strictEqual(error.name, "PluginValidationError");
        strictEqual(error.field, "version");
        strictEqual(error.pluginId, "v");
        strictEqual(error.source, "/p/v.ts");
        strictEqual(
          error.message,
          `plugin 'v' (/p/v.ts): version '${version}' is not semver (e.g. 1.0.0)`,
        );
        return true;
      },
    );
  }
  deepStrictEqual(runtime.ids(), []);
  for (const [i, version] of VALID.entries()) {
    runtime.register(makePlugin(`ok_${i}`, [], { version }));
  }
  strictEqual(runtime.ids().length, VALID.length);
});

Deno.test("the loader's check and register's check are the same check", async () => {
  const api = createPluginHostApi("0.1.0");
  for (const version of DISPUTED) {
    const plugin = makePlugin("v", [], { version });
    strictEqual(pluginShapeProblem(plugin), `version '${version}' is not semver (e.g. 1.0.0)`);
    await rejects(pluginFromExport(plugin, api), (error: unknown) => {
      ok(error instanceof PluginShapeError);
      strictEqual(
        error.message,
        `the default export is not a plugin: version '${version}' is not semver (e.g. 1.0.0); ` +
          "export default a plugin, or a function (api) => plugin",
      );
      return true;
    });
  }
  // Whatever one refuses the other refuses, field for field.
  const cases: unknown[] = [
    42,
    null,
    [],
    {},
    { id: "Bad-Id" },
    { id: "x", version: "1.0.0" },
    makePlugin("x", [], { name: " " }),
    makePlugin("x", [], { tick: 1 as unknown as () => void }),
    makePlugin("x", [], { category: 3 as unknown as string }),
    makePlugin("x", [], { requires: { y: 1 as unknown as string } }),
    makePlugin("x", [], { config: {} as never }),
    makePlugin("x", [], { enabledByDefault: "yes" as unknown as boolean }),
  ];
  for (const value of cases) {
    const problem = pluginShapeProblem(value);
    ok(problem !== undefined, JSON.stringify(value));
    throws(() => validatePlugin(value), (error: unknown) => {
      ok(error instanceof PluginValidationError);
      ok(error.message.endsWith(problem!) || error.message.includes(problem!), error.message);
      return true;
    });
    const { runtime } = makeRuntime();
    throws(() => runtime.register(value as never), PluginValidationError);
  }
});

Deno.test("validatePlugin names the plugin, its source and the field", () => {
  throws(() => validatePlugin({ id: "Bad-Id" }, "npm:bad"), (error: unknown) => {
    ok(error instanceof PluginValidationError);
    strictEqual(error.field, "id");
    strictEqual(
      error.message,
      "plugin id 'Bad-Id' is not a slug: use lowercase letters, digits and '_' (npm:bad)",
    );
    return true;
  });
  throws(() => validatePlugin(makePlugin("x", [], { name: "" })), (error: unknown) => {
    ok(error instanceof PluginValidationError);
    strictEqual(error.field, "name");
    strictEqual(error.message, "plugin 'x': name is empty or missing");
    return true;
  });
  throws(() => validatePlugin("nope", "/p/a.ts"), (error: unknown) => {
    ok(error instanceof PluginValidationError);
    strictEqual(error.field, "plugin");
    strictEqual(error.message, "plugin (/p/a.ts): it is a string, not an object");
    return true;
  });
  const plugin = makePlugin("fine");
  strictEqual(validatePlugin(plugin), plugin);
});

Deno.test("registerFailed keeps a version only when it is strict semver", async () => {
  const { runtime } = makeRuntime();
  runtime.registerFailed({ id: "a", reason: "gone", version: "01.0.0" });
  runtime.registerFailed({ id: "b", reason: "gone", version: "1.2.3-rc.1" });
  await runtime.start();
  strictEqual(runtime.info("a").plugin.version, "0.0.0");
  strictEqual(runtime.info("b").plugin.version, "1.2.3-rc.1");
});
