// The checked-in OpenAPI document of `amber serve` (cli/serve/openapi.json): valid JSON in
// OpenAPI 3.1 shape, every route of the contract with its method, the bearer auth on all of
// them, problem+json for every error, every $ref pointing at something that exists; and, with
// the real server started in-process, every route it answers is in the document and the
// document is what it serves at /openapi.json.

import assert from "node:assert/strict";
import { makeBundledPlugins } from "@amber/plugins";
import { startServer } from "../../cli/serve/server.ts";

const DOCUMENT = new URL("../../cli/serve/openapi.json", import.meta.url);

interface Operation {
  readonly operationId?: string;
  readonly responses?: Record<string, { readonly $ref?: string; readonly content?: object }>;
  readonly security?: unknown[];
}

type PathItem = Record<string, Operation | unknown>;

interface OpenApi {
  readonly openapi: string;
  readonly info: { readonly title: string; readonly version: string };
  readonly security: Record<string, string[]>[];
  readonly paths: Record<string, PathItem>;
  readonly components: Record<string, Record<string, unknown>>;
}

/** The routes of the contract, as `METHOD path` with the path's templated parameters. */
const CONTRACT: readonly (readonly [string, string, string])[] = [
  ["POST", "/sessions", "201"],
  ["GET", "/sessions", "200"],
  ["GET", "/sessions/{id}", "200"],
  ["DELETE", "/sessions/{id}", "204"],
  ["GET", "/sessions/{id}/transcript", "200"],
  ["POST", "/sessions/{id}/prompt", "202"],
  ["GET", "/sessions/{id}/events", "200"],
  ["POST", "/sessions/{id}/approvals/{requestId}", "204"],
  ["POST", "/sessions/{id}/cancel", "204"],
  ["GET", "/sessions/{id}/plugins", "200"],
  ["POST", "/sessions/{id}/plugins/{pluginId}/enable", "200"],
  ["POST", "/sessions/{id}/plugins/{pluginId}/disable", "200"],
  ["GET", "/openapi.json", "200"],
];

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

async function load(): Promise<OpenApi> {
  return JSON.parse(await Deno.readTextFile(DOCUMENT)) as OpenApi;
}

function operations(doc: OpenApi): [string, string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]): [string, string, Operation] => [
        method.toUpperCase(),
        path,
        op as Operation,
      ])
  );
}

function resolve(doc: OpenApi, ref: string): unknown {
  assert.ok(ref.startsWith("#/"), `${ref} is not local`);
  let node: unknown = doc;
  for (const part of ref.slice(2).split("/")) {
    assert.ok(typeof node === "object" && node !== null && part in node, `${ref} is dangling`);
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function refs(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(refs);
  if (typeof node !== "object" || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === "$ref" && typeof value === "string" ? [value] : refs(value)
  );
}

Deno.test("openapi.json is an OpenAPI 3.1 document with bearer auth", async () => {
  const doc = await load();
  assert.match(doc.openapi, /^3\.1\.\d+$/);
  assert.equal(typeof doc.info.title, "string");
  assert.deepEqual(doc.security, [{ bearer: [] }]);
  assert.deepEqual(doc.components.securitySchemes.bearer, {
    type: "http",
    scheme: "bearer",
    description: (doc.components.securitySchemes.bearer as { description: string }).description,
  });
});

Deno.test("openapi.json describes every route of the contract, and no other", async () => {
  const doc = await load();
  const described = operations(doc).map(([method, path]) => `${method} ${path}`).sort();
  assert.deepEqual(described, CONTRACT.map(([method, path]) => `${method} ${path}`).sort());
  for (const [method, path, status] of CONTRACT) {
    const op = doc.paths[path][method.toLowerCase()] as Operation;
    assert.ok(op.responses?.[status], `${method} ${path} answers ${status}`);
    assert.equal(typeof op.operationId, "string", `${method} ${path} has an operationId`);
    // No route opts out of the document's bearer auth.
    assert.equal(op.security, undefined, `${method} ${path} keeps the bearer auth`);
    assert.ok(op.responses?.["401"], `${method} ${path} can answer 401`);
  }
  const ids = operations(doc).map(([, , op]) => op.operationId);
  assert.equal(new Set(ids).size, ids.length, "operationIds are unique");
});

Deno.test("openapi.json: every error is problem+json and every $ref resolves", async () => {
  const doc = await load();
  for (const ref of refs(doc)) resolve(doc, ref);
  for (const [method, path, op] of operations(doc)) {
    for (const [status, response] of Object.entries(op.responses ?? {})) {
      if (Number(status) < 400) continue;
      const body = response.$ref === undefined ? response : resolve(doc, response.$ref);
      const content = (body as { content: Record<string, { schema: { $ref: string } }> }).content;
      assert.deepEqual(
        Object.keys(content),
        ["application/problem+json"],
        `${method} ${path} ${status}`,
      );
      assert.equal(content["application/problem+json"].schema.$ref, "#/components/schemas/Problem");
    }
  }
  const problem = doc.components.schemas.Problem as { properties: Record<string, unknown> };
  assert.deepEqual(Object.keys(problem.properties).sort(), [
    "detail",
    "field",
    "status",
    "title",
    "type",
  ]);
  const events = doc.paths["/sessions/{id}/events"].get as {
    responses: Record<string, { content: Record<string, unknown> }>;
  };
  assert.ok("text/event-stream" in events.responses["200"].content);
});

Deno.test("openapi.json: path parameters are declared for every templated segment", async () => {
  const doc = await load();
  for (const [path, item] of Object.entries(doc.paths)) {
    const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    const declared = ((item.parameters ?? []) as { $ref?: string; name?: string; in?: string }[])
      .map((p) => (p.$ref === undefined ? p : resolve(doc, p.$ref)) as { name: string; in: string })
      .filter((p) => p.in === "path")
      .map((p) => p.name)
      .sort();
    assert.deepEqual(declared, templated, path);
  }
});

// Every method on every path of the document and the contract (and a few that are in neither), asked of the real
// server: it answers (anything but 405, or a 404 naming no field, which is "no such route") a
// route exactly when the document has it. DELETE /sessions/{id} goes last, as it ends the session.
Deno.test("the server answers exactly the routes openapi.json describes, and serves it", async () => {
  const doc = await load();
  const configDir = await Deno.makeTempDir({ prefix: "amber-openapi-" });
  const workspace = await Deno.makeTempDir({ prefix: "amber-openapi-ws-" });
  await using server = await startServer({
    token: "t",
    plugins: () => makeBundledPlugins(),
    configDir,
    thirdParty: false,
    env: (name) => name === "OPENAI_API_KEY" ? "sk-openapi-test" : undefined,
  });
  try {
    const headers = { authorization: "Bearer t", "content-type": "application/json" };
    const ask = (method: string, path: string) =>
      fetch(`${server.url}${path}`, {
        method,
        headers,
        ...(method === "POST" || method === "PUT" || method === "PATCH" ? { body: "{}" } : {}),
      });
    const created = await fetch(`${server.url}/sessions`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        workspace,
        provider: "openai",
        model: "fake-model",
        baseUrl: "http://127.0.0.1:9/v1",
      }),
    });
    assert.equal(created.status, 201);
    const { id } = await created.json() as { id: string };

    const served = await ask("GET", "/openapi.json");
    assert.deepEqual(await served.json(), doc);

    const paths = [
      ...new Set([...Object.keys(doc.paths), ...CONTRACT.map(([, path]) => path)]),
      "/",
      "/sessions/{id}/nothing",
      "/other",
    ];
    const probes = paths.flatMap((path) =>
      ["GET", "POST", "PUT", "PATCH", "DELETE"].map((method) => [method, path] as const)
    ).sort(([m1, p1], [m2, p2]) =>
      Number(m1 === "DELETE" && p1 === "/sessions/{id}") -
      Number(m2 === "DELETE" && p2 === "/sessions/{id}")
    );
    const documented = new Set(operations(doc).map(([method, path]) => `${method} ${path}`));
    for (const [method, path] of probes) {
      const concrete = path.replace("{id}", id).replace("{requestId}", "r").replace(
        "{pluginId}",
        "no-such-plugin",
      );
      const response = await ask(method, concrete);
      const problem = response.headers.get("content-type") === "application/problem+json"
        ? await response.json() as { field?: string }
        : (await response.body?.cancel(), undefined);
      const answered = response.status !== 405 &&
        !(response.status === 404 && problem?.field === undefined);
      assert.equal(
        answered,
        documented.has(`${method} ${path}`),
        `${method} ${path}: ${response.status} ${JSON.stringify(problem)}`,
      );
    }
  } finally {
    await server.close();
    await Deno.remove(configDir, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
});
