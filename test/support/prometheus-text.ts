/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests of /metrics: it
 * throws on anything the format does not allow, where Prometheus itself would refuse the scrape (a bad
 * name or label, an unescaped quote, a TYPE after its samples or given twice, a family split in two, a
 * duplicate series, a histogram whose buckets are not cumulative or whose +Inf bucket is not its count).
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string | undefined;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<string, readonly string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'], counter: [], gauge: [], untyped: [] };

/** A float as Prometheus reads one (Go's strconv.ParseFloat: NaN and Inf in any case, prom-client writes `Nan`). */
function parseValue(text: string, line: string): number {
  const word = text.toLowerCase();
  if (word === '+inf' || word === 'inf' || word === '+infinity' || word === 'infinity') return Infinity;
  if (word === '-inf' || word === '-infinity') return -Infinity;
  if (word === 'nan') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value "${text}" in: ${line}`);
  return Number(text);
}

/** `{a="x",b="y"}` from position `start` (just after the metric name); returns the labels and where they end. */
function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  while (line[i] !== '}') {
    const eq = line.indexOf('=', i);
    if (eq === -1) throw new Error(`bad labels in: ${line}`);
    const name = line.slice(i, eq);
    if (!LABEL_NAME.test(name) || name in labels) throw new Error(`bad or repeated label name "${name}" in: ${line}`);
    if (line[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let value = '';
    let j = eq + 2;
    for (;; j++) {
      const c = line[j];
      if (c === undefined) throw new Error(`unterminated label value in: ${line}`);
      if (c === '"') break;
      if (c === '\\') {
        const next = line[++j];
        if (next === '\\') value += '\\';
        else if (next === '"') value += '"';
        else if (next === 'n') value += '\n';
        else throw new Error(`bad escape in: ${line}`);
      } else value += c;
    }
    labels[name] = value;
    i = j + 1;
    if (line[i] === ',') i += 1;
    else if (line[i] !== '}') throw new Error(`bad label separator in: ${line}`);
  }
  return { labels, end: i + 1 };
}

export function parsePrometheusText(text: string): Map<string, Family> {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the text does not end with a newline');
  const families = new Map<string, Family>();
  const finished = new Set<string>();
  const series = new Set<string>();
  let current: Family | undefined;
  const familyOf = (sampleName: string): Family => {
    for (const family of families.values()) {
      if (family.name === sampleName) return family;
      if ((SUFFIXES[family.type] ?? []).some((suffix) => sampleName === family.name + suffix)) return family;
    }
    throw new Error(`sample ${sampleName} has no TYPE before it`);
  };
  for (const line of text.split('\n').slice(0, -1)) {
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!match) continue;
      const [, keyword, name, rest] = match as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      let family = families.get(name);
      if (family && finished.has(name)) throw new Error(`${keyword} for ${name} after its samples`);
      if (!family) {
        family = { name, type: 'untyped', help: undefined, samples: [] };
        families.set(name, family);
      }
      if (keyword === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`bad type in: ${line}`);
        if (family.type !== 'untyped' || family.samples.length > 0) throw new Error(`second TYPE for ${name}`);
        family.type = rest;
      } else {
        if (family.help !== undefined) throw new Error(`second HELP for ${name}`);
        family.help = rest;
      }
      continue;
    }
    if (line === '') continue; // the format ignores empty lines
    if (line.trim() === '') throw new Error('a line of only blanks');
    const nameEnd = line.search(/[{ ]/);
    const name = line.slice(0, nameEnd);
    if (!METRIC_NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
    const { labels, end } = line[nameEnd] === '{' ? parseLabels(line, nameEnd) : { labels: {}, end: nameEnd };
    const parts = line.slice(end).split(' ');
    if (parts[0] !== '' || parts.length < 2 || parts.length > 3) throw new Error(`bad sample line: ${line}`);
    const value = parseValue(parts[1] as string, line);
    if (parts[2] !== undefined && !/^-?\d+$/.test(parts[2])) throw new Error(`bad timestamp in: ${line}`);
    const family = familyOf(name);
    if (current !== family) {
      if (current) finished.add(current.name);
      if (finished.has(family.name)) throw new Error(`samples of ${family.name} are not together`);
      current = family;
    }
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (series.has(key)) throw new Error(`duplicate series: ${line}`);
    series.add(key);
    family.samples.push({ name, labels, value });
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** Buckets rise with `le` and never fall; the +Inf bucket equals _count, for each set of other labels. */
function checkHistogram(family: Family): void {
  const groups = new Map<string, Sample[]>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    if (sample.name.endsWith('_bucket') && le === undefined) throw new Error(`${family.name}: a bucket without le`);
    groups.set(key, [...(groups.get(key) ?? []), sample]);
  }
  for (const samples of groups.values()) {
    const buckets = samples.filter((s) => s.name.endsWith('_bucket'));
    let previous = -Infinity;
    let count = 0;
    for (const bucket of buckets) {
      if (bucket.value < count || parseValue(bucket.labels.le as string, bucket.labels.le as string) <= previous) throw new Error(`${family.name}: buckets not cumulative`);
      previous = parseValue(bucket.labels.le as string, bucket.labels.le as string);
      count = bucket.value;
    }
    const total = samples.find((s) => s.name.endsWith('_count'));
    if (previous !== Infinity || total === undefined || total.value !== count) throw new Error(`${family.name}: the +Inf bucket is not the count`);
  }
}

/** The value of the one sample named `name` with exactly these labels (0 when there is none). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name !== name) continue;
      const keys = Object.keys(sample.labels);
      if (keys.length === Object.keys(labels).length && keys.every((key) => sample.labels[key] === labels[key])) return sample.value;
    }
  }
  return 0;
}
