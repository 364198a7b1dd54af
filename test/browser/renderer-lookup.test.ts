/**
 * Finding a page's renderer process under load: the browser-wide trace that names it can
 * take longer than the page may wait at about:blank. Then the page opens unwatched and the
 * pid is handed over when the trace ends, and the next lookup does not start a second trace
 * beside the slow one (Chromium answers that one empty). The page here is a stand-in that
 * speaks the CDP calls the lookup makes, so that the trace's pace is ours to set.
 */
import { EventEmitter } from "node:events";
import type { Page } from "playwright";
import { describe, expect, it } from "vitest";
import { lookUpRenderer } from "../../src/browser/renderer-memory.ts";

interface TraceLog {
  running: number;
  overlapped: boolean;
}

/**
 * A page whose trace ends `traceMs` after Tracing.end (never, when undefined) and names
 * `pid` as its renderer. Detaching its session ends a trace still running, as in Chromium.
 */
function pageTracedIn(traceMs: number | undefined, pid: number, log: TraceLog): Page & EventEmitter {
  let tracing = false;
  const stop = () => {
    if (tracing) log.running -= 1;
    tracing = false;
  };
  const session = Object.assign(new EventEmitter(), {
    async send(method: string) {
      if (method === "Tracing.start") {
        if (log.running > 0) log.overlapped = true;
        log.running += 1;
        tracing = true;
        return {};
      }
      if (traceMs === undefined) return {};
      setTimeout(() => {
        if (!tracing) return;
        session.emit("Tracing.dataCollected", { value: [{ name: "TracingStartedInBrowser", args: { data: { frames: [{ processId: pid }] } } }] });
        stop();
        session.emit("Tracing.tracingComplete", {});
      }, traceMs);
      return {};
    },
    async detach() {
      stop();
    },
  });
  let closed = false;
  const page = Object.assign(new EventEmitter(), {
    context: () => ({ newCDPSession: async () => session }),
    isClosed: () => closed,
    close: () => {
      closed = true;
      page.emit("close");
    },
  });
  return page as unknown as Page & EventEmitter;
}

describe("a page's renderer lookup", () => {
  it("answers within the wait when the trace is quick", async () => {
    const log = { running: 0, overlapped: false };
    const lookup = await lookUpRenderer(pageTracedIn(5, 4242, log), 2000);
    expect(lookup).toEqual({ pids: [4242] });
  });

  it("hands over a slow trace's pids once it ends, and starts no second trace beside it", async () => {
    const log = { running: 0, overlapped: false };
    const started = Date.now();
    const slow = await lookUpRenderer(pageTracedIn(1500, 1111, log), 50);
    expect(Date.now() - started).toBeLessThan(1200);
    expect(slow.pids).toEqual([]);
    expect(slow.latePids).toBeDefined();

    // Asked while the slow trace still runs: its own trace waits for that one to end.
    const next = lookUpRenderer(pageTracedIn(5, 2222, log), 5000);
    expect(await slow.latePids).toEqual([1111]);
    expect(await next).toEqual({ pids: [2222] });
    expect(log.overlapped).toBe(false);
  });

  it("gives up a trace that does not end, ends it, and goes on to the next", async () => {
    const log = { running: 0, overlapped: false };
    const stuck = await lookUpRenderer(pageTracedIn(undefined, 3333, log), 20, { giveUpMs: 200 });
    const next = lookUpRenderer(pageTracedIn(5, 4444, log), 5000);
    expect(await stuck.latePids).toEqual([]);
    expect(await next).toEqual({ pids: [4444] });
    expect(log).toEqual({ running: 0, overlapped: false });
  });

  it("hands over no pid for a page closed while its trace runs, and none is traced once closed", async () => {
    const log = { running: 0, overlapped: false };
    const page = pageTracedIn(undefined, 5555, log);
    const lookup = await lookUpRenderer(page, 20);
    page.close();
    expect(await lookup.latePids).toEqual([]);
    expect(log.running).toBe(0);
    expect(await lookUpRenderer(page, 1000)).toEqual({ pids: [] });
    expect(log.running).toBe(0);
  });

  it("hands over no pid when the trace fails", async () => {
    const failing = Object.assign(new EventEmitter(), {
      isClosed: () => false,
      context: () => ({ newCDPSession: async () => Promise.reject(new Error("target closed")) }),
    }) as unknown as Page;
    expect(await lookUpRenderer(failing, 1000)).toEqual({ pids: [] });
  });
});
