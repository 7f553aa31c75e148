import assert from "node:assert/strict";
import {
  checkPermissions,
  denoPermissionFlags,
  describePermissions,
  exceedsGrant,
  PermissionsError,
} from "@amber/core/sandbox";
import type { PluginPermissions } from "@amber/core";

const WHERE = "plugin 'evil'";

function refused(value: unknown, message: string): void {
  assert.throws(
    () => checkPermissions(value, WHERE),
    (error) => {
      assert.ok(error instanceof PermissionsError);
      assert.equal(error.name, "PermissionsError");
      assert.equal(error.where, WHERE);
      assert.equal(error.message, `${WHERE}: ${message}`);
      return true;
    },
  );
}

Deno.test("checkPermissions accepts every form and returns a frozen copy of the lists given", () => {
  const value = {
    read: [".", "src", "./docs/", "a/../b", "data:", "data:cache"],
    write: ["data:out", "build"],
    net: ["api.example.com", "localhost:8080", "127.0.0.1", "[::1]:9000"],
    env: ["GITHUB_TOKEN", "_x1"],
    run: ["git", "deno", "./bin/tool", "data:bin/helper"],
  };
  const checked = checkPermissions(value, WHERE);
  assert.deepEqual(checked, value);
  assert.ok(Object.isFrozen(checked));
  assert.ok(Object.isFrozen(checked.read));
  assert.notEqual(checked.read, value.read);
  assert.deepEqual(checkPermissions({}, WHERE), {});
  assert.deepEqual(checkPermissions({ env: undefined, net: [] }, WHERE), { net: [] });
});

Deno.test("checkPermissions refuses paths outside the workspace and the data folder", () => {
  const places = "a plugin may ask for paths in the workspace or data:";
  refused(
    { read: ["src", "/etc"] },
    `permissions.read[1] '/etc' is absolute; ${places}`,
  );
  refused({ write: ["../x"] }, `permissions.write[0] '../x' climbs out with ..; ${places}`);
  refused(
    { read: ["src/../../x"] },
    `permissions.read[0] 'src/../../x' climbs out with ..; ${places}`,
  );
  refused(
    { read: ["data:../other"] },
    `permissions.read[0] 'data:../other' climbs out with ..; ${places}`,
  );
  refused({ read: ["data:/etc"] }, `permissions.read[0] 'data:/etc' is absolute; ${places}`);
  refused({ read: ["C:/Windows"] }, `permissions.read[0] 'C:/Windows' is absolute; ${places}`);
  refused({ read: ["file:///etc"] }, `permissions.read[0] 'file:///etc' is absolute; ${places}`);
  refused({ read: ["\\etc"] }, `permissions.read[0] '\\etc' is absolute; ${places}`);
  refused(
    { read: ["src\\x"] },
    "permissions.read[0] 'src\\x' holds a backslash; write paths with /",
  );
  refused(
    { read: ["~/.ssh"] },
    `permissions.read[0] '~/.ssh' points into a home folder; ${places}`,
  );
  refused(
    { read: ["a,b"] },
    "permissions.read[0] 'a,b' holds a comma, which Deno's permission lists cannot carry",
  );
  refused({ read: ["a\nb"] }, "permissions.read[0] 'a\nb' holds a control character");
});

Deno.test("checkPermissions refuses what is not a host, a variable name or a command", () => {
  const host = "is not a host; write host or host:port, without a scheme or a path";
  refused(
    { net: ["https://api.example.com"] },
    `permissions.net[0] 'https://api.example.com' ${host}`,
  );
  refused({ net: ["example.com/path"] }, `permissions.net[0] 'example.com/path' ${host}`);
  refused({ net: ["example.com:"] }, `permissions.net[0] 'example.com:' ${host}`);
  refused({ net: ["exa mple.com"] }, `permissions.net[0] 'exa mple.com' ${host}`);
  refused(
    { net: ["example.com:70000"] },
    "permissions.net[0] 'example.com:70000' has a port outside 1-65535",
  );
  refused(
    { net: ["a.com,b.com"] },
    "permissions.net[0] 'a.com,b.com' holds a comma, which Deno's permission lists cannot carry",
  );
  refused({ env: ["1ABC"] }, "permissions.env[0] '1ABC' is not an environment variable name");
  refused({ env: ["A=B"] }, "permissions.env[0] 'A=B' is not an environment variable name");
  refused(
    { env: ["A,B"] },
    "permissions.env[0] 'A,B' holds a comma, which Deno's permission lists cannot carry",
  );
  refused(
    { run: ["/usr/bin/id"] },
    "permissions.run[0] '/usr/bin/id' is absolute; a command name or a plugin may ask for paths in the workspace or data:",
  );
  refused(
    { run: ["."] },
    "permissions.run[0] '.' is a folder; run takes a command name or the path of a program",
  );
  refused(
    { run: ["data:"] },
    "permissions.run[0] 'data:' is a folder; run takes a command name or the path of a program",
  );
});

Deno.test("checkPermissions refuses a malformed permissions value, naming the field", () => {
  const shape = "permissions must be an object of read, write, net, env and run lists";
  refused(null, shape);
  refused(["read"], shape);
  refused("all", shape);
  refused(
    { sys: ["hostname"] },
    "permissions.sys is not a permission; a plugin may ask for read, write, net, env, run",
  );
  refused({ read: "src" }, "permissions.read must be a list of strings");
  refused({ env: ["HOME", 3] }, "permissions.env[1] must be a non-empty string");
  refused({ read: [""] }, "permissions.read[0] must be a non-empty string");
  refused({ net: ["  "] }, "permissions.net[0] must be a non-empty string");
});

Deno.test("exceedsGrant names each entry asked beyond the grant", () => {
  const granted = {
    read: ["src", "data:cache"],
    write: ["out/", "data:"],
    net: ["example.com", "api.test:8443"],
    env: ["TOKEN"],
    run: ["git", "./bin/tool"],
  };
  assert.deepEqual(
    exceedsGrant({
      read: ["src", "src/a/b.ts", "./src/", "out/x", "data:anything", "data:"],
      write: ["out", "out/deep/file", "data:cache/x"],
      net: ["example.com", "EXAMPLE.com:443", "api.test:8443"],
      env: ["TOKEN"],
      run: ["git", "bin/tool"],
    }, granted),
    [],
  );
  assert.deepEqual(
    exceedsGrant({
      read: ["srcs", "docs", "."],
      write: ["src", "outside"],
      net: ["api.test", "api.test:80", "other.example.com"],
      env: ["token", "HOME"],
      run: ["id", "bin/other", "tool"],
    }, granted),
    [
      "read srcs",
      "read docs",
      "read .",
      "write src",
      "write outside",
      "net api.test",
      "net api.test:80",
      "net other.example.com",
      "env token",
      "env HOME",
      "run id",
      "run bin/other",
      "run tool",
    ],
  );
});

Deno.test("exceedsGrant keeps the workspace and the data folder apart", () => {
  assert.deepEqual(exceedsGrant({ read: ["data:x"] }, { read: ["."] }), ["read data:x"]);
  assert.deepEqual(exceedsGrant({ read: ["x"] }, { read: ["data:"] }), ["read x"]);
  assert.deepEqual(exceedsGrant({ read: ["a/b"] }, { read: ["."] }), []);
  assert.deepEqual(exceedsGrant({}, {}), []);
  assert.deepEqual(exceedsGrant({ net: ["a.com"] }, {}), ["net a.com"]);
});

Deno.test("describePermissions phrases each kind for the prompt", () => {
  assert.deepEqual(describePermissions({}), [
    "nothing: no files, network, environment or commands",
  ]);
  assert.deepEqual(describePermissions({ read: [], net: [] }), [
    "nothing: no files, network, environment or commands",
  ]);
  assert.deepEqual(
    describePermissions({
      read: ["./src/", "data:"],
      write: ["data:out"],
      net: ["api.example.com"],
      env: ["GITHUB_TOKEN", "CI"],
      run: ["git"],
    }),
    [
      "read files: src, its data folder",
      "write files: out in its data folder",
      "connect to: api.example.com",
      "read environment variables: GITHUB_TOKEN, CI",
      "run commands: git (a command runs outside the sandbox, with your user's rights)",
    ],
  );
});

const PLACES = { workspace: "/ws", dataDir: "/cfg/amber/plugins/p/data", readFolders: ["/p/mod"] };

Deno.test("denoPermissionFlags gives exactly the grant, paths resolved, and no empty flag", () => {
  assert.deepEqual(denoPermissionFlags({}, { ...PLACES, readFolders: [] }), []);
  assert.deepEqual(denoPermissionFlags({}, PLACES), ["--allow-read=/p/mod"]);
  assert.deepEqual(
    denoPermissionFlags({
      read: [".", "src", "data:cache"],
      write: ["out", "data:"],
      net: ["api.example.com", "localhost:8080"],
      env: ["TOKEN", "CI"],
      run: ["git", "./bin/tool", "data:bin/helper"],
    }, PLACES),
    [
      "--allow-read=/ws,/ws/src,/cfg/amber/plugins/p/data/cache,/ws/out,/cfg/amber/plugins/p/data,/p/mod",
      "--allow-write=/ws/out,/cfg/amber/plugins/p/data",
      "--allow-net=api.example.com,localhost:8080",
      "--allow-env=TOKEN,CI",
      "--allow-run=git,/ws/bin/tool,/cfg/amber/plugins/p/data/bin/helper",
    ],
  );
  // An empty list is never written: `--allow-net=` would not mean "none".
  assert.deepEqual(
    denoPermissionFlags({ read: [], write: [], net: [], env: [], run: [] }, PLACES),
    ["--allow-read=/p/mod"],
  );
  // The same folder twice is one entry.
  assert.deepEqual(
    denoPermissionFlags({ read: ["src", "./src"] }, { ...PLACES, readFolders: [] }),
    [
      "--allow-read=/ws/src",
    ],
  );
});

Deno.test("denoPermissionFlags refuses a comma anywhere, since Deno splits its lists on them", () => {
  const comma = (places: typeof PLACES, grant: PluginPermissions = { read: ["data:"] }) =>
    assert.throws(() => denoPermissionFlags(grant, places), (error) => {
      assert.ok(error instanceof PermissionsError);
      assert.match(
        error.message,
        /contains a comma, which Deno's --allow-(read|write) list cannot carry/,
      );
      return true;
    });
  comma({ ...PLACES, workspace: "/my,ws" }, { read: ["src"] });
  comma({ ...PLACES, dataDir: "/cfg,x/data" });
  comma({ ...PLACES, dataDir: "/cfg,x/data" }, { write: ["data:"] });
  comma({ ...PLACES, readFolders: ["/plugins/a,b"] }, {});
  assert.throws(() => denoPermissionFlags({ read: ["a,b"] }, PLACES), PermissionsError);
  assert.throws(() => denoPermissionFlags({ net: ["a.com,b.com"] }, PLACES), PermissionsError);
});

Deno.test("denoPermissionFlags checks the grant and wants absolute places", () => {
  assert.throws(() => denoPermissionFlags({ read: ["/etc"] }, PLACES), {
    name: "PermissionsError",
    message: "grant: permissions.read[0] '/etc' is absolute; " +
      "a plugin may ask for paths in the workspace or data:",
  });
  assert.throws(() => denoPermissionFlags({ env: ["*"] }, PLACES), PermissionsError);
  assert.throws(() => denoPermissionFlags({}, { ...PLACES, workspace: "ws" }), {
    message: "grant: the workspace 'ws' is not an absolute path",
  });
  assert.throws(() => denoPermissionFlags({}, { ...PLACES, dataDir: "data" }), {
    message: "grant: the dataDir 'data' is not an absolute path",
  });
  assert.throws(() => denoPermissionFlags({}, { ...PLACES, readFolders: ["p"] }), {
    message: "grant: the read folder 'p' is not an absolute path",
  });
});
