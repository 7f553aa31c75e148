// The picker `/model`, `/provider` and `/resume` open: typing narrows it, ↑↓ PgUp PgDn Home End
// move the selection, Enter picks and closes the panel, Esc closes it without picking; the
// columns line up under a header that stays on the page.

import assert from "node:assert/strict";
import { PanelView } from "../../cli/tui/panel_view.ts";
import { Picker, type PickerItem } from "../../cli/tui/picker.ts";
import { Screen } from "../../cli/tui/screen.ts";

const key = (name: string, text?: string) => ({
  name,
  text,
  ctrl: false,
  alt: false,
  shift: false,
});

function models(): PickerItem[] {
  return ["claude-sonnet-4-6", "gpt-5.5", "gpt-5.5-mini", "o3", "gemini-3.5-flash"].map((id) => ({
    value: id,
    columns: [id, id.startsWith("gpt") ? "400,000" : "200,000"],
    current: id === "o3",
  }));
}

function picker(picked: string[] = []): Picker {
  const p = new Picker({
    id: "pick-models",
    title: "Models",
    header: ["model", "context"],
    onPick: (value) => picked.push(value),
  });
  p.setItems(models());
  return p;
}

Deno.test("typing narrows the list: every word must appear, in any case, the order kept", () => {
  const p = picker();
  assert.equal(p.selected?.value, "o3", "the selection starts on the one in use");
  for (const char of "GPT") p.key(char);
  assert.deepEqual(p.visible.map((item) => item.value), ["gpt-5.5", "gpt-5.5-mini"]);
  assert.equal(p.selected?.value, "gpt-5.5", "a new filter selects its first match");
  p.key(" ");
  p.key("m");
  assert.deepEqual(p.visible.map((item) => item.value), ["gpt-5.5-mini"]);
  p.key("backspace");
  p.key("backspace");
  assert.equal(p.filter, "GPT");
  p.key("ctrl+u");
  assert.equal(p.filter, "");
  assert.equal(p.visible.length, 5);
  for (const char of "zzz") p.key(char);
  assert.deepEqual(p.visible, []);
  assert.match(p.lines(60).join("\n"), /nothing matches 'zzz'/);
  assert.equal(p.key("enter"), false, "Enter on nothing picks nothing");
});

Deno.test("↑↓ wrap around, PgUp PgDn Home End jump, Enter picks once", () => {
  const picked: string[] = [];
  const p = picker(picked);
  p.key("down");
  assert.equal(p.selected?.value, "gemini-3.5-flash");
  p.key("down");
  assert.equal(p.selected?.value, "claude-sonnet-4-6", "down from the last wraps to the first");
  p.key("up");
  assert.equal(p.selected?.value, "gemini-3.5-flash", "up from the first wraps to the last");
  p.key("home");
  assert.equal(p.selected?.value, "claude-sonnet-4-6");
  p.key("pagedown");
  assert.equal(p.selected?.value, "gemini-3.5-flash", "PgDn stops at the last");
  p.key("pageup");
  assert.equal(p.selected?.value, "claude-sonnet-4-6");
  p.key("end");
  p.key("up");
  assert.equal(p.done, false);
  p.key("enter");
  assert.deepEqual(picked, ["o3"]);
  assert.equal(p.done, true);
  assert.equal(p.key("tab"), false, "a named key that is not the picker's is left alone");
});

Deno.test("a picker opens loading, keeps the selection when its items arrive, and says why some are missing", () => {
  const p = new Picker({ id: "x", title: "X", header: ["model", "context"], onPick: () => {} });
  assert.deepEqual(p.lines(40), ["Filter: ▏", "", "  loading…"]);
  p.key("o");
  p.setItems(models(), ["OPENAI_API_KEY is not set, so openai was not asked"]);
  assert.deepEqual(p.lines(40), [
    "Filter: o▏",
    "OPENAI_API_KEY is not set, so openai was not asked",
    "  model              context",
    "",
    "  claude-sonnet-4-6  200,000",
    "› o3                 200,000",
  ]);
  p.setItems([]);
  assert.match(p.lines(40).at(-1)!, /nothing to pick/);
});

Deno.test("in the panel view: columns line up under a header that stays, Enter closes, Esc closes", () => {
  const items: PickerItem[] = Array.from({ length: 40 }, (_, i) => ({
    value: `m${i}`,
    columns: [`model-${i}`, `${(i + 1) * 1000}`],
  }));
  const picked: string[] = [];
  const p = new Picker({
    id: "pick-models",
    title: "Models of fake",
    header: ["model", "context"],
    onPick: (value) => picked.push(value),
  });
  p.setItems(items);
  const view = new PanelView(p.id, p.source());
  const screen = new Screen(60, 10);
  view.draw(screen);
  const rows = () => Array.from({ length: 10 }, (_, row) => screen.rowText(row).trimEnd());
  assert.equal(rows()[0].trim(), "Models of fake");
  assert.deepEqual(rows().slice(1, 5), [
    " Filter: ▏",
    "   model     context",
    "",
    " › model-0   1000",
  ]);
  assert.match(rows()[9], /^type to filter · ↑↓ select · Enter pick · Esc close/);
  // Far down the list, the header is still on the page above the selection.
  for (let i = 0; i < 30; i++) assert.equal(view.key(key("down")), "handled");
  view.draw(screen);
  assert.equal(rows()[2], "   model     context");
  assert.ok(rows().some((row) => row.startsWith(" › model-30 ")), rows().join("\n"));
  assert.equal(view.key(key("enter")), "close", "a pick closes the panel");
  assert.deepEqual(picked, ["m30"]);
  const other = new PanelView(p.id, picker().source());
  assert.equal(other.key(key("text", "q")), "handled", "q is typed into the filter");
  assert.equal(other.key(key("escape")), "close");
});

Deno.test("names from outside (a provider's model id, a session's first prompt) reach the screen without their control characters", () => {
  const p = new Picker({
    id: "pick-sessions",
    title: "Sessions\x1b[2J",
    header: ["session", "first prompt"],
    onPick: () => {},
  });
  p.setItems([
    { value: "s1", columns: ["s1\x1b[31m", "fix\x1b]52;c;aGk=\x07 it\nnow\rover"] },
  ], ["listing failed: \x1b[H<html>"]);
  const view = new PanelView(p.id, p.source());
  const screen = new Screen(80, 8);
  view.draw(screen);
  const rows = Array.from({ length: 8 }, (_, row) => screen.rowText(row));
  // deno-lint-ignore no-control-regex -- finding control characters is the point
  assert.ok(rows.every((row) => !/[\u0000-\u001f\u007f-\u009f]/.test(row)), rows.join("\n"));
  assert.match(rows.join("\n"), /› s1\[31m +fix\]52;c;aGk= itnowover/);
});
