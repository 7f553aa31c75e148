import assert from "node:assert/strict";
import { anthropicAllowance, anthropicDialect } from "../../providers/anthropic.ts";

Deno.test("anthropic: unified rate-limit headers become 5h and 7d windows", () => {
  const dialect = anthropicDialect();
  const snapshot = dialect.allowanceFromHeaders!(
    new Headers({
      "anthropic-ratelimit-unified-5h-utilization": "0.42",
      "anthropic-ratelimit-unified-5h-reset": "1767225600",
      "anthropic-ratelimit-unified-7d-utilization": "0.051",
      "anthropic-ratelimit-unified-7d-reset": "1767744000",
      "anthropic-ratelimit-unified-status": "allowed",
    }),
  );
  assert.deepEqual(snapshot, {
    windows: [
      { label: "5h", percentUsed: 42, resetsAt: "2026-01-01T00:00:00.000Z" },
      { label: "7d", percentUsed: 5.1, resetsAt: "2026-01-07T00:00:00.000Z" },
    ],
  });
});

Deno.test("anthropic: allowance parsing is lenient and says nothing without the headers", () => {
  const windowOf = (utilization: string, reset?: string) =>
    anthropicAllowance(
      new Headers({
        "anthropic-ratelimit-unified-5h-utilization": utilization,
        ...(reset === undefined ? {} : { "anthropic-ratelimit-unified-5h-reset": reset }),
      }),
    )?.windows[0];
  assert.deepEqual(windowOf("1"), { label: "5h", percentUsed: 100 });
  assert.deepEqual(windowOf("0"), { label: "5h", percentUsed: 0 });
  assert.deepEqual(windowOf("37.5"), { label: "5h", percentUsed: 37.5 });
  assert.deepEqual(windowOf("37.5%"), { label: "5h", percentUsed: 37.5 });
  assert.deepEqual(windowOf("0.5", "1767225600000"), {
    label: "5h",
    percentUsed: 50,
    resetsAt: "2026-01-01T00:00:00.000Z",
  });
  assert.deepEqual(windowOf("0.5", "2026-01-01T00:00:00Z"), {
    label: "5h",
    percentUsed: 50,
    resetsAt: "2026-01-01T00:00:00.000Z",
  });
  assert.equal(windowOf("n/a"), undefined);
  assert.equal(windowOf("-3", "soon"), undefined);
  assert.equal(anthropicAllowance(new Headers()), undefined);
  assert.equal(
    anthropicAllowance(new Headers({ "anthropic-ratelimit-requests-remaining": "10" })),
    undefined,
  );
  assert.deepEqual(
    anthropicAllowance(new Headers({ "anthropic-ratelimit-unified-7d-utilization": "0.9" })),
    { windows: [{ label: "7d", percentUsed: 90 }] },
  );
});
