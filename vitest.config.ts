import os from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";

// Checkpoint OCR texts the tests read are kept for this test run only, not in the
// project's .cache (test/support/global-setup.ts removes the folder at the end).
process.env.IWR_OCR_CACHE_DIR = path.join(os.tmpdir(), `iwr-test-ocr-text-${process.pid}`);
// Likewise the videos' stable states the self-check finds.
process.env.IWR_STATES_CACHE_DIR = path.join(os.tmpdir(), `iwr-test-video-states-${process.pid}`);
// And the media checks of task folders that passed.
process.env.IWR_MEDIA_CHECKS_DIR = path.join(os.tmpdir(), `iwr-test-media-checks-${process.pid}`);
// And the images single-pass requests carry (kept by content, read back at send time).
process.env.IWR_REQUEST_IMAGES_DIR = path.join(os.tmpdir(), `iwr-test-request-images-${process.pid}`);

// Real Chromium, real ffmpeg and real OCR run inside tests, on 2 cores: generous per-test
// limits. Three files at a time: much of a test's time is waiting (the protocol's fixed
// waits, pages settling, processes started and stopped), so two files kept the 2 cores only
// about 65 % busy. Measured on 2 cores: npm test 672 s with two, 610 s with three; test:long
// 952 s with two, 828 s with three.
// `npm test` adds --no-isolate: a test process runs file after file without loading the
// modules again (Playwright, LangChain, sharp: importing took 199 CPU-s of the suite's
// ~1,000, 25 with it). So a file that changes process-wide state (an environment variable,
// the shared browser) must put it back in its afterAll: the next file in the process sees
// it. Checked in the default order and with the files shuffled (--sequence.shuffle.files,
// seeds 4242 and 7). test:long keeps isolation: its files start whole commands and were
// never checked this way.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxWorkers: 3,
    pool: "forks",
    globalSetup: ["test/support/global-setup.ts"],
  },
});
