import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { MAX_URL_CHARS, type Setting, SETTINGS } from '../src/config.js';

/**
 * The settings table of docs/operations.md#configuration, written from the one declaration of every
 * setting (src/config.ts SETTINGS): `npm run docs:settings` puts it between the markers below;
 * test/settings.test.ts fails when the document's table differs.
 */
export const DOCUMENT = new URL('../docs/operations.md', import.meta.url);
export const BEGIN = '<!-- settings: written by npm run docs:settings from src/config.ts SETTINGS; edit there, not here -->';
export const END = '<!-- /settings -->';

const code = (text: string) => `\`${text}\``;

/** "`a`, `b` or `c`". */
const either = (values: readonly string[]) => values.length === 1 ? code(values[0] as string) : `${values.slice(0, -1).map(code).join(', ')} or ${code(values.at(-1) as string)}`;

/** What values a setting takes, as its kind says. */
export function allowedValues(setting: Setting): string {
  switch (setting.kind) {
    case 'integer':
      return `an integer ${setting.min}–${setting.max}`;
    case 'boolean':
      return either(['true', 'false', '1', '0']);
    case 'enum':
      return either(setting.values);
    case 'url':
      return `an \`http\` or \`https\` URL of at most ${MAX_URL_CHARS} characters${setting.sentTo ? ', on a port fetch sends to ([the outbox](reporting-and-alerts.md#the-outbox))' : ''}`;
    case 'text':
      return setting.allowed ?? 'any text';
    case 'custom':
      return setting.allowed;
  }
}

/** The table: one row a setting, in the declaration's order. */
export function settingsTable(): string {
  const rows = (Object.entries(SETTINGS) as Array<[string, Setting]>).map(([variable, setting]) => {
    const flag = setting.flag === undefined ? '–' : code(setting.flag.split(' ')[0] as string);
    const fallback = setting.default === undefined ? 'unset' : code(setting.default);
    return `| ${code(variable)} | ${flag} | ${fallback} | ${allowedValues(setting)} | ${setting.docs ?? setting.help} |`;
  });
  return ['| variable | `cmi serve` flag | default | values | what it does |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** `document` with the text between its markers replaced by the table. */
export function withSettingsTable(document: string): string {
  const begin = document.indexOf(BEGIN);
  const end = document.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`docs/operations.md has no ${BEGIN} ... ${END} markers`);
  return `${document.slice(0, begin + BEGIN.length)}\n${settingsTable()}\n${document.slice(end)}`;
}

// `node --import tsx tools/settings-table.ts --write` (npm run docs:settings) rewrites the document's
// table; without --write it prints the table.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--write')) writeFileSync(DOCUMENT, withSettingsTable(readFileSync(DOCUMENT, 'utf8')));
  else process.stdout.write(`${settingsTable()}\n`);
}
