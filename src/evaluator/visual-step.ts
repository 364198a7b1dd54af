/**
 * One scored pair of the visual list (docs/protocol.md §3.5): the evalpoint, the checkpoint
 * it is compared with, and the three metrics. A leaf module, read by both eval.json's
 * own record and the harness keys written beside it.
 */
import { z } from "zod";

export const VisualStepSchema = z.object({
  position: z.number().int().nonnegative(),
  actionIndex: z.number().int().nonnegative().nullable(),
  evalpoint: z.number().int().nonnegative(),
  evalpointPath: z.string(),
  checkpointPath: z.string(),
  ocr: z.number().min(0).max(1),
  dino: z.number().min(0).max(1),
  mllm: z.number().min(0).max(100),
  checkpointText: z.string(),
  screenshotText: z.string(),
  judgeReply: z.string(),
  judgeParsed: z.boolean(),
});
export type VisualStep = z.infer<typeof VisualStepSchema>;
