/** What the video-state analysis looks for (src/media/video-states.ts); part of its cache key. */
export const VIDEO_STATE_SETTINGS = Object.freeze({
  /** Bumped whenever the analysis changes what it finds: old cache entries stop matching. */
  version: 4,
  /** The issue asks for at least 5 fps; a caret's half blink (0.5 s) spans 2–3 frames. */
  fps: 5,
  /** Analysis frames are this wide (grey, aspect kept); a 720p screen becomes 320×180. */
  analysisWidth: 320,
  pixelTolerance: 24,
  minRegionPixels: 2,
  /** A pointer or caret is at most this many screen pixels on a side (our cursor dot: 22 px). */
  pointerMaxSideScreenPx: 48,
  persistenceSec: 0.8,
  minStateSec: 0.4,
  /** Full-size samples: every n-th analysis frame (2 → 2.5 fps: every state of 0.4 s holds one). */
  fullFrameEvery: 2,
  /** Full-size samples a run keeps while it lasts (evenly thinned). */
  samplesPerRun: 12,
});
