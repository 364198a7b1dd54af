/**
 * The rooms of the house and the arrows allowed between them (docs/architecture.md).
 * `npm run lint` checks them, and so does test/architecture/import-rules.test.ts in
 * `npm test`. Type-only imports count: a circle of types is still a circle.
 */
/** The application layer: it may see everything but the CLI. */
const APPLICATION = "^src/(run|experiment|calibration|cli)/";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Modules form no circle, type-only imports included: a circle means a boundary is in the wrong place.",
      from: {},
      to: { circular: true },
    },
    {
      name: "only-the-cli-imports-the-cli",
      severity: "error",
      comment: "src/cli/ presents; nothing below it imports it.",
      from: { path: "^(src|agents)/", pathNot: "^src/cli/" },
      to: { path: "^src/cli/" },
    },
    {
      name: "libraries-stay-below-the-application",
      severity: "error",
      comment: "Libraries in src/ never import the runners, the experiment, calibration or the CLI.",
      from: { path: "^src/", pathNot: APPLICATION },
      to: { path: APPLICATION },
    },
    {
      name: "only-graph-runners-import-agents",
      severity: "error",
      comment: "In src/, only the runners that run a graph import agents/ (the single-pass and agent runs, the experiment) and the CLI.",
      from: { path: "^src/", pathNot: "^src/(run/(generate|agent)\\.ts|experiment/|cli/)" },
      to: { path: "^agents/" },
    },
    {
      name: "calibration-below-the-experiment",
      severity: "error",
      comment: "Calibration (reference, blank, mutant ladders) is a library of the experiment and the CLI, not their user.",
      from: { path: "^src/calibration/" },
      to: { path: "^(agents/|src/(run|experiment|cli)/)" },
    },
    {
      name: "agents-see-no-truth",
      severity: "error",
      comment:
        "Generators see a task's inputs only: agents/ never imports the task loader, the task schema with its truth, " +
        "the evaluator, calibration, mutants, the recorder or the application.",
      from: { path: "^agents/" },
      to: { path: "^src/(tasks/(?!inputs\\.ts$)|evaluator/|calibration/|mutants/|recorder/|run/|experiment/|cli/)" },
    },
    {
      name: "oracle-feedback-only-through-the-agent-runner",
      severity: "error",
      comment:
        "Oracle feedback (the evaluator's verdict on an agent's drafts: the task's truth) is wired in by the agent runner's switch alone; " +
        "nothing else may reach it, so the normal agent cannot get it by accident.",
      from: { path: "^(src|agents)/", pathNot: "^src/run/agent\\.ts$" },
      to: { path: "^src/run/oracle-feedback\\.ts$" },
    },
    {
      name: "shared-engines-below-their-callers",
      severity: "error",
      comment: "The measuring engines (OCR, DINO, SSIM, text similarity) serve the evaluator and the self-check alike and know neither.",
      from: { path: "^src/metrics/" },
      to: { path: "^src/(evaluator|selfcheck|replay|browser)/" },
    },
    {
      name: "the-self-check-reads-no-truth",
      severity: "error",
      comment:
        "The self-check is the agent's own feedback: it never imports the task loader or the evaluator " +
        "(the evaluator may share its step evidence, not the other way).",
      from: { path: "^src/selfcheck/" },
      to: { path: "^src/(tasks/(?!inputs\\.ts$)|evaluator/|calibration/|mutants/)" },
    },
    {
      name: "protocol-is-a-leaf",
      severity: "error",
      comment: "src/protocol.ts holds the benchmark's constants and imports nothing of ours.",
      from: { path: "^src/protocol\\.ts$" },
      to: { path: "^(src|agents)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    includeOnly: "^(src|agents)/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js", ".cjs"] },
  },
};
