/**
 * Reads a datetime in any form docs/api.md#datetimes accepts: `2026-11-20T10:00:00+00:00`, with a
 * fraction, `Z` or any offset, a space for `T`, or the basic form `20261120T100000Z`. A date alone is
 * midnight UTC. Undefined for anything else, including a day or time that does not exist.
 */
const EXTENDED = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const BASIC = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}(?:\d{2})?)$/i;

export function parseDatetime(text: string): Date | undefined {
  const match = EXTENDED.exec(text.trim()) ?? BASIC.exec(text.trim());
  if (!match) return undefined;
  const [year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match.slice(1);
  const parts = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const [y, mo, d, h, mi, s] = parts;
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const utc = Date.UTC(y, mo - 1, d, h, mi, s, Number(`0.${fraction || '0'}`) * 1000);
  // Date.UTC rolls 31 February over into March: such a day does not exist.
  if (new Date(Date.UTC(y, mo - 1, d)).getUTCDate() !== d) return undefined;
  let offsetMinutes = 0;
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const offsetHours = Number(digits.slice(0, 2));
    const offsetRest = Number(digits.slice(2) || '0');
    if (offsetHours > 23 || offsetRest > 59) return undefined;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (offsetHours * 60 + offsetRest);
  }
  const date = new Date(utc - offsetMinutes * 60_000);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
