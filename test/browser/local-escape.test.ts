/**
 * A page must not reach anything on this machine but its own server: not another local
 * HTTP port (by fetch, beacon, image, worker or websocket), not a local UDP port via
 * WebRTC. Real listeners count what arrives; the page's attempts become incidents.
 */
import dgram from "node:dgram";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSandboxedPage } from "../../src/browser/host.ts";
import type { SandboxedPage } from "../../src/browser/hosted-page.ts";
import { closeSharedBrowser, sharedBrowser } from "../../src/browser/launch.ts";
import { type StaticServer, startStaticServer } from "../../src/browser/static-server.ts";
import { HOSTILE_PAGES_DIR } from "../support/browser-fixtures.ts";

const RESOLUTION = { width: 800, height: 600 };
const TIMEOUTS = { navigationMs: 5_000, actionMs: 3_000, screenshotMs: 5_000 };
/** How long a listener must stay silent after the page's attempts. */
const QUIET_MS = 2_000;

let pageServer: StaticServer;
const opened: SandboxedPage[] = [];

function blockedRequests(sandbox: SandboxedPage): string[] {
  return sandbox.incidents.filter((incident) => incident.kind === "blocked-request").map((incident) => incident.detail);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function openHostile(entry: string): Promise<SandboxedPage> {
  const sandbox = await openSandboxedPage({ server: pageServer, entry, resolution: RESOLUTION, timeouts: TIMEOUTS });
  opened.push(sandbox);
  expect(sandbox.loadError).toBeUndefined();
  return sandbox;
}

beforeAll(async () => {
  await sharedBrowser();
  pageServer = await startStaticServer(HOSTILE_PAGES_DIR);
});

afterAll(async () => {
  await Promise.all(opened.map((sandbox) => sandbox.close()));
  await pageServer.close();
  await closeSharedBrowser();
});

describe("another local HTTP port", () => {
  let other: http.Server;
  let otherOrigin: string;
  /** Every TCP connection and HTTP request the second server saw (a websocket handshake is a request too). */
  const arrived: string[] = [];
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    other = http.createServer((request, response) => {
      arrived.push(`request ${request.method} ${request.url}`);
      response.end("reached");
    });
    other.on("connection", (socket: Socket) => {
      arrived.push("connection");
      sockets.add(socket);
    });
    other.on("upgrade", (request, socket: Socket) => {
      arrived.push(`upgrade ${request.url}`);
      socket.destroy();
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    expect(otherOrigin).not.toBe(pageServer.origin);
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => other.close(resolve));
  });

  it("fetch, sendBeacon, an image, a worker's fetch and a websocket all fail; the server sees nothing", async () => {
    const sandbox = await openHostile("local-port-requests.html");
    const results = await sandbox.withTimeout("reach other port", 10_000, () =>
      sandbox.page.evaluate(
        (target) => (window as unknown as { reachOtherPort(t: string): Promise<Record<string, string>> }).reachOtherPort(target),
        otherOrigin,
      ),
    );
    expect(results.fetch).toMatch(/^failed/);
    expect(results.image).toBe("failed");
    expect(results.worker).toMatch(/^failed/);
    expect(results.websocket).toBe("failed");
    const port = new URL(otherOrigin).port;
    await expect
      .poll(() => blockedRequests(sandbox).sort(), { timeout: 5_000 })
      .toEqual([
        `fetch GET ${otherOrigin}/fetch`,
        `fetch GET ${otherOrigin}/worker-fetch`,
        `image GET ${otherOrigin}/image.png`,
        `ping POST ${otherOrigin}/beacon`,
        `websocket ws://127.0.0.1:${port}/socket`,
      ]);
    await sleep(QUIET_MS);
    expect(arrived).toEqual([]);
  });
});

describe("WebRTC to a local UDP port", () => {
  let listener: dgram.Socket;
  let port: number;
  const datagrams: Buffer[] = [];

  beforeAll(async () => {
    listener = dgram.createSocket("udp4");
    listener.on("message", (message) => datagrams.push(message));
    await new Promise<void>((resolve) => listener.bind(0, "127.0.0.1", resolve));
    port = listener.address().port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  });

  it("the constructors throw, each attempt is recorded, and no packet arrives", async () => {
    const sandbox = await openHostile("webrtc.html");
    const results = await sandbox.withTimeout("webrtc", 10_000, () =>
      sandbox.page.evaluate((udpPort) => (window as unknown as { leakOverWebRtc(p: number): Promise<string[]> }).leakOverWebRtc(udpPort), port),
    );
    expect(results).toEqual([
      "RTCPeerConnection: NotAllowedError",
      "webkitRTCPeerConnection: NotAllowedError",
      "RTCDataChannel: NotAllowedError",
      // A fresh same-origin frame does not hand out the real constructor either.
      "iframe RTCPeerConnection: NotAllowedError",
    ]);
    expect(blockedRequests(sandbox)).toEqual([
      `webrtc RTCPeerConnection from ${sandbox.url}`,
      `webrtc webkitRTCPeerConnection from ${sandbox.url}`,
      `webrtc RTCDataChannel from ${sandbox.url}`,
      "webrtc RTCPeerConnection from about:blank",
    ]);
    await sleep(QUIET_MS);
    expect(datagrams).toHaveLength(0);
  });

  it("the launch flag alone keeps UDP in: a context without the page guards sends no packet either", async () => {
    // The second wall on its own, for a page that finds a way round the replaced constructors.
    const context = await (await sharedBrowser()).newContext();
    try {
      const page = await context.newPage();
      await page.setContent("<p>no guards here</p>");
      const gathering = await page.evaluate(async (udpPort) => {
        const connection = new RTCPeerConnection({ iceServers: [{ urls: `stun:127.0.0.1:${udpPort}` }] });
        connection.createDataChannel("leak");
        const finished = new Promise<string>((resolve) => {
          connection.onicegatheringstatechange = () => {
            if (connection.iceGatheringState === "complete") resolve("complete");
          };
          setTimeout(() => resolve(`still ${connection.iceGatheringState}`), 4_000);
        });
        await connection.setLocalDescription(await connection.createOffer());
        return finished;
      }, port);
      await sleep(QUIET_MS);
      expect(datagrams).toHaveLength(0);
      // Gathering ended at once: with UDP open it keeps retrying the STUN server for seconds.
      expect(gathering).toBe("complete");
    } finally {
      await context.close();
    }
  });
});
