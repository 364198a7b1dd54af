/**
 * How the benches print the image readings' counts (src/metrics/image-readings.ts): per
 * kind, how many were asked for, answered from memory or from the on-disk store, and read.
 */
import { hitRate, type ReadingCounts } from "../src/metrics/image-readings.ts";

export function readingsLine(counts: Record<string, ReadingCounts>): string {
  const kinds = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
  if (kinds.length === 0) return "no image readings";
  return kinds
    .map(([kind, tally]) => {
      const rate = hitRate(tally);
      return (
        `${kind}: ${tally.asked} asked, ${tally.memory} from memory, ${tally.disk} from disk, ${tally.read} read` +
        (rate === undefined ? "" : ` (hit rate ${(100 * rate).toFixed(0)} %)`)
      );
    })
    .join("; ");
}
