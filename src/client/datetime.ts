/**
 * Reads the datetimes of an answer into `Date`s: the wire form `2026-11-20T10:00:00+00:00`, with a
 * fraction of a second, `Z` or any offset (`+0200`, `-05`), and the basic form `20261120T100000Z`
 * (docs/api.md#datetimes). A datetime without a zone, or a day or time that does not exist, is refused:
 * it cannot be read into one instant.
 */
const EXTENDED = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}(?::?\d{2})?)$/i;
const BASIC = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}(?:\d{2})?)$/i;

export function parseDatetime(text: string): Date | undefined {
  const match = EXTENDED.exec(text) ?? BASIC.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second, fraction = '', zone = 'Z'] = match.slice(1);
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  // Date.UTC rolls 31 February over into March: such a day does not exist.
  if (new Date(Date.UTC(y, mo - 1, d)).getUTCDate() !== d) return undefined;
  let offsetMinutes = 0;
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const hours = Number(digits.slice(0, 2));
    const minutes = Number(digits.slice(2) || '0');
    if (hours > 23 || minutes > 59) return undefined;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
  }
  const millis = Math.floor(Number(`0.${fraction || '0'}`) * 1000);
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s, millis) - offsetMinutes * 60_000);
}

/** A `Date` as a query parameter or body field: `2026-11-20T10:00:00.000Z`, which cmi reads. */
export function formatDatetime(value: Date): string {
  return value.toISOString();
}
