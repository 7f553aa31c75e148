import assert from "node:assert/strict";
import { getJsonWithBearer, getWithBearer } from "@amber/providers";

interface Recorded {
  readonly path: string;
  readonly headers: Headers;
}

interface TestServer {
  readonly url: string;
  readonly requests: Recorded[];
  readonly server: Deno.HttpServer<Deno.NetAddr>;
}

function serve(handler: (request: Request) => Response | Promise<Response>): TestServer {
  const requests: Recorded[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    requests.push({ path: new URL(request.url).pathname, headers: request.headers });
    return handler(request);
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, requests, server };
}

Deno.test("a 2xx body comes back and the token goes out as a bearer credential", async () => {
  const { url, requests, server } = serve(() => new Response("balance: 12.34"));
  try {
    assert.equal(await getWithBearer(`${url}/v1/key`, "sk-secret"), "balance: 12.34");
    assert.equal(requests.length, 1);
    assert.equal(requests[0].path, "/v1/key");
    assert.equal(requests[0].headers.get("authorization"), "Bearer sk-secret");
  } finally {
    await server.shutdown();
  }
});

Deno.test("extra headers are sent along", async () => {
  const { url, requests, server } = serve(() => new Response("ok"));
  try {
    await getWithBearer(url, "t", { headers: { "x-title": "amber" } });
    assert.equal(requests[0].headers.get("x-title"), "amber");
    assert.equal(requests[0].headers.get("authorization"), "Bearer t");
  } finally {
    await server.shutdown();
  }
});

Deno.test("a non-2xx status reads as undefined", async () => {
  const { url, requests, server } = serve((request) => {
    const path = new URL(request.url).pathname;
    if (path === "/401") return new Response("bad key", { status: 401 });
    if (path === "/500") return new Response("down", { status: 500 });
    return new Response(null, { status: 404 });
  });
  try {
    assert.equal(await getWithBearer(`${url}/401`, "sk-wrong"), undefined);
    assert.equal(await getWithBearer(`${url}/500`, "sk"), undefined);
    assert.equal(await getWithBearer(`${url}/404`, "sk"), undefined);
    assert.equal(requests.length, 3);
    assert.equal(requests[0].headers.get("authorization"), "Bearer sk-wrong");
  } finally {
    await server.shutdown();
  }
});

Deno.test("an empty token sends no credential header at all", async () => {
  const { url, requests, server } = serve(() => new Response("public"));
  try {
    assert.equal(await getWithBearer(url, ""), "public");
    assert.equal(await getWithBearer(url, undefined), "public");
    assert.equal(await getWithBearer(url, "   "), "public");
    assert.equal(await getWithBearer(url, "", { headers: { Authorization: "Bearer " } }), "public");
    assert.equal(await getWithBearer(url, "", { headers: { authorization: "" } }), "public");
    assert.equal(requests.length, 5);
    for (const request of requests) assert.equal(request.headers.has("authorization"), false);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a server slower than the timeout reads as undefined", async () => {
  // The handler answers only once the test has seen the client give up.
  const release = Promise.withResolvers<void>();
  const { url, requests, server } = serve(async () => {
    await release.promise;
    return new Response("too late");
  });
  try {
    // The handler answers only after this resolves, so undefined here means the client gave up.
    assert.equal(await getWithBearer(url, "sk", { timeoutMs: 100 }), undefined);
    assert.equal(requests.length, 1);
  } finally {
    release.resolve();
    await server.shutdown();
  }
});

Deno.test("an aborted request reads as undefined", async () => {
  const started = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const { url, server } = serve(async () => {
    started.resolve();
    await release.promise;
    return new Response("too late");
  });
  try {
    const controller = new AbortController();
    const pending = getWithBearer(url, "sk", { signal: controller.signal });
    await started.promise;
    controller.abort();
    assert.equal(await pending, undefined);
    const already = new AbortController();
    already.abort();
    assert.equal(await getWithBearer(url, "sk", { signal: already.signal }), undefined);
  } finally {
    release.resolve();
    await server.shutdown();
  }
});

Deno.test("a closed port reads as undefined", async () => {
  const { url, server } = serve(() => new Response("gone"));
  await server.shutdown();
  assert.equal(await getWithBearer(`${url}/v1/key`, "sk"), undefined);
});

Deno.test("a bad URL or header value reads as undefined and nothing is thrown", async () => {
  assert.equal(await getWithBearer("not a url", "sk"), undefined);
  assert.equal(await getWithBearer("ftp://127.0.0.1/file", "sk"), undefined);
  assert.equal(await getWithBearer(42 as unknown as string, "sk"), undefined);
  const { url, requests, server } = serve(() => new Response("ok"));
  try {
    assert.equal(await getWithBearer(url, "sk\r\nx-injected: 1"), undefined);
    assert.equal(requests.length, 0, "an invalid header is refused before anything is sent");
  } finally {
    await server.shutdown();
  }
});

Deno.test("nothing is logged, so the token cannot leak through a log", async () => {
  const lines: unknown[] = [];
  const saved = { log: console.log, error: console.error, warn: console.warn, info: console.info };
  const capture = (...args: unknown[]): void => {
    lines.push(args);
  };
  console.log =
    console.error =
    console.warn =
    console.info =
      capture;
  const { url, server } = serve(() => new Response("no", { status: 403 }));
  try {
    await getWithBearer(url, "sk-very-secret");
    await getWithBearer("http://127.0.0.1:1/", "sk-very-secret");
  } finally {
    Object.assign(console, saved);
    await server.shutdown();
  }
  assert.deepEqual(lines, []);
});

Deno.test("the credential is not carried across a redirect to another origin", async () => {
  const target = serve(() => new Response("moved here"));
  const origin = serve(() => Response.redirect(`${target.url}/elsewhere`, 302));
  try {
    assert.equal(await getWithBearer(`${origin.url}/v1/key`, "sk-secret"), "moved here");
    assert.equal(origin.requests[0].headers.get("authorization"), "Bearer sk-secret");
    assert.equal(target.requests[0].headers.has("authorization"), false);
  } finally {
    await origin.server.shutdown();
    await target.server.shutdown();
  }
});

Deno.test("getJsonWithBearer parses JSON and reads anything else as undefined", async () => {
  const { url, requests, server } = serve((request) => {
    const path = new URL(request.url).pathname;
    if (path === "/json") return Response.json({ data: { total: 12.5 } });
    if (path === "/text") return new Response("not json {");
    return new Response("{}", { status: 401 });
  });
  try {
    assert.deepEqual(await getJsonWithBearer(`${url}/json`, "sk"), { data: { total: 12.5 } });
    assert.equal(requests[0].headers.get("accept"), "application/json");
    assert.equal(requests[0].headers.get("authorization"), "Bearer sk");
    assert.equal(await getJsonWithBearer(`${url}/text`, "sk"), undefined);
    assert.equal(await getJsonWithBearer(`${url}/denied`, "sk"), undefined);
    await getJsonWithBearer(`${url}/json`, "", { headers: { Accept: "application/vnd.api+json" } });
    assert.equal(requests[3].headers.get("accept"), "application/vnd.api+json");
    assert.equal(requests[3].headers.has("authorization"), false);
  } finally {
    await server.shutdown();
  }
});
