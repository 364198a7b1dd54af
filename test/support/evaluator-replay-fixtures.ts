/**
 * Fixtures of the evaluator's replay tests: a small candidate page (a shopping list
 * with similar-looking buttons, a text field and a tall body to scroll), actions in
 * the task schema, and temp folders.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Action } from "../../src/tasks/schema.ts";
import { ActionSchema } from "../../src/tasks/schema.ts";
import type { TaskSetFixtureOptions } from "./tasks-fixtures.ts";

/** The candidate page. `tall: false` leaves nothing to scroll. */
export function shoppingListPage(options: { tall?: boolean } = {}): string {
  const tall = options.tall ?? true;
  return `<!doctype html>
<html><head><title>Shopping list</title>
<style>
  body { font: 18px sans-serif; margin: 24px; background: #fff; color: #111; }
  button { font-size: 16px; margin: 4px; padding: 6px 12px; }
  #add { background: #2a6df4; color: #fff; border: 0; }
  #list li { padding: 4px; }
  ${tall ? ".spacer { height: 2400px; }" : ""}
</style></head>
<body>
  <h1>Shopping list</h1>
  <input id="item" placeholder="New item" aria-label="New item">
  <button class="btn" id="add">Add</button>
  <button class="btn" id="add-favourites">Add favourites</button>
  <button class="btn" id="clear">Clear list</button>
  <ul id="list"></ul>
  <p id="status">0 items</p>
  ${tall ? '<div class="spacer"></div><footer>End of the page</footer>' : ""}
  <script>
    const list = document.getElementById("list");
    const input = document.getElementById("item");
    const status = document.getElementById("status");
    function addItem(text) {
      const li = document.createElement("li");
      li.textContent = text;
      list.appendChild(li);
      status.textContent = list.children.length + " items";
    }
    document.getElementById("add").addEventListener("click", () => { addItem(input.value || "Untitled"); input.value = ""; });
    document.getElementById("add-favourites").addEventListener("click", () => { addItem("Bread"); addItem("Cheese"); });
    document.getElementById("clear").addEventListener("click", () => { list.innerHTML = ""; status.textContent = "0 items"; });
    input.addEventListener("keydown", (event) => { if (event.key === "Enter") { addItem(input.value || "Untitled"); input.value = ""; } });
  </script>
</body></html>`;
}

/** An action as a task line holds it (validated by the real schema). */
export function action(input: { type: Action["type"]; description: string; text?: string; key?: string; assertion?: string; visual?: boolean }): Action {
  return ActionSchema.parse({
    type: input.type,
    parameters: {
      description: input.description,
      ...(input.text !== undefined ? { text: input.text } : {}),
      ...(input.key !== undefined ? { key: input.key } : {}),
    },
    logical_assertion: input.assertion ?? "",
    visual_evaluation_flag: input.visual ?? false,
  });
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `iwr-${prefix}-`));
}

/** Writes `html` as `<dir>/index.html` and returns `dir`. */
export function writeCandidate(dir: string, html: string): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "index.html"), html);
  return dir;
}

/** The shopping-list trajectory as task-set fixture options: type an item, click Add, check the list. */
export const SHOPPING_LIST_TASK_OPTIONS: TaskSetFixtureOptions = {
  width: 640,
  height: 360,
  videoSeconds: 1,
  actions: [
    { type: "Type", parameters: { description: "the 'New item' field", text: "Pears" }, logical_assertion: "", visual_evaluation_flag: false },
    { type: "Click", parameters: { description: "the blue 'Add' button" }, logical_assertion: "The list shows 'Pears'", visual_evaluation_flag: true },
  ],
};
