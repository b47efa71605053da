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
 * Round steps for an axis from 0 to `max`: the step is 1, 2 or 5 times a power of ten, the fewest
 * that give at most `most` steps; the ticks are its multiples up to `max` (0 first).
 */
export function niceTicks(max: number, most = 5): number[] {
  if (!(max > 0)) return [0];
  let power = 1;
  while (max / (5 * power) > most) power *= 10;
  const step = [1, 2, 5].map((m) => m * power).find((s) => max / s <= most) ?? 5 * power;
  const ticks: number[] = [];
  for (let tick = 0; tick <= max; tick += step) ticks.push(tick);
  return ticks;
}

const HOUR_MS = 3_600_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** "Nov 19" and "14:00", in UTC (the console's times are UTC: docs/console.md). */
const dayLabel = (at: Date) => `${MONTHS[at.getUTCMonth()]} ${at.getUTCDate()}`;
const hourLabel = (at: Date) => `${String(at.getUTCHours()).padStart(2, '0')}:00`;

/** Every how many hours the time axis is labelled: the first of these giving at most 8 labels. */
const LABEL_HOURS = [1, 2, 3, 6, 12, 24, 48, 72, 120, 168, 240];

/** An alert sent about the error, marked on its chart. */
export interface AlertMark {
  at: Date;
  kind: string;
}

/**
 * A bar chart of occurrences per bucket (an error's page): one bar a bucket, a y axis from 0 to the
 * busiest bucket with gridlines at round counts (niceTicks), the time axis labelled in hours or
 * days (UTC, on round hours: "14:00", a day's first as "Nov 19"), each bar's time and count as its
 * title, and each alert sent within the chart's time marked by a line at its bucket.
 */
export function histogram(buckets: readonly Bucket[], title: string, alerts: readonly AlertMark[] = []): Html {
  const width = 720;
  const height = 220;
  const left = 40;
  const right = 10;
  const top = 14;
  const bottom = 36;
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const base = top + plotHeight;
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const slot = plotWidth / Math.max(1, buckets.length);
  const bar = Math.max(1, slot * 0.8);
  const parts = [
    `<svg class="histogram" role="img" aria-label="${escapeHtml(title)}" viewBox="0 0 ${width} ${height}" font-size="11">`,
    `<title>${escapeHtml(title)}</title>`,
  ];
  for (const tick of niceTicks(max)) {
    const y = round(base - (tick / max) * plotHeight);
    if (tick > 0) parts.push(`<line class="grid" x1="${left}" y1="${y}" x2="${width - right}" y2="${y}" stroke="currentColor" stroke-opacity="0.15"/>`);
    parts.push(`<text x="${left - 4}" y="${round(y + 4)}" text-anchor="end" fill="currentColor">${tick}</text>`);
  }
  parts.push(
    `<line x1="${left}" y1="${base}" x2="${width - right}" y2="${base}" stroke="currentColor"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${base}" stroke="currentColor"/>`,
  );
  buckets.forEach((b, i) => {
    const h = round((b.count / max) * plotHeight);
    const x = round(left + i * slot + (slot - bar) / 2);
    const label = escapeHtml(`${formatDatetime(b.start)}: ${b.count}`);
    parts.push(`<rect class="bar" x="${x}" y="${round(base - h)}" width="${round(bar)}" height="${h}"><title>${label}</title></rect>`);
  });
  const first = buckets[0];
  if (first) {
    const bucketMs = buckets.length > 1 ? buckets[1]!.start.getTime() - first.start.getTime() : HOUR_MS;
    const bucketHours = Math.max(1, Math.round(bucketMs / HOUR_MS));
    const every = LABEL_HOURS.find((hours) => hours >= bucketHours && (buckets.length * bucketHours) / hours <= 8) ?? LABEL_HOURS.at(-1)!;
    const center = (i: number) => round(left + i * slot + slot / 2);
    buckets.forEach((b, i) => {
      const hours = Math.round(b.start.getTime() / HOUR_MS);
      if (hours % every !== 0) return;
      const text = every >= 24 || b.start.getUTCHours() === 0 ? dayLabel(b.start) : hourLabel(b.start);
      parts.push(`<line x1="${center(i)}" y1="${base}" x2="${center(i)}" y2="${base + 4}" stroke="currentColor"/>`);
      parts.push(`<text class="time" x="${center(i)}" y="${base + 16}" text-anchor="middle" fill="currentColor">${text}</text>`);
    });
    const end = first.start.getTime() + buckets.length * bucketMs;
    for (const alert of alerts) {
      const at = alert.at.getTime();
      if (at < first.start.getTime() || at >= end) continue;
      const x = center(Math.floor((at - first.start.getTime()) / bucketMs));
      const label = escapeHtml(`${alert.kind} alert sent ${formatDatetime(alert.at)}`);
      parts.push(`<g class="alert-mark"><title>${label}</title><line x1="${x}" y1="${top}" x2="${x}" y2="${base}" stroke="currentColor" stroke-dasharray="3 3"/>` +
        `<path d="M${round(x - 5)} ${top - 8}h10l-5 8z" fill="currentColor"/></g>`);
    }
  }
  parts.push('</svg>');
  return trustedMarkup(parts.join(''));
}

/**
 * Horizontal bars of a breakdown (the error page's hosts, components, releases, environments): one
 * bar a row, as long as its share of the largest (an SVG: the CSP allows no inline style).
 */
export function shareBar(count: number, largest: number): Html {
  const width = round((count / Math.max(1, largest)) * 100);
  return trustedMarkup(`<svg class="share" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true"><rect x="0" y="0" width="${width}" height="8"/></svg>`);
}
