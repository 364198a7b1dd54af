/**
 * The fences around an untrusted page: network limited to the page's own 127.0.0.1
 * origin, dialogs dismissed, popups closed, errors noted. Each thing stopped becomes
 * an incident; floods (dialogs or popups in a loop) are reported to the host, which
 * tears the page down.
 */
import type { BrowserContext, Page, Request, Response } from "playwright";
import type { IncidentLog } from "./incidents.ts";

/** A page may load its own origin's files and inline data; nothing else. */
export function isAllowedUrl(url: string, origin: string): boolean {
  if (url.startsWith("data:") || url.startsWith("blob:") || url === "about:blank") return true;
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}

/** What Playwright's service-worker block prints when a page calls register(). */
const SERVICE_WORKER_BLOCKED_WARNING = "Service Worker registration blocked";

function describeUrl(url: string): string {
  return url.length > 300 ? `${url.slice(0, 300)}…` : url;
}

/**
 * A proxy that does not exist, bypassed only for the page's own server: a second wall
 * behind request interception, for traffic interception does not see (e.g. sockets
 * opened from workers). `<-loopback>` removes Chromium's implicit bypass of
 * 127.0.0.1, so other local services (a model server, another task's server) are
 * unreachable too. Port 9 (discard) has no listener, so connections are refused at once.
 */
export function deadEndProxy(origin: string): { server: string; bypass: string } {
  return { server: "http://127.0.0.1:9", bypass: `<-loopback>,${new URL(origin).host}` };
}

/** The binding through which the WebRTC stand-ins report a use to the host. */
const WEBRTC_REPORT_BINDING = "__iwrSandboxWebRtcBlocked";
/** The WebRTC entry points a page could open a socket through (RTCDataChannel only via a connection, but cheap to cover). */
const WEBRTC_CONSTRUCTORS = ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel"];

/**
 * Runs in every frame before the page's scripts (serialised into the page: it must be
 * self-contained). Each WebRTC constructor becomes one that reports and throws, defined
 * read-only and non-configurable so the page cannot put anything back.
 */
function replaceWebRtcConstructors({ binding, names }: { binding: string; names: string[] }): void {
  const scope = globalThis as unknown as Record<string, unknown>;
  // Taken now, before the page's scripts could overwrite the global name.
  const captured = scope[binding];
  for (const name of names) {
    if (!(name in scope)) continue;
    // A function, not an arrow: pages call it with `new`, and an arrow would throw TypeError before our error.
    // biome-ignore lint/complexity/useArrowFunction: it must stay constructible
    const blocked = function (): never {
      const report = typeof captured === "function" ? captured : scope[binding];
      if (typeof report === "function") Promise.resolve(report(name)).catch(() => undefined);
      throw new DOMException(`${name} is disabled in the iwr sandbox`, "NotAllowedError");
    };
    Object.defineProperty(scope, name, { value: blocked, writable: false, configurable: false, enumerable: false });
  }
}

/**
 * WebRTC sends UDP the request routing cannot see. The launch flag
 * (--webrtc-ip-handling-policy) is what stops the packets; this takes the API away as
 * well, so a page gets a clear error and the attempt becomes an incident.
 */
export async function installWebRtcGuard(context: BrowserContext, incidents: IncidentLog): Promise<void> {
  await context.exposeBinding(WEBRTC_REPORT_BINDING, (source, name: unknown) => {
    incidents.record("blocked-request", `webrtc ${String(name)} from ${describeUrl(source.frame.url())}`);
  });
  const arg = JSON.stringify({ binding: WEBRTC_REPORT_BINDING, names: WEBRTC_CONSTRUCTORS });
  // As source text, with a no-op `__name`: tsx wraps inner functions in that helper, absent in the page.
  await context.addInitScript({ content: `(() => { const __name = (f) => f; (${replaceWebRtcConstructors.toString()})(${arg}); })();` });
}

/**
 * Blocks WebRTC and records what the network wall stops. The wall itself is the
 * context's dead-end proxy (deadEndProxy): Chromium sends every request that is not for
 * the page's own server to a port with no listener, so it fails at once inside the
 * browser. Nothing is intercepted in Node: a page that fires thousands of requests a
 * second (fetch in a loop) must not make every other page on the shared browser wait
 * for this process to answer each of them. The failures come back as events only.
 */
export async function installNetworkGuards(context: BrowserContext, _origin: string, incidents: IncidentLog): Promise<void> {
  await installWebRtcGuard(context, incidents);
}

/** What the dead-end proxy answers for a request it stopped. */
const PROXY_FAILURES = /^net::ERR_(?:PROXY_CONNECTION_FAILED|TUNNEL_CONNECTION_FAILED|PROXY_AUTH|CONNECTION_REFUSED|ABORTED)/;

export interface PageWatchHandlers {
  /** Called once the page has shown more dialogs than allowed. */
  onDialogFlood(count: number): void;
  /** Called once the page has made more requests than allowed (fetch in a loop). */
  onRequestFlood(count: number): void;
  /** Called once the page has opened more popups than allowed. */
  onPopupFlood(count: number): void;
  onCrash(): void;
  /** The page closed without the host asking (window.close(), browser gone). */
  onUnexpectedClose(): void;
  isClosingOnPurpose(): boolean;
}

export interface PageWatchLimits {
  maxDialogs: number;
  maxPopups: number;
  maxRequests: number;
}

/** Dismisses dialogs, closes popups and records errors of the main `page`. */
export function watchPage(
  context: BrowserContext,
  page: Page,
  origin: string,
  incidents: IncidentLog,
  limits: PageWatchLimits,
  handlers: PageWatchHandlers,
): void {
  page.on("dialog", (dialog) => {
    const count = incidents.record("dialog", `${dialog.type()}: ${dialog.message()}`);
    dialog.dismiss().catch(() => undefined);
    if (count === limits.maxDialogs + 1) handlers.onDialogFlood(count);
  });
  context.on("page", (popup) => {
    if (popup === page) return;
    const target = popup.url();
    const count = incidents.record("popup", `a new window was opened${target ? ` at ${describeUrl(target)}` : ""}; closed`);
    popup.close({ runBeforeUnload: false }).catch(() => undefined);
    if (count === limits.maxPopups + 1) handlers.onPopupFlood(count);
  });
  page.on("pageerror", (error) => {
    incidents.record("page-error", error.stack?.split("\n").slice(0, 3).join(" | ") || error.message);
  });
  page.on("console", (message) => {
    // The context's serviceWorkers: "block" turns register() into a no-op that says so on the console.
    if (message.type() === "warning" && message.text().startsWith(SERVICE_WORKER_BLOCKED_WARNING)) {
      incidents.record("blocked-request", `service worker registration from ${describeUrl(page.url())}`);
      return;
    }
    if (message.type() !== "error") return;
    const where = message.location().url;
    // The browser asks for /favicon.ico by itself; its 404 says nothing about the page.
    if (where === `${origin}/favicon.ico`) return;
    incidents.record("console-error", where ? `${message.text()} (${describeUrl(where)})` : message.text());
  });
  const blockedRequest = (request: Request) => `${request.resourceType()} ${request.method()} ${describeUrl(request.url())}`;
  // Requests that went to the dead-end proxy and have not failed yet. A flood is torn down as soon as it passes the limit,
  // when its requests' failures may not have come in yet (they come well after the requests on a busy machine): those
  // still waiting are recorded as blocked then, since the proxy never lets them through.
  const awaitingFailure = new Set<Request>();
  const onRequestFailed = (request: Request): void => {
    awaitingFailure.delete(request);
    const failure = request.failure()?.errorText ?? "";
    if (!isAllowedUrl(request.url(), origin) && PROXY_FAILURES.test(failure)) incidents.record("blocked-request", blockedRequest(request));
  };
  const onResponse = (response: Response): void => {
    if (response.status() < 400 || !isAllowedUrl(response.url(), origin)) return;
    incidents.record("http-error", `${response.request().resourceType()} ${describeUrl(response.url())} answered HTTP ${response.status()}`);
  };
  let requests = 0;
  const onRequest = (request: Request): void => {
    requests += 1;
    if (!isAllowedUrl(request.url(), origin)) awaitingFailure.add(request);
    if (requests !== limits.maxRequests + 1) return;
    // Each request event is a handle Playwright makes and sends to this process: with
    // no listener left, it stops making them for this flood while the page is torn down.
    context.off("request", onRequest);
    context.off("requestfailed", onRequestFailed);
    page.off("response", onResponse);
    for (const request of awaitingFailure) incidents.record("blocked-request", blockedRequest(request));
    awaitingFailure.clear();
    handlers.onRequestFlood(requests);
  };
  context.on("request", onRequest);
  context.on("requestfailed", onRequestFailed);
  page.on("response", onResponse);
  page.on("websocket", (socket) => {
    const url = socket.url();
    if (URL.canParse(url) && new URL(url).host === new URL(origin).host) return;
    // The proxy refuses the connection; the socket reports it.
    incidents.record("blocked-request", `websocket ${describeUrl(url)}`);
  });
  page.on("framenavigated", (frame) => {
    if (frame !== page.mainFrame()) return;
    const url = frame.url();
    if (!isAllowedUrl(url, origin)) incidents.record("navigation", `the page is now at ${describeUrl(url)}`);
  });
  page.on("crash", () => {
    incidents.record("crash", "the page's renderer crashed");
    handlers.onCrash();
  });
  page.on("close", () => {
    if (!handlers.isClosingOnPurpose()) handlers.onUnexpectedClose();
  });
}
