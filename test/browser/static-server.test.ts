import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StaticServer, startStaticServer } from "../../src/browser/static-server.ts";
import { IwrError } from "../../src/errors.ts";
import { makeTempDir, rawRequest } from "../support/browser-fixtures.ts";

const VIDEO_BYTES = Buffer.from(Array.from({ length: 100 }, (_, i) => i));

describe("static server", () => {
  let base: string;
  let site: string;
  let assets: string;
  let server: StaticServer;

  beforeAll(async () => {
    base = makeTempDir("static");
    site = path.join(base, "site");
    assets = path.join(base, "task-assets");
    fs.mkdirSync(path.join(site, "nested"), { recursive: true });
    fs.mkdirSync(path.join(site, "assets"), { recursive: true });
    fs.mkdirSync(assets);
    fs.writeFileSync(path.join(site, "index.html"), "<h1>root index</h1>");
    fs.writeFileSync(path.join(site, "nested", "index.html"), "<h1>nested index</h1>");
    fs.writeFileSync(path.join(site, "clip.mp4"), VIDEO_BYTES);
    fs.writeFileSync(path.join(site, "assets", "only-in-site.png"), "site copy");
    fs.writeFileSync(path.join(assets, "logo.png"), "task asset");
    fs.writeFileSync(path.join(base, "secret.txt"), "top secret");
    fs.symlinkSync(path.join(base, "secret.txt"), path.join(site, "link-out.txt"));
    server = await startStaticServer({
      mounts: [
        { urlPath: "/", dir: site },
        { urlPath: "/assets", dir: assets },
      ],
    });
  });

  afterAll(async () => {
    await server.close();
    fs.rmSync(base, { recursive: true, force: true });
  });

  it("listens on 127.0.0.1 only and reports its mounts, longest prefix first", () => {
    expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.mounts.map((mount) => mount.urlPath)).toEqual(["/assets/", "/"]);
    expect(server.root).toBe(fs.realpathSync(site));
    expect(server.url("nested/index.html")).toBe(`${server.origin}/nested/index.html`);
    expect(server.url("a b.html")).toBe(`${server.origin}/a%20b.html`);
  });

  it("serves files with their content type, folders by index.html, and redirects a folder without its slash", async () => {
    const root = await rawRequest(server.origin, "/");
    expect(root.status).toBe(200);
    expect(root.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(root.body.toString()).toBe("<h1>root index</h1>");
    expect((await rawRequest(server.origin, "/nested/")).body.toString()).toBe("<h1>nested index</h1>");
    const redirect = await rawRequest(server.origin, "/nested");
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe("/nested/");
    const video = await rawRequest(server.origin, "/clip.mp4?cache=1");
    expect(video.headers["content-type"]).toBe("video/mp4");
    expect(video.headers["accept-ranges"]).toBe("bytes");
    expect(video.body.equals(VIDEO_BYTES)).toBe(true);
  });

  it("answers 404 for a missing file and 405 for other methods", async () => {
    expect((await rawRequest(server.origin, "/missing.html")).status).toBe(404);
    expect((await rawRequest(server.origin, "/index.html", { method: "POST" })).status).toBe(405);
  });

  it("serves byte ranges: explicit, open-ended and suffix; 416 past the end", async () => {
    const middle = await rawRequest(server.origin, "/clip.mp4", { headers: { Range: "bytes=10-19" } });
    expect(middle.status).toBe(206);
    expect(middle.headers["content-range"]).toBe("bytes 10-19/100");
    expect(middle.headers["content-length"]).toBe("10");
    expect([...middle.body]).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);

    const openEnded = await rawRequest(server.origin, "/clip.mp4", { headers: { Range: "bytes=95-" } });
    expect(openEnded.headers["content-range"]).toBe("bytes 95-99/100");
    expect([...openEnded.body]).toEqual([95, 96, 97, 98, 99]);

    const suffix = await rawRequest(server.origin, "/clip.mp4", { headers: { Range: "bytes=-3" } });
    expect(suffix.status).toBe(206);
    expect(suffix.headers["content-range"]).toBe("bytes 97-99/100");
    expect([...suffix.body]).toEqual([97, 98, 99]);

    const clipped = await rawRequest(server.origin, "/clip.mp4", { headers: { Range: "bytes=90-500" } });
    expect(clipped.headers["content-range"]).toBe("bytes 90-99/100");

    for (const range of ["bytes=100-", "bytes=150-160", "bytes=-0", "bytes=9-2", "items=0-1"]) {
      const refused = await rawRequest(server.origin, "/clip.mp4", { headers: { Range: range } });
      expect(refused.status, range).toBe(416);
      expect(refused.headers["content-range"], range).toBe("bytes */100");
    }

    const head = await rawRequest(server.origin, "/clip.mp4", { method: "HEAD", headers: { Range: "bytes=0-9" } });
    expect(head.status).toBe(206);
    expect(head.body.length).toBe(0);
  });

  it("refuses every way out of the mounted folders with 403", async () => {
    const attempts = [
      "/../secret.txt",
      "/nested/../../secret.txt",
      "/%2e%2e/secret.txt",
      "/%2E%2E/%2e%2e/secret.txt",
      "/assets/%2e%2e/logo.png",
      "/..%2fsecret.txt",
      "/..\\secret.txt",
      "/..%5csecret.txt",
      "/nested%5c..%5c..%5csecret.txt",
      "/index.html%00.png",
      "/%E0%A4%A",
      "/link-out.txt",
    ];
    for (const attempt of attempts) {
      const response = await rawRequest(server.origin, attempt);
      expect(response.status, attempt).toBe(403);
      expect(response.body.toString(), attempt).not.toContain("top secret");
    }
  });

  it("sends a mounted prefix to its own folder, with no fall-through to the root folder", async () => {
    const asset = await rawRequest(server.origin, "/assets/logo.png");
    expect(asset.status).toBe(200);
    expect(asset.body.toString()).toBe("task asset");
    // The site folder has assets/only-in-site.png, but /assets/ belongs to the other mount.
    expect((await rawRequest(server.origin, "/assets/only-in-site.png")).status).toBe(404);
  });

  it("rejects bad mounts with a precise error", async () => {
    const attempts: { mounts: { urlPath: string; dir: string }[]; message: RegExp }[] = [
      { mounts: [], message: /mounts: expected at least one mount/ },
      { mounts: [{ urlPath: "assets/", dir: site }], message: /urlPath: expected a path starting with "\/", got "assets\/"/ },
      { mounts: [{ urlPath: "/a/../b/", dir: site }], message: /urlPath: expected a plain path/ },
      { mounts: [{ urlPath: "/", dir: path.join(base, "nope") }], message: /mount \/: dir: expected an existing folder, got .*nope/ },
      { mounts: [{ urlPath: "/", dir: path.join(base, "secret.txt") }], message: /expected an existing folder/ },
      {
        mounts: [
          { urlPath: "/x", dir: site },
          { urlPath: "/x/", dir: assets },
        ],
        message: /mount \/x\/: mounted twice/,
      },
    ];
    for (const attempt of attempts) {
      const failure = await startStaticServer({ mounts: attempt.mounts }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(IwrError);
      expect((failure as IwrError).code).toBe("IO");
      expect((failure as IwrError).message).toMatch(attempt.message);
    }
  });

  it("serves a single folder given as a string at /", async () => {
    const single = await startStaticServer(assets);
    try {
      expect(single.mounts).toEqual([{ urlPath: "/", dir: fs.realpathSync(assets) }]);
      expect((await rawRequest(single.origin, "/logo.png")).body.toString()).toBe("task asset");
    } finally {
      await single.close();
    }
  });
});
