import { describe, expect, it } from "vitest";
import { IncidentLog } from "../../src/browser/incidents.ts";
import { isAllowedUrl } from "../../src/browser/sandbox-guards.ts";

describe("incident log", () => {
  it("keeps incidents up to the per-kind cap, then one note, while counting every one", () => {
    const log = new IncidentLog(3);
    for (let i = 0; i < 10; i++) log.record("console-error", `error ${i}`);
    expect(log.record("dialog", "alert: hi")).toBe(1);
    expect(log.counts["console-error"]).toBe(10);
    expect(log.counts.dialog).toBe(1);
    expect(log.incidents.map((incident) => incident.detail)).toEqual([
      "error 0",
      "error 1",
      "error 2",
      "more than 3 console-error incidents; later ones are only counted (see incidentCounts)",
      "alert: hi",
    ]);
    expect(log.incidents.every((incident) => incident.atMs >= 0)).toBe(true);
  });

  it("shortens very long details", () => {
    const log = new IncidentLog(5);
    log.record("page-error", "x".repeat(2_000));
    expect(log.incidents[0]?.detail).toMatch(/^x{500}… \(2000 chars\)$/);
  });
});

describe("allowed URLs", () => {
  const origin = "http://127.0.0.1:4000";
  it("allows the page's own origin and inline data only", () => {
    expect(isAllowedUrl("http://127.0.0.1:4000/index.html", origin)).toBe(true);
    expect(isAllowedUrl("data:image/png;base64,AAAA", origin)).toBe(true);
    expect(isAllowedUrl("blob:http://127.0.0.1:4000/1234", origin)).toBe(true);
    expect(isAllowedUrl("http://127.0.0.1:4001/index.html", origin)).toBe(false);
    expect(isAllowedUrl("http://localhost:4000/index.html", origin)).toBe(false);
    expect(isAllowedUrl("https://127.0.0.1:4000/index.html", origin)).toBe(false);
    expect(isAllowedUrl("https://example.com/", origin)).toBe(false);
    expect(isAllowedUrl("file:///etc/passwd", origin)).toBe(false);
    expect(isAllowedUrl("not a url", origin)).toBe(false);
  });
});
