import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { histogram, niceTicks, shareBar, sparkline } from '../src/console/svg-charts.js';
import { lineChart, niceStep } from '../tools/bench/line-chart.js';

// One SVG renderer, src/console/svg-charts.ts, draws the console's charts and those of docs/benchmarks.md
// (tools/bench/scale.ts writes its line charts to docs/bench-*.svg): the same data, the same bytes.
describe('the SVG line chart', () => {
  it('draws a log x axis with a tick at each x, a 0-based y axis in steps of 1, 2 or 5, escaped text, and points sorted by x', () => {
    const svg = lineChart({
      title: 'A & B',
      xLabel: 'users',
      yLabel: 'ms',
      xScale: 'log',
      series: [
        { name: 'first <page>', points: [[1000, 1.5], [100000, 2.25]] },
        { name: 'last', points: [[10000, 0.5], [1000, 3]] },
      ],
    }).text;
    assert.equal(svg, [
      '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="360" viewBox="0 0 640 360" font-family="sans-serif" font-size="12">',
      '<rect width="640" height="360" fill="#fff"/>',
      '<text x="64" y="22" font-size="14" font-weight="bold">A &amp; B</text>',
      '<line x1="64" y1="304" x2="450" y2="304" stroke="#ddd"/>',
      '<text x="58" y="308" text-anchor="end">0</text>',
      '<line x1="64" y1="216" x2="450" y2="216" stroke="#ddd"/>',
      '<text x="58" y="220" text-anchor="end">1</text>',
      '<line x1="64" y1="128" x2="450" y2="128" stroke="#ddd"/>',
      '<text x="58" y="132" text-anchor="end">2</text>',
      '<line x1="64" y1="40" x2="450" y2="40" stroke="#ddd"/>',
      '<text x="58" y="44" text-anchor="end">3</text>',
      '<line x1="80" y1="304" x2="80" y2="309" stroke="#333"/>',
      '<text x="80" y="322" text-anchor="middle">1,000</text>',
      '<line x1="257" y1="304" x2="257" y2="309" stroke="#333"/>',
      '<text x="257" y="322" text-anchor="middle">10,000</text>',
      '<line x1="434" y1="304" x2="434" y2="309" stroke="#333"/>',
      '<text x="434" y="322" text-anchor="middle">100,000</text>',
      '<line x1="64" y1="304" x2="450" y2="304" stroke="#333"/>',
      '<line x1="64" y1="40" x2="64" y2="304" stroke="#333"/>',
      '<text x="257" y="346" text-anchor="middle">users</text>',
      '<text x="16" y="172" text-anchor="middle" transform="rotate(-90 16 172)">ms</text>',
      '<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="80,172 434,106"/>',
      '<circle cx="80" cy="172" r="3" fill="#1f77b4"/>',
      '<circle cx="434" cy="106" r="3" fill="#1f77b4"/>',
      '<line x1="464" y1="48" x2="484" y2="48" stroke="#1f77b4" stroke-width="2"/>',
      '<text x="490" y="52">first &lt;page&gt;</text>',
      '<polyline fill="none" stroke="#d62728" stroke-width="2" points="80,40 257,260"/>',
      '<circle cx="80" cy="40" r="3" fill="#d62728"/>',
      '<circle cx="257" cy="260" r="3" fill="#d62728"/>',
      '<line x1="464" y1="66" x2="484" y2="66" stroke="#d62728" stroke-width="2"/>',
      '<text x="490" y="70">last</text>',
      '</svg>',
    ].join('\n'));
  });

  it('draws a linear x axis at the ticks asked for, whatever the points, and a y axis in tenths for small values', () => {
    const svg = lineChart({
      title: 'Depth',
      xLabel: 'page',
      yLabel: 'ms',
      xScale: 'linear',
      xTicks: [0, 50, 100],
      series: [{ name: 'SQLite', points: [[75, 0.12], [25, 0.3]] }],
    }).text;
    assert.equal(svg, [
      '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="360" viewBox="0 0 640 360" font-family="sans-serif" font-size="12">',
      '<rect width="640" height="360" fill="#fff"/>',
      '<text x="64" y="22" font-size="14" font-weight="bold">Depth</text>',
      '<line x1="64" y1="304" x2="450" y2="304" stroke="#ddd"/>',
      '<text x="58" y="308" text-anchor="end">0</text>',
      '<line x1="64" y1="216" x2="450" y2="216" stroke="#ddd"/>',
      '<text x="58" y="220" text-anchor="end">0.1</text>',
      '<line x1="64" y1="128" x2="450" y2="128" stroke="#ddd"/>',
      '<text x="58" y="132" text-anchor="end">0.2</text>',
      '<line x1="64" y1="40" x2="450" y2="40" stroke="#ddd"/>',
      '<text x="58" y="44" text-anchor="end">0.3</text>',
      '<line x1="80" y1="304" x2="80" y2="309" stroke="#333"/>',
      '<text x="80" y="322" text-anchor="middle">0</text>',
      '<line x1="257" y1="304" x2="257" y2="309" stroke="#333"/>',
      '<text x="257" y="322" text-anchor="middle">50</text>',
      '<line x1="434" y1="304" x2="434" y2="309" stroke="#333"/>',
      '<text x="434" y="322" text-anchor="middle">100</text>',
      '<line x1="64" y1="304" x2="450" y2="304" stroke="#333"/>',
      '<line x1="64" y1="40" x2="64" y2="304" stroke="#333"/>',
      '<text x="257" y="346" text-anchor="middle">page</text>',
      '<text x="16" y="172" text-anchor="middle" transform="rotate(-90 16 172)">ms</text>',
      '<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="168.5,40 345.5,198.4"/>',
      '<circle cx="168.5" cy="40" r="3" fill="#1f77b4"/>',
      '<circle cx="345.5" cy="198.4" r="3" fill="#1f77b4"/>',
      '<line x1="464" y1="48" x2="484" y2="48" stroke="#1f77b4" stroke-width="2"/>',
      '<text x="490" y="52">SQLite</text>',
      '</svg>',
    ].join('\n'));
  });

  it('cuts the y axis into at most 5 steps of 1, 2 or 5 times a power of ten', () => {
    assert.deepEqual([0, 0.3, 3, 7, 23, 1000].map(niceStep), [1, 0.1, 1, 2, 5, 200]);
  });
});

// The console's charts (docs/console.md#errors) as they were before the line chart joined them; the
// sparkline now names the scale it was drawn to (data-scale), so the rows of one page share one.
describe('the console charts', () => {
  const buckets = [
    { start: new Date('2026-11-20T08:00:00Z'), count: 0 },
    { start: new Date('2026-11-20T09:00:00Z'), count: 3 },
    { start: new Date('2026-11-20T10:00:00Z'), count: 1 },
  ];

  it('draws a sparkline scaled to the busiest bucket, its total in the title, escaped', () => {
    assert.equal(sparkline(buckets, 'in 24 h <x>').text, '<svg class="sparkline" role="img" aria-label="4 occurrences in 24 h &lt;x&gt;" data-scale="3" width="120" height="24" viewBox="0 0 120 24"><title>4 occurrences in 24 h &lt;x&gt;</title><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="0,22 60,2 120,15.3"/></svg>');
    assert.equal(sparkline([{ start: new Date(0), count: 1 }], "it's").text, '<svg class="sparkline" role="img" aria-label="1 occurrence it&#39;s" data-scale="1" width="120" height="24" viewBox="0 0 120 24"><title>1 occurrence it&#39;s</title><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="0,2"/></svg>');
    // On a page whose busiest hour saw 6: half the height for 3.
    assert.equal(sparkline(buckets, 'in 24 h', 6).text, '<svg class="sparkline" role="img" aria-label="4 occurrences in 24 h" data-scale="6" width="120" height="24" viewBox="0 0 120 24"><title>4 occurrences in 24 h</title><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="0,22 60,12 120,18.7"/></svg>');
  });

  it('draws a bar per bucket with its time and count, gridlines at round counts, hours under the axis, alerts marked', () => {
    // The alert at 09:30 marks the 09:00 bar; the one at 11:00 is past the chart, not marked.
    const alerts = [{ at: new Date('2026-11-20T09:30:00Z'), kind: 'spike' }, { at: new Date('2026-11-20T11:00:00Z'), kind: 'new' }];
    assert.equal(histogram(buckets, 'Occurrences & more', alerts).text, '<svg class="histogram" role="img" aria-label="Occurrences &amp; more" viewBox="0 0 720 220" font-size="11"><title>Occurrences &amp; more</title><text x="36" y="188" text-anchor="end" fill="currentColor">0</text><line class="grid" x1="40" y1="127.3" x2="710" y2="127.3" stroke="currentColor" stroke-opacity="0.15"/><text x="36" y="131.3" text-anchor="end" fill="currentColor">1</text><line class="grid" x1="40" y1="70.7" x2="710" y2="70.7" stroke="currentColor" stroke-opacity="0.15"/><text x="36" y="74.7" text-anchor="end" fill="currentColor">2</text><line class="grid" x1="40" y1="14" x2="710" y2="14" stroke="currentColor" stroke-opacity="0.15"/><text x="36" y="18" text-anchor="end" fill="currentColor">3</text><line x1="40" y1="184" x2="710" y2="184" stroke="currentColor"/><line x1="40" y1="14" x2="40" y2="184" stroke="currentColor"/><rect class="bar" x="62.3" y="184" width="178.7" height="0"><title>2026-11-20T08:00:00+00:00: 0</title></rect><rect class="bar" x="285.7" y="14" width="178.7" height="170"><title>2026-11-20T09:00:00+00:00: 3</title></rect><rect class="bar" x="509" y="127.3" width="178.7" height="56.7"><title>2026-11-20T10:00:00+00:00: 1</title></rect><line x1="151.7" y1="184" x2="151.7" y2="188" stroke="currentColor"/><text class="time" x="151.7" y="200" text-anchor="middle" fill="currentColor">08:00</text><line x1="375" y1="184" x2="375" y2="188" stroke="currentColor"/><text class="time" x="375" y="200" text-anchor="middle" fill="currentColor">09:00</text><line x1="598.3" y1="184" x2="598.3" y2="188" stroke="currentColor"/><text class="time" x="598.3" y="200" text-anchor="middle" fill="currentColor">10:00</text><g class="alert-mark"><title>spike alert sent 2026-11-20T09:30:00+00:00</title><line x1="375" y1="14" x2="375" y2="184" stroke="currentColor" stroke-dasharray="3 3"/><path d="M370 6h10l-5 8z" fill="currentColor"/></g></svg>');
    assert.equal(histogram([], 'none').text, '<svg class="histogram" role="img" aria-label="none" viewBox="0 0 720 220" font-size="11"><title>none</title><text x="36" y="188" text-anchor="end" fill="currentColor">0</text><line class="grid" x1="40" y1="14" x2="710" y2="14" stroke="currentColor" stroke-opacity="0.15"/><text x="36" y="18" text-anchor="end" fill="currentColor">1</text><line x1="40" y1="184" x2="710" y2="184" stroke="currentColor"/><line x1="40" y1="14" x2="40" y2="184" stroke="currentColor"/></svg>');
  });

  it('picks round steps for the counts: 1, 2 or 5 times a power of ten, at most five', () => {
    assert.deepEqual([0, 1, 3, 5, 7, 9, 10, 60, 99, 1234].map((max) => niceTicks(max)),
      [[0], [0, 1], [0, 1, 2, 3], [0, 1, 2, 3, 4, 5], [0, 2, 4, 6], [0, 2, 4, 6, 8], [0, 2, 4, 6, 8, 10], [0, 20, 40, 60], [0, 20, 40, 60, 80], [0, 500, 1000]]);
  });

  it('labels the time axis with round hours, a day by its date, at most eight labels', () => {
    const times = (hours: number, count: number, from: number) =>
      [...histogram(Array.from({ length: count }, (_, i) => ({ start: new Date(from + i * hours * 3_600_000), count: 1 })), 't').text.matchAll(/<text class="time"[^>]*>([^<]*)/g)].map((m) => m[1]);
    assert.deepEqual(times(1, 24, Date.UTC(2026, 10, 19, 15)), ['15:00', '18:00', '21:00', 'Nov 20', '03:00', '06:00', '09:00', '12:00']);
    assert.deepEqual(times(1, 168, Date.UTC(2026, 10, 13, 15)), ['Nov 14', 'Nov 15', 'Nov 16', 'Nov 17', 'Nov 18', 'Nov 19', 'Nov 20']);
    assert.deepEqual(times(24, 30, Date.UTC(2026, 9, 21)), ['Oct 24', 'Oct 29', 'Nov 3', 'Nov 8', 'Nov 13', 'Nov 18']);
  });

  it('draws a breakdown\'s bar as its share of the largest', () => {
    assert.equal(shareBar(3, 4).text, '<svg class="share" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true"><rect x="0" y="0" width="75" height="8"/></svg>');
    assert.equal(shareBar(0, 0).text, '<svg class="share" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true"><rect x="0" y="0" width="0" height="8"/></svg>');
  });
});
