import { parse } from 'csv-parse/sync';

/** One field of RFC 4180 CSV: quoted when it holds a comma, quote, CR or LF (or leading/trailing space). */
function field(value: string): string {
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
