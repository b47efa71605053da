import { escapeHtml, type Html, trustedMarkup } from '../../src/console/html.js';
import { round } from '../../src/console/svg-charts.js';

/**
 * The benchmarks' line charts (docs/bench-page-depth.svg, docs/bench-table-size.svg): only tools/bench draws
 * them, so they live here, not in the console's charts (src/console/svg-charts.ts).
 */

/** One line of a line chart: its name in the legend and its points, in any order. */
export interface Series {
  name: string;
  points: Array<[x: number, y: number]>;
}

/** A line chart of several series over one x and one y axis, with a title, axis labels and a legend. */
export interface LineChart {
  title: string;
  xLabel: string;
  yLabel: string;
  /** 'log': x on a base-10 logarithmic axis (sizes from 1,000 to 1,000,000). */
  xScale: 'linear' | 'log';
  /** Where the x axis has ticks; the points' own x values by default. */
  xTicks?: number[];
  series: Series[];
}

const LINE_WIDTH = 640;
const LINE_HEIGHT = 360;
const LINE_LEFT = 64;
/** The legend's room, right of the plot. */
const LINE_RIGHT = 190;
const LINE_TOP = 40;
const LINE_BOTTOM = 56;
/** Space between the y axis (and the legend) and the first (last) point. */
const LINE_PAD = 16;
const LINE_COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

/** An axis figure: 1000000 -> "1,000,000", 0.25 -> "0.25". */
const axisLabel = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 2 });

/** A step of 1, 2 or 5 times a power of ten that cuts 0..max into at most 5 parts. */
export function niceStep(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max / 5));
  return ([1, 2, 5, 10].map((k) => k * power).find((step) => max / step <= 5) as number);
}

/**
 * A line chart (the benchmarks' page-depth and table-size curves, docs/benchmarks.md): a y axis from 0
 * in steps of niceStep, an x axis (linear or log) with a tick at each x, one coloured polyline with its
 * points per series, sorted by x, and a legend on the right. A standalone SVG document (its own
 * namespace, size and white background), one element a line; pure: the same data gives the same bytes.
 */
export function lineChart(chart: LineChart): Html {
  const xs = chart.series.flatMap((s) => s.points.map(([x]) => x));
  const ys = chart.series.flatMap((s) => s.points.map(([, y]) => y));
  const ticksX = chart.xTicks ?? [...new Set(xs)].sort((a, b) => a - b);
  const step = niceStep(Math.max(...ys, 0));
  const top = Math.max(step, Math.ceil(Math.max(...ys, 0) / step) * step);
  const toAxis = (x: number) => (chart.xScale === 'log' ? Math.log10(x) : x);
  const low = Math.min(...[...xs, ...ticksX].map(toAxis));
  const high = Math.max(...[...xs, ...ticksX].map(toAxis));
  const plotWidth = LINE_WIDTH - LINE_LEFT - LINE_RIGHT;
  const plotHeight = LINE_HEIGHT - LINE_TOP - LINE_BOTTOM;
  const bottom = LINE_TOP + plotHeight;
  const right = LINE_WIDTH - LINE_RIGHT;
  const px = (x: number) =>
    round(LINE_LEFT + LINE_PAD + (high === low ? (plotWidth - 2 * LINE_PAD) / 2 : ((toAxis(x) - low) / (high - low)) * (plotWidth - 2 * LINE_PAD)));
  const py = (y: number) => round(bottom - (y / top) * plotHeight);

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${LINE_WIDTH}" height="${LINE_HEIGHT}" viewBox="0 0 ${LINE_WIDTH} ${LINE_HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${LINE_WIDTH}" height="${LINE_HEIGHT}" fill="#fff"/>`,
    `<text x="${LINE_LEFT}" y="22" font-size="14" font-weight="bold">${escapeHtml(chart.title)}</text>`,
  ];
  for (let y = 0; y <= top + step / 1000; y += step) {
    parts.push(`<line x1="${LINE_LEFT}" y1="${py(y)}" x2="${right}" y2="${py(y)}" stroke="#ddd"/>`);
    parts.push(`<text x="${LINE_LEFT - 6}" y="${round(py(y) + 4)}" text-anchor="end">${axisLabel(y)}</text>`);
  }
  for (const x of ticksX) {
    parts.push(`<line x1="${px(x)}" y1="${bottom}" x2="${px(x)}" y2="${bottom + 5}" stroke="#333"/>`);
    parts.push(`<text x="${px(x)}" y="${bottom + 18}" text-anchor="middle">${axisLabel(x)}</text>`);
  }
  parts.push(`<line x1="${LINE_LEFT}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#333"/>`);
  parts.push(`<line x1="${LINE_LEFT}" y1="${LINE_TOP}" x2="${LINE_LEFT}" y2="${bottom}" stroke="#333"/>`);
  parts.push(`<text x="${round(LINE_LEFT + plotWidth / 2)}" y="${LINE_HEIGHT - 14}" text-anchor="middle">${escapeHtml(chart.xLabel)}</text>`);
  const middle = round(LINE_TOP + plotHeight / 2);
  parts.push(`<text x="16" y="${middle}" text-anchor="middle" transform="rotate(-90 16 ${middle})">${escapeHtml(chart.yLabel)}</text>`);
  chart.series.forEach((series, k) => {
    const colour = LINE_COLOURS[k % LINE_COLOURS.length] as string;
    const points = [...series.points].sort(([a], [b]) => a - b);
    parts.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.map(([x, y]) => `${px(x)},${py(y)}`).join(' ')}"/>`);
    for (const [x, y] of points) parts.push(`<circle cx="${px(x)}" cy="${py(y)}" r="3" fill="${colour}"/>`);
    const legendY = LINE_TOP + 8 + k * 18;
    parts.push(`<line x1="${right + 14}" y1="${legendY}" x2="${right + 34}" y2="${legendY}" stroke="${colour}" stroke-width="2"/>`);
    parts.push(`<text x="${right + 40}" y="${legendY + 4}">${escapeHtml(series.name)}</text>`);
  });
  parts.push('</svg>');
  return trustedMarkup(parts.join('\n'));
}
