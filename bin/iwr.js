#!/usr/bin/env node
// The `iwr` command. Sources are TypeScript run through tsx, so `npx iwr` works
// right after `npm ci` with no build step.
import { register as registerCommonJs } from "tsx/cjs/api";
import { register } from "tsx/esm/api";

register();
// A module arm's .ts file outside this package (no "type": "module" above it) is loaded as
// CommonJS by Node; tsx's CommonJS hook compiles its import/export syntax.
registerCommonJs();
const [{ main }, { installProcessGuards }] = await Promise.all([import("../src/cli/main.ts"), import("../src/cli/process-guards.ts")]);
// Only the real command installs process-wide handlers (tests call main() in their own process).
installProcessGuards();
process.exitCode = await main(process.argv);
