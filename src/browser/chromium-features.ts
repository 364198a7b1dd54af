/**
 * The one `--disable-features` switch our Chromium gets.
 *
 * Chromium keeps only the last `--disable-features` on its command line, and Playwright
 * already passes one, so a switch of ours must repeat Playwright's features or it would
 * silently turn them back on (HttpsUpgrades, PaintHolding and the startup phone-home
 * features among them).
 * test/browser/chromium-features.test.ts reads the launched browser's command line and
 * fails when a Playwright upgrade disables a feature this list does not carry.
 */

/** What playwright-core (1.65, `chromiumSwitches`) disables, for its own reasons. */
const PLAYWRIGHT_DISABLED_FEATURES = [
  "AvoidUnnecessaryBeforeUnloadCheckSync",
  "DestroyProfileOnBrowserClose",
  "HttpsUpgrades",
  "HttpsFirstBalancedModeAutoEnable",
  "LensOverlay",
  "MediaRouter",
  "PaintHolding",
  "ThirdPartyStoragePartitioning",
  "AvoidCorsURLLoaderRestartOnRedirect",
  "TcpPortRandomizationWin",
  "OptimizationHints",
  "NetworkTimeServiceQuerying",
  "AimEnabled",
  "PreconnectToSearch",
  "msForceBrowserSignIn",
  "msEdgeUpdateLaunchServicesPreferredVersion",
] as const;

/**
 * Ours, for CPU. Every page opens in a window of its own, and in Chromium 156 each new
 * window also started a renderer for the address bar's WebUI popup (chrome://omnibox-popup,
 * never shown headless) while the browser kept a spare renderer warm for a next
 * navigation that, in a fresh context per task, never uses it: three renderers per page.
 * Measured on 2 cores: a context, its page and a screenshot cost 1.50 CPU-s with them and
 * 0.62 CPU-s without (one renderer per page).
 */
const UNUSED_RENDERER_FEATURES = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup", "SpareRendererForSitePerProcess"] as const;

export const DISABLE_FEATURES_SWITCH = `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...UNUSED_RENDERER_FEATURES].join(",")}`;
