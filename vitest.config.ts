import { defineConfig } from "vitest/config";

// Real Chromium, real ffmpeg and real OCR run inside tests, on 2 cores:
// generous per-test limits, and files run two at a time at most.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    pool: "forks",
  },
});
