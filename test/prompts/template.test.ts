import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import { loadPrompt, PROMPTS_DIR, parsePrompt, renderPrompt } from "../../src/prompts/template.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-prompts-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function writePrompt(name: string, contents: string): void {
  fs.writeFileSync(path.join(dir, `${name}.md`), contents);
}

function failure(run: () => unknown): IwrError {
  try {
    run();
  } catch (error) {
    if (error instanceof IwrError) return error;
    throw error;
  }
  throw new Error("expected an IwrError");
}

describe("prompt templates", () => {
  it("renders declared variables and returns the file's sha256", () => {
    const contents = "---\nname: greet\nvariables: [who, times]\n---\nHello {{who}}, {{ times }} times. Bye {{who}}.\n";
    writePrompt("greet", contents);
    const prompt = loadPrompt("greet", dir);
    expect(prompt.variables).toEqual(["who", "times"]);
    const rendered = renderPrompt(prompt, { who: "Ada", times: 3 });
    expect(rendered.text).toBe("Hello Ada, 3 times. Bye Ada.\n");
    expect(rendered.hash).toBe(createHash("sha256").update(contents).digest("hex"));
    // Stable: same file, same hash, whatever the values.
    expect(renderPrompt(loadPrompt("greet", dir), { who: "Bob", times: 1 }).hash).toBe(rendered.hash);
  });

  it("changes the hash when the wording changes", () => {
    const a = parsePrompt("---\nname: a\nvariables: [x]\n---\nUse {{x}}.\n", "a.md");
    const b = parsePrompt("---\nname: a\nvariables: [x]\n---\nUse {{x}} now.\n", "a.md");
    expect(a.hash).not.toBe(b.hash);
  });

  it("fails on a missing value, naming the variable", () => {
    const prompt = parsePrompt("---\nname: p\nvariables: [width, height]\n---\n{{width}}x{{height}}\n", "p.md");
    const error = failure(() => renderPrompt(prompt, { width: 10 }));
    expect(error.code).toBe("PROMPT");
    expect(error.message).toBe("p.md: missing value(s) for variable(s): height");
  });

  it("fails on a value the template does not declare", () => {
    const prompt = parsePrompt("---\nname: p\nvariables: [width]\n---\n{{width}}\n", "p.md");
    expect(failure(() => renderPrompt(prompt, { width: 10, depth: 3 })).message).toBe(
      "p.md: value(s) given for variable(s) the template does not declare: depth",
    );
  });

  it("fails on a declared variable the text never uses, and on an undeclared slot", () => {
    expect(failure(() => parsePrompt("---\nname: p\nvariables: [width, unused]\n---\n{{width}}\n", "p.md")).message).toBe(
      "p.md: declared variable(s) never used in the text: unused",
    );
    expect(failure(() => parsePrompt("---\nname: p\nvariables: [width]\n---\n{{width}} {{height}}\n", "p.md")).message).toBe(
      "p.md: the text uses undeclared variable(s): height",
    );
  });

  it("fails when the rendered text still holds a {{...}} slot", () => {
    const prompt = parsePrompt("---\nname: p\nvariables: [x]\n---\nvalue: {{x}}\n", "p.md");
    expect(failure(() => renderPrompt(prompt, { x: "{{ y }}" })).message).toBe("p.md: rendered text still holds '{{ y }}'");
    const malformed = parsePrompt("---\nname: q\nvariables: []\n---\nbroken {{ not a name }}\n", "q.md");
    expect(failure(() => renderPrompt(malformed, {})).message).toContain("rendered text still holds '{{ not a name }}'");
  });

  it("fails on a file without front matter and on a name that does not match the file", () => {
    expect(failure(() => parsePrompt("no front matter {{x}}", "n.md")).message).toContain("expected a front-matter block");
    writePrompt("other", "---\nname: different\nvariables: []\n---\ntext\n");
    expect(failure(() => loadPrompt("other", dir)).message).toContain("name: expected 'other' (the file's name), got 'different'");
    expect(failure(() => loadPrompt("absent", dir)).message).toContain("prompt 'absent' not found");
  });

  it("ships a generate prompt that renders with the protocol's values", () => {
    const prompt = loadPrompt("generate");
    expect(prompt.file).toBe(path.join(PROMPTS_DIR, "generate.md"));
    const { text } = renderPrompt(prompt, {
      width: 1280,
      height: 720,
      sheet_count: 2,
      frame_count: 10,
      assets_placeholder: "__PLACEHOLDER_ASSETS_BASE_DIR__",
    });
    expect(text).toContain("1280x720");
    expect(text).toContain("`btn`");
    expect(text).toContain("__PLACEHOLDER_ASSETS_BASE_DIR__/");
    expect(text).toContain("```html");
  });
});
