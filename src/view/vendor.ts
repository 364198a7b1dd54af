/**
 * The page's libraries, served from node_modules as they are published (ES modules; no
 * bundler, no CDN): Preact, its hooks, and htm (JSX-like templates in plain JavaScript,
 * Preact's documented way to work without a build step). The page's import map names them.
 */
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
/** The ES module beside what require() resolves (htm publishes both; require resolves its CommonJS file). */
const esModule = (specifier: string) => {
  const file = require.resolve(specifier);
  return file.endsWith(".mjs") ? file : path.join(path.dirname(file), `${path.basename(file, path.extname(file))}.mjs`);
};

/** URL name under /vendor/ → the file in node_modules. */
export const VENDOR_MODULES: Readonly<Record<string, string>> = {
  "preact.mjs": esModule("preact"),
  "preact-hooks.mjs": esModule("preact/hooks"),
  "htm.mjs": esModule("htm"),
  "htm-preact.mjs": esModule("htm/preact"),
};

/** The page's import map: bare specifiers (as the libraries import each other) → /vendor/ URLs. */
export function importMap(): { imports: Record<string, string> } {
  return {
    imports: {
      preact: "/vendor/preact.mjs",
      "preact/hooks": "/vendor/preact-hooks.mjs",
      htm: "/vendor/htm.mjs",
      "htm/preact": "/vendor/htm-preact.mjs",
    },
  };
}
