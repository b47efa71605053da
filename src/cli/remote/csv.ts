import { parse } from 'csv-parse/sync';

/**
 * One field of RFC 4180 CSV: quoted when it holds a comma, quote, CR or LF (or leading/trailing space).
 * A field a spreadsheet would run as a formula (starting with = + - @, a tab or CR: a user's own name
 * `=HYPERLINK(...)` or `=cmd|...`) is written after an apostrophe, which shows it as text (docs/cli.md#users).
 */
function field(raw: string): string {
  const value = /^[=+\-@\t\r]/.test(raw) ? `'${raw}` : raw;
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** RFC 4180: CRLF line ends, a header row first. */
export function toCsv(rows: string[][]): string {
  return rows.map((row) => `${row.map(field).join(',')}\r\n`).join('');
}

/** The rows of a CSV file with a header row, as objects by column name; `line` is each record's first line. */
export function readCsv(text: string): Array<{ line: number; fields: Record<string, string> }> {
  const records: Array<{ record: Record<string, string>; info: { lines: number } }> = parse(text, {
    columns: (header: string[]) => header.map((name) => name.trim().toLowerCase()),
    skip_empty_lines: true,
    info: true,
    bom: true,
    trim: true,
  });
  return records.map(({ record, info }) => ({ line: info.lines, fields: record }));
}
