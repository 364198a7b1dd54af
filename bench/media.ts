/**
 * `npm run bench:media`: how fast our frame sampling is, against bare ffmpeg on the
 * same file in the same run (the floor). Target: ratio ≤ 1.2×.
 *
 * Two floors per video:
 *  - "bare 1 fps": plain ffmpeg sampling one frame a second, `-vf fps=1 -frames:v 64` to PNG files.
 *    On a video longer than 64 s it stops decoding at 64 s, while the protocol needs
 *    frames spread over the whole video, so it under-states the work there.
 *  - "bare same frames": bare ffmpeg writing exactly the frames we take (same fps
 *    expression), to PNG files: the honest floor for the long video.
 * "ours" includes finding the duration (read from the MP4 header; ffprobe for other
 * containers); the "duration known" line leaves it out, isolating the sampling itself.
 *
 * Video states (src/media/video-states.ts) on the bundled suite's real recordings, cache
 * cold (a fresh cache folder each run): against bare ffmpeg decoding the same video at the
 * same rate (5 fps) into the same small grey frames, to a pipe. Target: ratio ≤ 1.5×.
 * A third timing, the pass's own ffmpeg command run alone (both streams written, nothing
 * reading them), splits the cost: what ffmpeg spends on the full-size samples, and what
 * Node's analysis and the states' PNGs add on top. The three alternate run by run, and
 * the medians of STATE_RUNS runs are compared: on a shared 2-core machine single runs of
 * half a second vary by a fifth.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parseScriptArgs } from "../scripts/cli-args.ts";

parseScriptArgs({
  name: "bench:media",
  command: "npm run bench:media --",
  summary:
    "Times our frame sampling against bare ffmpeg on the same 10 s and 100 s videos (target ratio <= 1.2x), and the video states of " +
    "two bundled recordings against bare ffmpeg decoding at the same rate (target <= 1.5x). Takes no options.",
  options: {},
});

// Loaded once the arguments are good, so that --help and a usage error answer at once.
const [{ findFfmpeg }, { frameFilter, planFrames, sampleFrames }, { probeVideo }, { VIDEO_STATE_SETTINGS, videoStates }, { passArguments }] = await Promise.all(
  [
    import("../src/setup/find-tools.ts"),
    import("../src/media/frames.ts"),
    import("../src/media/probe.ts"),
    import("../src/media/video-states.ts"),
    import("../src/media/video-state-pass.ts"),
  ],
);

const run = promisify(execFile);
const RUNS = 3;
const STATE_RUNS = 7;

async function timed(task: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await task();
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function makeVideo(ffmpeg: string, file: string, seconds: number): Promise<void> {
  // Moving test pattern at 720p/30 fps, H.264 as screen recordings are.
  await run(ffmpeg, [
    "-v",
    "error",
    "-y",
    "-f",
    "lavfi",
    "-i",
    `testsrc2=s=1280x720:r=30:d=${seconds}`,
    "-c:v",
    "libx264",
    "-preset",
    "veryfast",
    "-pix_fmt",
    "yuv420p",
    "-movflags",
    "+faststart",
    file,
  ]);
}

async function bareFfmpeg(ffmpeg: string, video: string, filter: string, outDir: string): Promise<void> {
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  await run(ffmpeg, ["-v", "error", "-i", video, "-vf", filter, "-frames:v", "64", path.join(outDir, "%03d.png")]);
}

async function main(): Promise<void> {
  const ffmpeg = findFfmpeg()?.path;
  if (!ffmpeg) throw new Error("ffmpeg not found: run `npx iwr setup`");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "iwr-bench-media-"));
  try {
    console.log(`bench:media — ${RUNS} runs each, median; ${os.cpus().length} CPU(s); ffmpeg ${ffmpeg}`);
    for (const seconds of [10, 100]) {
      const video = path.join(dir, `v${seconds}.mp4`);
      const made = await timed(() => makeVideo(ffmpeg, video, seconds));
      const { durationSec } = await probeVideo(video);
      const plan = planFrames(durationSec);
      const sameFramesFilter = frameFilter(plan);
      const ours: number[] = [];
      const oursKnownDuration: number[] = [];
      const bareOneFps: number[] = [];
      const bareSame: number[] = [];
      let frameCount = 0;
      for (let i = 0; i < RUNS; i++) {
        // Interleaved so that machine noise hits all three alike.
        ours.push(await timed(async () => (frameCount = (await sampleFrames(video)).length)));
        oursKnownDuration.push(await timed(() => sampleFrames(video, { durationSec })));
        bareOneFps.push(await timed(() => bareFfmpeg(ffmpeg, video, "fps=1", path.join(dir, "bare"))));
        bareSame.push(await timed(() => bareFfmpeg(ffmpeg, video, sameFramesFilter, path.join(dir, "bare"))));
      }
      const oursMs = median(ours);
      const knownMs = median(oursKnownDuration);
      const bareMs = median(bareOneFps);
      const sameMs = median(bareSame);
      const minutes = durationSec / 60;
      console.log(`\n${seconds} s 1280x720 H.264 (made in ${(made / 1000).toFixed(1)} s): ${frameCount} frames`);
      console.log(
        `  ours (sampleFrames, duration lookup included) ${oursMs.toFixed(0)} ms = ${(oursMs / frameCount).toFixed(1)} ms/frame, ` +
          `${(oursMs / minutes).toFixed(0)} ms per video minute`,
      );
      console.log(`  bare ffmpeg -vf fps=1 -frames:v 64  ${bareMs.toFixed(0)} ms   ratio ours/bare ${(oursMs / bareMs).toFixed(2)}x (target <= 1.2x)`);
      console.log(`  bare ffmpeg, same frames as ours     ${sameMs.toFixed(0)} ms   ratio ours/bare ${(oursMs / sameMs).toFixed(2)}x`);
      console.log(
        `  ours with the duration given ${knownMs.toFixed(0)} ms   ratio vs bare same frames ${(knownMs / sameMs).toFixed(2)}x, ` +
          `vs bare 1 fps ${(knownMs / bareMs).toFixed(2)}x`,
      );
    }
    await benchVideoStates(ffmpeg, dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Bare ffmpeg at the states' rate, into the states' grey analysis frames, thrown away. */
async function bareStatesDecode(ffmpeg: string, video: string, width: number, height: number): Promise<void> {
  await run(
    ffmpeg,
    [
      "-v",
      "error",
      "-nostdin",
      "-i",
      video,
      "-an",
      "-vf",
      `fps=${VIDEO_STATE_SETTINGS.fps},scale=${width}:${height}:flags=fast_bilinear,format=gray`,
      "-f",
      "rawvideo",
      "-y",
      "/dev/null",
    ],
    { maxBuffer: 1 << 20 },
  );
}

/** The pass's own ffmpeg command, alone: both streams written to segment files that nobody reads. */
async function passCommandAlone(ffmpeg: string, video: string, dir: string): Promise<void> {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  await run(ffmpeg, passArguments(video, path.join(dir, "grey-%06d.raw"), path.join(dir, "full-%06d.raw")), { maxBuffer: 1 << 24 });
  fs.rmSync(dir, { recursive: true, force: true });
}

async function benchVideoStates(ffmpeg: string, dir: string): Promise<void> {
  const videos = ["tasks/iwr-mini/4/video.mp4", "tasks/iwr-mini/12/video.mp4"].filter((file) => fs.existsSync(file));
  const ratios: number[] = [];
  for (const video of videos) {
    const ours: number[] = [];
    const bare: number[] = [];
    const command: number[] = [];
    let summary = "";
    for (let i = 0; i < STATE_RUNS; i++) {
      const cacheDir = path.join(dir, `states-${i}`);
      let analysis = { width: 0, height: 0 };
      ours.push(
        await timed(async () => {
          const found = await videoStates(video, { cacheDir });
          analysis = found.analysis;
          summary = `${found.states.length} states over ${found.video.durationSec.toFixed(1)} s, ${found.analysis.frames} analysis frames`;
        }),
      );
      bare.push(await timed(() => bareStatesDecode(ffmpeg, video, analysis.width, analysis.height)));
      command.push(await timed(() => passCommandAlone(ffmpeg, video, path.join(dir, "pass-alone"))));
      fs.rmSync(cacheDir, { recursive: true, force: true });
    }
    const ratio = median(ours) / median(bare);
    ratios.push(ratio);
    console.log(`
video states of ${video} (${summary}), cache cold, median of ${STATE_RUNS}`);
    console.log(
      `  ours ${median(ours).toFixed(0)} ms   bare ffmpeg at ${VIDEO_STATE_SETTINGS.fps} fps, same grey frames ${median(bare).toFixed(0)} ms   ` +
        `ratio ${ratio.toFixed(2)}x (target <= 1.5x)`,
    );
    console.log(
      `  of which: the pass's ffmpeg command alone ${median(command).toFixed(0)} ms = ${(median(command) / median(bare)).toFixed(2)}x bare; ` +
        `Node's analysis and the states' PNGs add ${((median(ours) - median(command)) / median(bare)).toFixed(2)}x`,
    );
  }
  if (ratios.length > 0)
    console.log(`video states: worst ratio ${Math.max(...ratios).toFixed(2)}x (target <= 1.5x: ${Math.max(...ratios) <= 1.5 ? "met" : "NOT met"})`);
}

await main();
