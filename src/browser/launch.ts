/**
 * One Chromium per process. Every task gets its own context from it; the browser
 * itself is shared, relaunched only if it died.
 */
import { chromium, type Browser } from "playwright";
import { requireTools } from "../setup/find-tools.ts";
import { log } from "../log/logger.ts";

/** Flags that work as root on our machines with no network (STACK.md). */
export const CHROMIUM_ARGS: readonly string[] = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
  "--hide-scrollbars",
  "--font-render-hinting=none",
  "--force-color-profile=srgb",
  // WebRTC opens UDP sockets (STUN to any host:port) that neither request routing nor the
  // dead-end proxy sees: with this policy it may only use proxied TCP, i.e. nothing. (The
  // similarly named --force-webrtc-ip-handling-policy is not in this Chromium build.)
  "--webrtc-ip-handling-policy=disable_non_proxied_udp",
];

const logger = log("browser");
let shared: Promise<Browser> | undefined;
/** Browsers closed by closeSharedBrowser(): their disconnection is expected, not worth a warning. */
const closedOnPurpose = new WeakSet<Browser>();

export async function launchBrowser(): Promise<Browser> {
  const { chromium: found } = requireTools();
  const started = Date.now();
  // Signals are the commands' to handle (a stop after the current cell or node, with its browser
  // still open); Playwright's own handlers would close every browser and exit at once.
  const browser = await chromium.launch({ executablePath: found.path, headless: true, args: [...CHROMIUM_ARGS], handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
  logger.debug(`launched Chromium ${browser.version()} from ${found.path} in ${Date.now() - started} ms`);
  return browser;
}

async function launchWatchedBrowser(): Promise<Browser> {
  const browser = await launchBrowser();
  browser.on("disconnected", () => {
    if (!closedOnPurpose.has(browser)) logger.warn("Chromium disconnected; the next task relaunches it");
  });
  return browser;
}

/** The process's shared browser; relaunched (once, even with concurrent callers) when the previous one disconnected. */
export async function sharedBrowser(): Promise<Browser> {
  const current = shared;
  if (current) {
    const browser = await current.catch(() => undefined);
    if (browser?.isConnected()) return browser;
    // Another caller may have started the replacement while we waited.
    if (shared !== current) return sharedBrowser();
  }
  shared = launchWatchedBrowser();
  return shared;
}

export async function closeSharedBrowser(): Promise<void> {
  const pending = shared;
  shared = undefined;
  const browser = await pending?.catch(() => undefined);
  if (browser) closedOnPurpose.add(browser);
  await browser?.close().catch(() => undefined);
}
