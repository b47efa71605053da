/**
 * A line chart as an SVG document, drawn by hand (no dependency): the page-depth and table-size
 * curves of docs/benchmarks.md. Pure: the same data gives the same bytes.
 */

export interface Series {
  name: string;
  points: Array<[x: number, y: number]>;
}

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

const WIDTH = 640;
const HEIGHT = 360;
const LEFT = 64;
const RIGHT = 190;
const TOP = 40;
const BOTTOM = 56;
/** Space between the y axis (and the legend) and the first (last) point. */
const PAD = 16;
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

const round = (n: number) => Math.round(n * 10) / 10;
const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const label = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 2 });

/** A step of 1, 2 or 5 times a power of ten that cuts 0..max into at most 5 parts. */
export function niceStep(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max / 5));
  return ([1, 2, 5, 10].map((k) => k * power).find((step) => max / step <= 5) as number);
}

export function lineChart(chart: LineChart): string {
  const xs = chart.series.flatMap((s) => s.points.map(([x]) => x));
  const ys = chart.series.flatMap((s) => s.points.map(([, y]) => y));
  const ticksX = chart.xTicks ?? [...new Set(xs)].sort((a, b) => a - b);
  const step = niceStep(Math.max(...ys, 0));
  const top = Math.max(step, Math.ceil(Math.max(...ys, 0) / step) * step);
  const toAxis = (x: number) => (chart.xScale === 'log' ? Math.log10(x) : x);
  const low = Math.min(...[...xs, ...ticksX].map(toAxis));
  const high = Math.max(...[...xs, ...ticksX].map(toAxis));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const px = (x: number) => round(LEFT + PAD + (high === low ? (plotWidth - 2 * PAD) / 2 : ((toAxis(x) - low) / (high - low)) * (plotWidth - 2 * PAD)));
  const py = (y: number) => round(TOP + plotHeight - (y / top) * plotHeight);

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    `<text x="${LEFT}" y="22" font-size="14" font-weight="bold">${escape(chart.title)}</text>`,
  ];
  for (let y = 0; y <= top + step / 1000; y += step) {
    out.push(`<line x1="${LEFT}" y1="${py(y)}" x2="${WIDTH - RIGHT}" y2="${py(y)}" stroke="#ddd"/>`);
    out.push(`<text x="${LEFT - 6}" y="${round(py(y) + 4)}" text-anchor="end">${label(y)}</text>`);
  }
  for (const x of ticksX) {
    out.push(`<line x1="${px(x)}" y1="${TOP + plotHeight}" x2="${px(x)}" y2="${TOP + plotHeight + 5}" stroke="#333"/>`);
    out.push(`<text x="${px(x)}" y="${TOP + plotHeight + 18}" text-anchor="middle">${label(x)}</text>`);
  }
  out.push(`<line x1="${LEFT}" y1="${TOP + plotHeight}" x2="${WIDTH - RIGHT}" y2="${TOP + plotHeight}" stroke="#333"/>`);
  out.push(`<line x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${TOP + plotHeight}" stroke="#333"/>`);
  out.push(`<text x="${round(LEFT + plotWidth / 2)}" y="${HEIGHT - 14}" text-anchor="middle">${escape(chart.xLabel)}</text>`);
  out.push(`<text x="16" y="${round(TOP + plotHeight / 2)}" text-anchor="middle" transform="rotate(-90 16 ${round(TOP + plotHeight / 2)})">${escape(chart.yLabel)}</text>`);
  chart.series.forEach((series, k) => {
    const colour = COLOURS[k % COLOURS.length] as string;
    const points = [...series.points].sort(([a], [b]) => a - b);
    out.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.map(([x, y]) => `${px(x)},${py(y)}`).join(' ')}"/>`);
    for (const [x, y] of points) out.push(`<circle cx="${px(x)}" cy="${py(y)}" r="3" fill="${colour}"/>`);
    const legendY = TOP + 8 + k * 18;
    out.push(`<line x1="${WIDTH - RIGHT + 14}" y1="${legendY}" x2="${WIDTH - RIGHT + 34}" y2="${legendY}" stroke="${colour}" stroke-width="2"/>`);
    out.push(`<text x="${WIDTH - RIGHT + 40}" y="${legendY + 4}">${escape(series.name)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
