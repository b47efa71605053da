/**
 * What the remote commands print (docs/cli.md#output): aligned tables, colour only on a terminal and
 * never with a non-empty NO_COLOR, and a
 * progress bar on stderr only when stderr is a terminal.
 */

export interface Terminal {
  colour: boolean;
  progress: boolean;
}

export function terminal(env: NodeJS.ProcessEnv = process.env): Terminal {
  const noColour = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return { colour: process.stdout.isTTY === true && !noColour, progress: process.stderr.isTTY === true };
}

const CODES = { bold: 1, red: 31, green: 32, yellow: 33, dim: 2 } as const;
export type Style = keyof typeof CODES;

export function paint(term: Terminal, style: Style | undefined, text: string): string {
  return term.colour && style !== undefined ? `\x1b[${CODES[style]}m${text}\x1b[0m` : text;
}

/** One line fit for a table cell: the first line, control characters as spaces, cut with … past `max` characters. */
export function cell(text: string, max = Infinity): string {
  const characters = [...text.split(/\r\n|\r|\n/, 1)[0]!.replace(/\p{Cc}/gu, ' ')];
  return characters.length <= max ? characters.join('') : `${characters.slice(0, max - 1).join('')}…`;
}

/** Columns as wide as their widest cell, two spaces apart; the header bold, a cell's style from `styleOf`. */
export function table(term: Terminal, rows: string[][], styleOf: (row: number, column: number) => Style | undefined = () => undefined): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => [...row[i]!].length)));
  return rows.map((row, r) =>
    row
      .map((text, c) => {
        const padded = text + ' '.repeat(widths[c]! - [...text].length);
        return paint(term, r === 0 ? 'bold' : styleOf(r - 1, c), c === row.length - 1 ? text : padded);
      })
      .join('  ')
      .trimEnd(),
  );
}

/** A bar on stderr, redrawn in place; nothing at all when stderr is not a terminal. */
export function progressBar(term: Terminal, label: string) {
  const width = 30;
  let drawn = false;
  return {
    update(done: number, total: number | undefined): void {
      if (!term.progress) return;
      const known = total !== undefined && total > 0;
      const filled = known ? Math.min(width, Math.round((done / total) * width)) : 0;
      const bar = known ? `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}` : `${done}`;
      process.stderr.write(`\r${label} ${bar}`);
      drawn = true;
    },
    /** Clears the bar's line, so what follows starts on a clean one. */
    done(): void {
      if (drawn) process.stderr.write('\r\x1b[2K');
    },
  };
}
