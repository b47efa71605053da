/**
 * The one writer of everything the `cmi` command prints (docs/cli.md#output). A command never writes to
 * stdout or stderr itself: it hands this module an `Output`, and
 *
 * - human output (`human(...)`: lines of text, some runs styled) has every control character of every
 *   line shown visibly (`visible`: ESC as `\x1b`, a backslash as `\\`), so text a user or a reporter chose
 *   (a login, a name, an error's class or message, a server's refusal) cannot move the cursor, retitle the
 *   window, write to the clipboard or reorder what follows; the only raw control characters written are the
 *   newlines between lines and the colours this module adds itself, on a terminal without NO_COLOR;
 * - exact output (`exact(...)`: JSON, XML, CSV) is written byte for byte, as machines read it.
 *
 * test/cli-output.test.ts holds src/cli/ to it: no other file of it touches console, stdout or stderr.
 * It writes to the current run's stdout and stderr (common/io.ts): the process's own for the real
 * command, a test's for a command run in process (docs/cli.md#running-in-process).
 */

import { type CliIo, currentIo, quiet, type Sink } from './io.js';

/** The process's own environment, working directory, input and output: what the real command runs on (main.ts). */
export const processIo = (): CliIo => ({ env: process.env, cwd: process.cwd(), stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });

/** Where `to` goes in the current run (outside one, the process's own stream). */
const sink = (to: 'stdout' | 'stderr'): Sink => currentIo()?.[to] ?? (to === 'stdout' ? process.stdout : process.stderr);

const CODES = { bold: 1, red: 31, green: 32, yellow: 33, dim: 2 } as const;
export type Style = keyof typeof CODES;

/** Text printed in a style (on a terminal, with colours on). */
export interface Run {
  readonly text: string;
  readonly style?: Style;
}

/** One line for people: its text, or its runs. A newline inside it is shown as `\n`, never broken. */
export type Line = string | readonly (string | Run)[];

export type Output = { readonly kind: 'human'; readonly lines: readonly Line[] } | { readonly kind: 'exact'; readonly text: string };

/** Lines for people, each escaped when written. */
export const human = (...lines: Line[]): Output => ({ kind: 'human', lines });

/** Text for machines (JSON, XML, CSV), written as it is, then `end` (a newline unless told). */
export const exact = (text: string, end = '\n'): Output => ({ kind: 'exact', text: text + end });

export const styled = (style: Style | undefined, text: string): Run => (style === undefined ? { text } : { text, style });

/**
 * Characters never written raw: the backslash (the escape's own mark, so every output reads back to one
 * input), C0 controls and DEL, C1 controls (U+0080 to U+009F, which some terminals take as ESC sequences),
 * the line and paragraph separators, the bidirectional marks, embeddings, overrides and isolates (which
 * reorder what a reader sees), and lone surrogates (which would be written as U+FFFD, two inputs alike).
 */
const UNSAFE = /[\\\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|\p{Cs}/gu;

const hex = (code: number, digits: number) => code.toString(16).padStart(digits, '0');

/**
 * `text` fit for a terminal: a backslash as `\\`, a code point up to U+00FF among the unsafe as `\xHH`, a
 * higher one as `\uHHHH`, each other character as it is. Distinct texts stay distinct (the escapes read
 * back unambiguously). `keep` names control characters to leave raw (only `\n`, for text of several lines).
 */
export function visible(text: string, keep: '' | '\n' = ''): string {
  return text.replace(UNSAFE, (character) => {
    if (character === keep) return character;
    if (character === '\\') return '\\\\';
    const code = character.codePointAt(0)!;
    return code <= 0xff ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`;
  });
}

/** Columns a text takes once escaped (code points; wide characters are not measured). */
export const width = (text: string): number => [...visible(text)].length;

const colourOn = (stream: Sink, env: NodeJS.ProcessEnv): boolean =>
  stream.isTTY === true && !(env.NO_COLOR !== undefined && env.NO_COLOR !== '');

function renderLine(line: Line, colour: boolean): string {
  const runs = typeof line === 'string' ? [line] : line;
  return runs
    .map((run) => {
      const { text, style } = typeof run === 'string' ? { text: run, style: undefined } : run;
      return colour && style !== undefined ? `\x1b[${CODES[style]}m${visible(text)}\x1b[0m` : visible(text);
    })
    .join('');
}

/** What `output` writes, as bytes: human lines escaped and joined by newlines (coloured if `colour`), exact text as it is. */
export function render(output: Output, colour = false): string {
  return output.kind === 'exact' ? output.text : output.lines.map((line) => `${renderLine(line, colour)}\n`).join('');
}

/** Writes `output` to stdout (or stderr): the only way the command prints. */
export function write(output: Output, to: 'stdout' | 'stderr' = 'stdout', env: NodeJS.ProcessEnv = currentIo()?.env ?? process.env): void {
  const stream = sink(to);
  stream.write(render(output, colourOn(stream, env)));
}

/** Each line on stderr, escaped: what the command says of a failure or a warning. */
export const complain = (...lines: string[]): void => write(human(...lines), 'stderr');

/** Text that commander composed (help, its usage errors), which may span lines: escaped but for its newlines. */
export function writeText(to: 'stdout' | 'stderr', text: string): void {
  sink(to).write(visible(text, '\n'));
}

/** Commander's colours: off for NO_COLOR or FORCE_COLOR 0/false, on for another FORCE_COLOR or CLICOLOR_FORCE (commander's own rule, on the run's environment). */
function commanderColour(stream: Sink, env: NodeJS.ProcessEnv): boolean | undefined {
  if (env.NO_COLOR || env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return false;
  if (env.FORCE_COLOR || env.CLICOLOR_FORCE !== undefined) return true;
  return stream.isTTY && stream.hasColors?.();
}

/**
 * Commander's output settings for a program (main.ts gives them to run.ts's program): its help and errors
 * through writeText, its help's width and colours from the current run's streams and environment, as
 * commander itself reads them from the process's.
 */
export const commanderOutput = () => ({
  writeOut: (text: string) => writeText('stdout', text),
  writeErr: (text: string) => writeText('stderr', text),
  // Undefined off a terminal, as commander's own (its types say number; it then takes 80).
  getOutHelpWidth: () => (sink('stdout').isTTY ? sink('stdout').columns : undefined) as number,
  getErrHelpWidth: () => (sink('stderr').isTTY ? sink('stderr').columns : undefined) as number,
  getOutHasColors: () => commanderColour(sink('stdout'), currentIo()?.env ?? process.env) === true,
  getErrHasColors: () => commanderColour(sink('stderr'), currentIo()?.env ?? process.env) === true,
});

/** One line fit for a table cell: the first line of `text`, cut with … past `max` characters. */
export function cell(text: string, max = Infinity): string {
  const characters = [...text.split(/\r\n|\r|\n/, 1)[0]!];
  return characters.length <= max ? characters.join('') : `${characters.slice(0, max - 1).join('')}…`;
}

/**
 * Columns as wide as their widest cell once escaped, two spaces apart, after `indent`; the header bold, a
 * cell's style from `styleOf` (its row counted from the first after the header).
 */
export function table(rows: readonly (readonly string[])[], styleOf: (row: number, column: number) => Style | undefined = () => undefined, indent = ''): Line[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => width(row[i]!))));
  return rows.map((row, r) => {
    const runs: (string | Run)[] = [indent];
    row.forEach((text, c) => {
      const last = c === row.length - 1;
      runs.push(styled(r === 0 ? 'bold' : styleOf(r - 1, c), text));
      if (!last) runs.push(' '.repeat(widths[c]! - width(text) + 2));
    });
    // No spaces at the end of a line (a last column left empty, or of spaces).
    const textOf = (run: string | Run) => (typeof run === 'string' ? run : run.text);
    while (runs.length > 1 && /^ *$/.test(textOf(runs.at(-1)!))) runs.pop();
    return runs;
  });
}

/** Rows a second, as the bar shows it: whole above 10, one decimal below (`0.4/s`, `12/s`, `3400/s`). */
export function rate(done: number, seconds: number): string {
  const perSecond = seconds > 0 ? done / seconds : 0;
  return `${perSecond >= 10 ? Math.round(perSecond) : perSecond.toFixed(1)}/s`;
}

/**
 * A bar on stderr, redrawn in place: the rows done (of how many, when known) and the rate since it
 * started; nothing at all when stderr is not a terminal or the run was asked for --quiet
 * (docs/cli.md#progress). Its label is the command's own. `now` (milliseconds) is the clock a test gives.
 */
export function progressBar(label: string, now: () => number = () => performance.now()) {
  const stderr = sink('stderr');
  const shown = stderr.isTTY === true && !quiet();
  const width = 30;
  const started = now();
  let drawn = false;
  return {
    update(done: number, total: number | undefined): void {
      if (!shown) return;
      const known = total !== undefined && total > 0;
      const filled = known ? Math.min(width, Math.round((done / total) * width)) : 0;
      const bar = known ? `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}` : `${done}`;
      // Then erased to the line's end: a shorter rate leaves nothing of the longer one before it.
      stderr.write(`\r${visible(label)} ${bar} ${rate(done, (now() - started) / 1000)}\x1b[K`);
      drawn = true;
    },
    /** Clears the bar's line, so what follows starts on a clean one. */
    done(): void {
      if (drawn) stderr.write('\r\x1b[2K');
    },
  };
}
