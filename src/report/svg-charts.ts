/** The charts of report.html as inline SVG (no script): bars, and points and lines on x–y axes. */
import { escapeHtml, pct } from "./render-shared.ts";

const PALETTE = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00", "#b82e2e", "#316395"];

export function barChart(title: string, bars: Array<{ label: string; value: number }>): string {
  const width = 560;
  const rowHeight = 22;
  const left = 160;
  const height = 30 + bars.length * rowHeight;
  const items = bars
    .map((bar, index) => {
      const y = 24 + index * rowHeight;
      const w = Math.max(0, Math.min(1, bar.value)) * (width - left - 60);
      return (
        `<text x="${left - 6}" y="${y + 14}" text-anchor="end">${escapeHtml(bar.label)}</text>` +
        `<rect x="${left}" y="${y + 2}" width="${w.toFixed(1)}" height="${rowHeight - 6}" fill="${PALETTE[index % PALETTE.length]}"/>` +
        `<text x="${(left + w + 4).toFixed(1)}" y="${y + 14}">${pct(bar.value)}</text>`
      );
    })
    .join("");
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-size="12" font-family="sans-serif">` +
    `<text x="4" y="14" font-weight="bold">${escapeHtml(title)}</text>${items}</svg>`
  );
}

interface Series {
  label: string;
  points: Array<{ x: number; y: number }>;
  line?: boolean;
}

export function xyChart(title: string, xLabel: string, yLabel: string, series: Series[], options: { diagonal?: boolean; xMax?: number } = {}): string {
  const width = 560;
  const height = 320;
  const [left, right, top, bottom] = [50, 150, 24, 40];
  const all = series.flatMap((entry) => entry.points);
  const xMax = options.xMax ?? Math.max(1e-9, ...all.map((point) => point.x));
  const sx = (x: number) => left + (x / xMax) * (width - left - right);
  const sy = (y: number) => height - bottom - Math.max(0, Math.min(1, y)) * (height - top - bottom);
  const axes =
    `<line x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}" stroke="#444"/>` +
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${height - bottom}" stroke="#444"/>`;
  const ticks =
    [0, 0.25, 0.5, 0.75, 1].map((t) => `<text x="${left - 4}" y="${sy(t) + 4}" text-anchor="end">${pct(t)}</text>`).join("") +
    [0, 0.5, 1].map((t) => `<text x="${sx(t * xMax)}" y="${height - bottom + 14}" text-anchor="middle">${Number((t * xMax).toPrecision(3))}</text>`).join("");
  const diagonal = options.diagonal ? `<line x1="${sx(0)}" y1="${sy(0)}" x2="${sx(xMax)}" y2="${sy(1)}" stroke="#bbb" stroke-dasharray="4 3"/>` : "";
  const drawn = series
    .map((entry, index) => {
      const color = PALETTE[index % PALETTE.length];
      const dots = entry.points.map((point) => `<circle cx="${sx(point.x).toFixed(1)}" cy="${sy(point.y).toFixed(1)}" r="3.5" fill="${color}"/>`).join("");
      const path =
        entry.line && entry.points.length > 1
          ? `<polyline fill="none" stroke="${color}" stroke-width="2" ` +
            `points="${entry.points.map((point) => `${sx(point.x).toFixed(1)},${sy(point.y).toFixed(1)}`).join(" ")}"/>`
          : "";
      const legend =
        `<rect x="${width - right + 10}" y="${top + index * 18}" width="10" height="10" fill="${color}"/>` +
        `<text x="${width - right + 24}" y="${top + index * 18 + 9}">${escapeHtml(entry.label)}</text>`;
      return path + dots + legend;
    })
    .join("");
  const labels =
    `<text x="${(left + width - right) / 2}" y="${height - 6}" text-anchor="middle">${escapeHtml(xLabel)}</text>` +
    `<text x="12" y="${(top + height - bottom) / 2}" transform="rotate(-90 12 ${(top + height - bottom) / 2})" text-anchor="middle">` +
    `${escapeHtml(yLabel)}</text>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-size="11" font-family="sans-serif">` +
    `<text x="4" y="14" font-weight="bold">${escapeHtml(title)}</text>${axes}${ticks}${diagonal}${drawn}${labels}</svg>`
  );
}
