/**
 * docs/benchmarks.md as `npm run bench` writes it: an introduction, then one section per part of the
 * suite between `<!-- name -->` markers, in a fixed order. A run of some sections (`--only`) keeps
 * the others as the file had them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { ROOT } from './support.js';

/** Where a run happened: written at the top of each section it produced. */
export interface RunInfo {
  command: string;
  date: string;
  commit: string;
  machine: string;
  quick: boolean;
}

/** The options of a section measured in wrk rounds (auth, workers). */
export interface RoundsOptions {
  info: RunInfo;
  rounds: number;
  seconds: number;
}

export function runInfo(command: string, quick: boolean): RunInfo {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  const cpu = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  const cores = execFileSync('nproc', { encoding: 'utf8' }).trim();
  return {
    command,
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    commit: `${git('rev-parse', '--short', 'HEAD')}${dirty ? '-dirty' : ''}`,
    machine: `${cpu}, \`nproc\` ${cores}, Node ${process.version}`,
    quick,
  };
}

/** The line a section starts with: which command, when, on which commit and machine. */
export function provenance(info: RunInfo): string {
  return `${info.quick ? '**Quick run** (small data, short runs: a check that it works, not figures to quote). ' : ''}` +
    `\`${info.command}\` on ${info.date}, commit ${info.commit}; ${info.machine}.`;
}

/** The sections in the order the document lists them; `npm run bench -- --only` takes these names. */
export const SECTIONS = ['throughput', 'profile', 'start', 'scale', 'auth', 'workers', 'errors', 'queries', 'webhooks', 'logs', 'mixed'] as const;
export type SectionName = (typeof SECTIONS)[number];

/** What the document starts with: how it is made, and how to read its figures. */
export function introduction(quick: boolean): string {
  return `
# Benchmarks${quick ? ' (quick run)' : ''}

${quick ? '**A quick run** (`npm run bench -- --quick`): small data and 1 s runs, to check that the suite works. Its figures are not the ones to quote: see [docs/benchmarks.md](../docs/benchmarks.md).\n\n' : ''}Written by \`npm run bench\` (tools/bench/suite.ts), which makes its own data (tools/bench/datasets.ts) in a temp
directory (SQLite) and, with \`--postgres URL\` or \`BENCH_POSTGRES_URL\`, in a schema of its own on PostgreSQL,
dropped after; compiles \`dist/\` and runs cmi as \`npm start\` does. It needs \`wrk\` (installed with
\`apt-get install -y wrk\` when missing) and \`taskset\`. Options:

- \`--only ${SECTIONS.join(',')}\` (any of them): runs those sections and rewrites only them; the others stay
  as this file has them. Each section says which command, commit and machine produced it.
- \`--workers 1\`: the throughput figures with one process only (default: \`--workers 1\` and \`--workers 2\`).
- \`--errors C,D\`: some of the error tracker's scenarios (A-F).
- \`--quick\`: about a minute (SQLite, 10,000 users and errors, 1 s runs, the main throughput scenarios, start
  and size); writes \`.bench/quick.md\` and \`.bench/bench-*.svg\` (git-ignored), never this file.

Throughput figures are ratios to two references answering the same bytes in the same run: a bare fastify
server that makes the minimal check of the same credential (the goals' reference: what cmi costs beyond
fastify and the check it must make anyway) and a raw node:http server (what the machine allows). They are
medians over rounds in which the targets take turns, with the rounds' spread shown, because this machine (a
2-core VM) is noisy: the raw server alone has ranged from 8,000 to 29,000 requests/s between runs minutes
apart, so compare figures from one run, not across runs. No timing is asserted by \`npm test\`.
`;
}

/** The markdown between `<!-- name -->` and `<!-- /name -->` of each section in `doc`. */
export function sectionsOf(doc: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of doc.matchAll(/<!-- ([a-z-]+) -->\n([\s\S]*?)\n<!-- \/\1 -->/g)) found.set(match[1] as string, match[2] as string);
  return found;
}

/**
 * The whole document: `intro`, then each section of `SECTIONS` that `sections` holds, then the marked
 * sections no benchmark of the suite writes (measured by hand, such as `metrics-cost`), as they were.
 */
export function composeDocument(intro: string, sections: Map<string, string>): string {
  const names = [...SECTIONS.filter((name) => sections.has(name)), ...[...sections.keys()].filter((name) => !(SECTIONS as readonly string[]).includes(name))];
  const blocks = names.map((name) => `<!-- ${name} -->\n${(sections.get(name) as string).trim()}\n<!-- /${name} -->`);
  return `${intro.trim()}\n\n${blocks.join('\n\n')}\n`;
}

/** Writes `path` whole: `fresh` sections replace those of the file, the file's others are kept. */
export function writeDocument(path: string, intro: string, fresh: Map<string, string>): void {
  let kept = new Map<string, string>();
  try {
    kept = sectionsOf(readFileSync(path, 'utf8'));
  } catch {
    // No document yet: only the fresh sections.
  }
  for (const [name, text] of fresh) kept.set(name, text);
  writeFileSync(path, composeDocument(intro, kept));
}
