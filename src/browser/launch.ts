/**
 * One Chromium per process. Every task gets its own context from it; the browser
 * itself is shared, relaunched only if it died.
 */
import { type Browser, chromium } from "playwright";
import { log } from "../log/logger.ts";
import { requireTools } from "../setup/find-tools.ts";
import { DISABLE_FEATURES_SWITCH } from "./chromium-features.ts";

/** Flags that work as root on machines with no network: without the background-networking ones Chromium keeps dialling out. */
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
  // Playwright's disabled features and ours, in one switch (Chromium reads only the last).
  DISABLE_FEATURES_SWITCH,
];

const logger = log("browser");
/** One shared browser per scrollbar setting (the official profile's shows them). */
const shared = new Map<Scrollbars, Promise<Browser>>();
/** Browsers closed by closeSharedBrowser(): their disconnection is expected, not worth a warning. */
const closedOnPurpose = new WeakSet<Browser>();

/** Whether pages show scrollbars: hidden (ours, the recorder's), or visible as in the harness's browser. */
export type Scrollbars = "hidden" | "visible";
const HIDE_SCROLLBARS = "--hide-scrollbars";

export async function launchBrowser(scrollbars: Scrollbars = "hidden"): Promise<Browser> {
  const { chromium: found } = requireTools();
  const started = Date.now();
  // Playwright hides scrollbars in headless mode by itself; visible ones need its flag left out too.
  const args = scrollbars === "hidden" ? [...CHROMIUM_ARGS] : CHROMIUM_ARGS.filter((arg) => arg !== HIDE_SCROLLBARS);
  // Signals are the commands' to handle (a stop after the current cell or node, with its browser
  // still open); Playwright's own handlers would close every browser and exit at once.
  const browser = await chromium.launch({
    executablePath: found.path,
    headless: true,
    args,
    ...(scrollbars === "visible" ? { ignoreDefaultArgs: [HIDE_SCROLLBARS] } : {}),
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  logger.debug(`launched Chromium ${browser.version()} from ${found.path} in ${Date.now() - started} ms`);
  return browser;
}

async function launchWatchedBrowser(scrollbars: Scrollbars): Promise<Browser> {
  const browser = await launchBrowser(scrollbars);
  browser.on("disconnected", () => {
    if (!closedOnPurpose.has(browser)) logger.warn("Chromium disconnected; the next task relaunches it");
  });
  return browser;
}

/** The process's shared browser; relaunched (once, even with concurrent callers) when the previous one disconnected. */
export async function sharedBrowser(scrollbars: Scrollbars = "hidden"): Promise<Browser> {
  const current = shared.get(scrollbars);
  if (current) {
    const browser = await current.catch(() => undefined);
    if (browser?.isConnected()) return browser;
    // Another caller may have started the replacement while we waited.
    if (shared.get(scrollbars) !== current) return sharedBrowser(scrollbars);
  }
  const launching = launchWatchedBrowser(scrollbars);
  shared.set(scrollbars, launching);
  return launching;
}

/** Closes the shared browser of one scrollbar setting, or every shared browser. */
export async function closeSharedBrowser(scrollbars?: Scrollbars): Promise<void> {
  const which = scrollbars ? [scrollbars] : [...shared.keys()];
  await Promise.all(
    which.map(async (key) => {
      const pending = shared.get(key);
      shared.delete(key);
      const browser = await pending?.catch(() => undefined);
      if (browser) closedOnPurpose.add(browser);
      await browser?.close().catch(() => undefined);
    }),
  );
}
