import path from "node:path";
import { describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import { assetsBasePath, extractPageFromReply } from "../../src/generation/page-from-reply.ts";

const PAGE = '<!DOCTYPE html>\n<html><body><img src="__PLACEHOLDER_ASSETS_BASE_DIR__/001.png" width="10" height="10"></body></html>';

describe("extractPageFromReply", () => {
  it("takes the first fenced html block and resolves the assets placeholder", () => {
    const reply = `Here you go:\n\`\`\`html\n${PAGE}\n\`\`\`\nand another:\n\`\`\`html\n<p>second</p>\n\`\`\``;
    expect(extractPageFromReply(reply, "../../assets")).toBe(
      '<!DOCTYPE html>\n<html><body><img src="../../assets/001.png" width="10" height="10"></body></html>\n',
    );
  });

  it("keeps an unterminated block (a reply cut off at the token limit)", () => {
    expect(extractPageFromReply("```HTML\n<html><body>half", "a")).toBe("<html><body>half\n");
  });

  it("falls back to the raw reply when it is HTML without fences, stripping stray fences", () => {
    expect(extractPageFromReply("<html><body>x</body></html>\n```", ".")).toBe("<html><body>x</body></html>\n");
  });

  it("removes every iframe, closed or not", () => {
    const reply = '```html\n<div>a<iframe src="https://x">inner</iframe>b<IFRAME src=y>c</div>\n```';
    expect(extractPageFromReply(reply, ".")).toBe("<div>abc</div>\n");
  });

  it("fails with MODEL_REPLY when the reply holds no HTML", () => {
    const error = (() => {
      try {
        extractPageFromReply("I cannot help with that.", ".");
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(IwrError);
    expect((error as IwrError).code).toBe("MODEL_REPLY");
    expect((error as IwrError).message).toMatch(/^reply contains no HTML/);
    expect(() => extractPageFromReply("```html\n\n```", ".")).toThrow(/no HTML/);
  });
});

describe("assetsBasePath", () => {
  it("is the relative path from the output folder to the assets, with / separators", () => {
    const root = path.resolve("/data/results");
    expect(assetsBasePath(path.join(root, "3", "gpt-4o"), path.resolve("/data/tasks/iwr/3/assets"))).toBe("../../../tasks/iwr/3/assets");
    expect(assetsBasePath(root, root)).toBe(".");
  });
});
