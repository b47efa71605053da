import { formatDatetime } from '../http/render/datetime.js';
import { escapeHtml, type Html, trustedMarkup } from './html.js';

/** Occurrences counted from `start` over one bucket (an hour or a day). */
export interface Bucket {
  start: Date;
  count: number;
}

/** A coordinate to one decimal (what every chart here writes). */
export const round = (n: number) => Math.round(n * 10) / 10;

/**
 * A sparkline of occurrences (docs/console.md#errors): a line over the buckets, oldest first, scaled
 * to `scale` (a list's busiest bucket, so the rows of one page compare) or else to its own busiest;
 * its title says the total for screen readers and on hover.
 */
export function sparkline(buckets: readonly Bucket[], label: string, scale?: number): Html {
  const width = 120;
  const height = 24;
  const max = Math.max(1, scale ?? 0, ...buckets.map((b) => b.count));
  const step = buckets.length > 1 ? width / (buckets.length - 1) : width;
  const points = buckets.map((b, i) => `${round(i * step)},${round(height - 2 - (b.count / max) * (height - 4))}`).join(' ');
  const total = buckets.reduce((sum, b) => sum + b.count, 0);
  const title = escapeHtml(`${total} ${total === 1 ? 'occurrence' : 'occurrences'} ${label}`);
  return trustedMarkup(
    `<svg class="sparkline" role="img" aria-label="${title}" data-scale="${max}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
      `<title>${title}</title><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="${points}"/></svg>`,
  );
}

/**
 * A bar chart of occurrences per bucket (an error's page): one bar a bucket, a y axis from 0 to the
 * busiest bucket, the first and last bucket's time under it, and each bar's time and count as its title.
 */
export function histogram(buckets: readonly Bucket[], title: string): Html {
  const width = 720;
  const height = 220;
  const left = 40;
  const right = 10;
  const top = 14;
  const bottom = 36;
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const slot = plotWidth / Math.max(1, buckets.length);
  const bar = Math.max(1, slot * 0.8);
  const parts = [
    `<svg class="histogram" role="img" aria-label="${escapeHtml(title)}" viewBox="0 0 ${width} ${height}" font-size="11">`,
    `<title>${escapeHtml(title)}</title>`,
    `<line x1="${left}" y1="${top + plotHeight}" x2="${width - right}" y2="${top + plotHeight}" stroke="currentColor"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}" stroke="currentColor"/>`,
    `<text x="${left - 4}" y="${top + 4}" text-anchor="end" fill="currentColor">${max}</text>`,
    `<text x="${left - 4}" y="${top + plotHeight + 4}" text-anchor="end" fill="currentColor">0</text>`,
  ];
  buckets.forEach((b, i) => {
    const h = round((b.count / max) * plotHeight);
    const x = round(left + i * slot + (slot - bar) / 2);
    const label = escapeHtml(`${formatDatetime(b.start)}: ${b.count}`);
    parts.push(`<rect class="bar" x="${x}" y="${round(top + plotHeight - h)}" width="${round(bar)}" height="${h}"><title>${label}</title></rect>`);
  });
  const first = buckets[0];
  const last = buckets.at(-1);
  if (first && last) {
    parts.push(`<text x="${left}" y="${height - 12}" fill="currentColor">${escapeHtml(formatDatetime(first.start))}</text>`);
    parts.push(`<text x="${width - right}" y="${height - 12}" text-anchor="end" fill="currentColor">${escapeHtml(formatDatetime(last.start))}</text>`);
  }
  parts.push('</svg>');
  return trustedMarkup(parts.join(''));
}
