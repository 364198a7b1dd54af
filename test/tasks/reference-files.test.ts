/**
 * `iwr tasks validate` names each local file a reference page's markup loads that its
 * folder does not hold (the stylesheet a reference page lost is a 404 when it is scored),
 * and leaves alone what loads nothing: links, icons, markup built by inline scripts,
 * other hosts, and files the site itself failed to serve (recording.json).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { missingReferenceFiles, namedLocalFiles } from "../../src/tasks/reference-files.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-reference-files-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const PAGE = `<!doctype html><html><head>
<link rel="stylesheet" href="css/site.css?v=3"><link rel="icon" href="favicon.ico"><link rel="canonical" href="/home">
<script src="./js/app.js"></script><script>el.innerHTML = '<img src="' + name + '.png">';</script>
</head><body><img src="__PLACEHOLDER_ASSETS_BASE_DIR__/001.png"><img src="__PLACEHOLDER_ASSETS_BASE_DIR__/009.png">
<img src="https://cdn.example.com/x.png"><a href="about.html">about</a><video poster="img/poster%20one.jpg"></video><link rel="stylesheet" href="gone.css">
<!-- <img src="commented.png"> --><template><img src="tpl.png"></template><noscript><link rel="stylesheet" href="noscript.css"></noscript>
<iframe src="frame.html"></iframe><input type="text" data="d.json"><img src=unquoted.png alt=x><link rel=stylesheet href=../css/up.css></body></html>`;

describe("a reference page's local files", () => {
  it("lists the files the markup loads, and only those", () => {
    expect(namedLocalFiles(PAGE).sort()).toEqual([
      "__PLACEHOLDER_ASSETS_BASE_DIR__/001.png",
      "__PLACEHOLDER_ASSETS_BASE_DIR__/009.png",
      "css/site.css",
      "css/up.css",
      "gone.css",
      "img/poster one.jpg",
      "js/app.js",
      "unquoted.png",
    ]);
  });

  it("resolves names against the page's <base>, as the browser does", () => {
    expect(namedLocalFiles('<base href="static/"><script src="app.js"></script><img src="/root.png">').sort()).toEqual(["root.png", "static/app.js"]);
  });

  it("names each one missing from reference/ or assets/, except what the site itself failed to serve", async () => {
    const taskDir = path.join(dir, "1");
    const write = (file: string) => {
      fs.mkdirSync(path.dirname(path.join(taskDir, file)), { recursive: true });
      fs.writeFileSync(path.join(taskDir, file), "x");
    };
    write("reference/index.html");
    fs.writeFileSync(path.join(taskDir, "reference", "index.html"), PAGE);
    write("reference/js/app.js");
    write("reference/img/poster one.jpg");
    write("assets/001.png");
    write("reference/unquoted.png");
    write("reference/css/up.css");
    // The site itself failed to serve gone.css (the notes say so): excused. css/site.css is simply missing.
    fs.writeFileSync(path.join(taskDir, "recording.json"), JSON.stringify({ failedOnSite: ["gone.css"], namedNotLoaded: [] }));
    const problems = await missingReferenceFiles(taskDir, path.join(taskDir, "assets"));
    expect(problems).toEqual([
      expect.stringMatching(/names css\/site\.css, which is not in reference\//),
      expect.stringMatching(/names __PLACEHOLDER_ASSETS_BASE_DIR__\/009\.png, which is not in assets\//),
    ]);
  });
});
