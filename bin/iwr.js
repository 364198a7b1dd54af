#!/usr/bin/env node
// The `iwr` command. Sources are TypeScript run through tsx, so `npx iwr` works
// right after `npm ci` with no build step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv);
