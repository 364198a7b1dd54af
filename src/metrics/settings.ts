/**
 * Settings of the measuring engines the evaluator and the self-check share (docs/protocol.md
 * §3.5): OCR, DINO, and the fallback used in DINO's place, named after what they stand for.
 * The evaluator's settings (src/evaluator/settings.ts) hold these same objects.
 */
export const METRIC_SETTINGS = Object.freeze({
  /** §3.5 OCR. The benchmark uses easyocr (English); our engine is Tesseract (see ocr.ts). */
  ocr: Object.freeze({
    /**
     * `auto`: Debian's native Tesseract when it is installed and runs (`iwr setup` installs it),
     * else tesseract.js. Native takes about 0.7x the CPU per screen; the two give the same
     * verdicts on both calibration ladders (README, Measuring). IWR_OCR_ENGINE names one.
     */
    engine: "auto",
    language: "eng",
    /** The trained-data flavour shipped by @tesseract.js-data/eng that we load offline. */
    trainedData: "4.0.0_best_int",
    /**
     * Page segmentation mode 3 (automatic layout). Mode 4 (one column of lines) reads
     * light-on-dark text too and steadies some screens, but reads fewer words and moved
     * two of the bundled ladder's verdicts away from the oracle (measured: README).
     */
    pageSegMode: "3",
    /** Screen resolution assumed for every screenshot (they carry no trustworthy DPI). */
    dpi: "96",
  }),

  /**
   * Readings of images (OCR texts, visual features, the self-check's grey pixels) kept by
   * image content (image-readings.ts): in this process's memory and on disk across runs,
   * each bounded so a long study cannot grow without limit (least recently used go first).
   */
  readings: Object.freeze({
    memoryBytes: 192 * 1024 * 1024,
    /** IWR_READINGS_CACHE_MAX_MB overrides it. */
    diskBytes: 2 * 1024 * 1024 * 1024,
  }),

  /** §3.5 DINO: CLS-token cosine of facebook/dinov2-base, clipped to [0, 1]. */
  dino: Object.freeze({
    modelId: "facebook/dinov2-base",
    metricName: "dinov2-base-cls-cosine",
    /** Environment variable naming a local model folder (config.json, preprocessor_config.json, onnx/model.onnx). */
    modelDirEnv: "IWR_DINO_MODEL_DIR",
    /** The ONNX file inside the model folder that transformers.js loads for dtype fp32. */
    onnxFile: "onnx/model.onnx",
    /**
     * dinov2-base's preprocessor_config.json (BitImageProcessor). Used for any key the
     * local folder's own preprocessor_config.json does not set.
     */
    preprocessorDefaults: Object.freeze({
      shortestEdge: 256,
      cropHeight: 224,
      cropWidth: 224,
      /** PIL resample 3 = bicubic. */
      resample: 3,
      rescaleFactor: 1 / 255,
      imageMean: Object.freeze([0.485, 0.456, 0.406]),
      imageStd: Object.freeze([0.229, 0.224, 0.225]),
    }),
  }),

  /**
   * Used in place of DINO when the model folder is absent, and labelled in every result
   * and table: mean SSIM (Wang et al. 2004) of the two screenshots in grey at 256×256,
   * over 8×8 windows every 4 pixels, clipped to [0, 1]. Like DINO's CLS token it rewards
   * the same layout and structure and is 1 for identical images; unlike DINO it does not
   * see colour, and it is not comparable with published DINO numbers.
   */
  visualFallback: Object.freeze({
    metricName: "ssim-gray-256",
    side: 256,
    window: 8,
    step: 4,
    /** SSIM stabilisers C1 = (0.01·255)², C2 = (0.03·255)². */
    k1: 0.01,
    k2: 0.03,
  }),
});
