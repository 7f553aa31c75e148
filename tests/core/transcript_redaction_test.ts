import { strictEqual } from "node:assert/strict";
import { SessionFile } from "@amber/core/kernel";

Deno.test("the session file leaves nothing of a key that contains another key", async () => {
  const short = "sk-abcdefgh";
  const long = "sk-abcdefgh-0123456789";
  const dir = await Deno.makeTempDir();
  try {
    const file = await SessionFile.create(dir, { id: "s", workspace: "/w" }, [short, long]);
    await file.append({ step: 0, messages: [{ role: "user", content: `${long} ${short}` }] });
    file.close();
    const loaded = await SessionFile.load(dir, "s");
    strictEqual(loaded.messages[0].content, "[redacted] [redacted]");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
