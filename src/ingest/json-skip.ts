import { randomBytes } from 'node:crypto';

/**
 * JSON.parse of an object whose value of one key the caller never reads (an event's breadcrumbs:
 * docs/sentry.md#what-is-recorded). That value is checked to be JSON without building it: most of
 * an event's bytes are its breadcrumbs, and building their objects was most of what parsing an
 * event cost (docs/benchmarks.md#error-tracker). What is not JSON is refused as JSON.parse refuses
 * it (a SyntaxError), wherever it is.
 */

const isWhitespace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

// Character by character (charCodeAt): a regular expression a token cost more than JSON.parse itself.
function skipWhitespace(text: string, at: number): number {
  while (isWhitespace(text.charCodeAt(at))) at += 1;
  return at;
}

/**
 * Skips strings with indexOf, the engine's own search (a loop over each character cost as much as
 * JSON.parse): a string ends at the next quote unless a backslash or a control character comes
 * first, and where the next of those are is searched once, then again only when passed.
 */
class Strings {
  private backslash = -1;
  private control = -1;
  // eslint-disable-next-line no-control-regex -- JSON refuses these characters unescaped in a string
  private static readonly CONTROL = /[\u0000-\u001f]/g;
  constructor(private readonly text: string) {}

  /** After the string whose opening quote is at `at`, or -1. */
  skip(at: number): number {
    const { text } = this;
    let i = at + 1;
    for (;;) {
      const quote = text.indexOf('"', i);
      if (quote === -1) return -1;
      if (this.control < i) this.control = this.next(Strings.CONTROL, i);
      if (this.control < quote) return -1;
      if (this.backslash < i) this.backslash = this.nextBackslash(i);
      if (this.backslash > quote) return quote + 1;
      // An escape before the quote: checked, and the search goes on after it.
      const b = this.backslash;
      const e = text.charCodeAt(b + 1);
      if (e === 0x75 /* u */) {
        if (!(isHex(text.charCodeAt(b + 2)) && isHex(text.charCodeAt(b + 3)) && isHex(text.charCodeAt(b + 4)) && isHex(text.charCodeAt(b + 5)))) return -1;
        i = b + 6;
      } else if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) i = b + 2;
      else return -1;
    }
  }

  private nextBackslash(from: number): number {
    const found = this.text.indexOf('\\', from);
    return found === -1 ? Infinity : found;
  }

  private next(pattern: RegExp, from: number): number {
    pattern.lastIndex = from;
    const found = pattern.exec(this.text);
    return found === null ? Infinity : found.index;
  }
}

/** After the digits from `at` (at least one), or -1. */
function skipDigits(text: string, at: number): number {
  if (!isDigit(text.charCodeAt(at))) return -1;
  while (isDigit(text.charCodeAt(at))) at += 1;
  return at;
}

/** After the number that starts at `at`, or -1. */
function skipNumber(text: string, at: number): number {
  if (text.charCodeAt(at) === 0x2d /* - */) at += 1;
  if (text.charCodeAt(at) === 0x30 /* 0 */) at += 1;
  else at = skipDigits(text, at);
  if (at !== -1 && text.charCodeAt(at) === 0x2e /* . */) at = skipDigits(text, at + 1);
  if (at !== -1 && (text.charCodeAt(at) | 0x20) === 0x65 /* e E */) {
    at += 1;
    const sign = text.charCodeAt(at);
    if (sign === 0x2b || sign === 0x2d) at += 1;
    at = skipDigits(text, at);
  }
  return at;
}

// Flat objects (strings, numbers, true, false and null as values; no whitespace, no escapes): most
// breadcrumbs. A run of them in an array is matched by one regular expression, which the engine
// compiles to a loop of its own; what it does not match is read below, character by character.
const FLAT_STRING = '"[^"\\\\\\u0000-\\u001f]*"';
const FLAT_VALUE = `(?:${FLAT_STRING}|-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null)`;
const FLAT_OBJECT = `\\{(?:${FLAT_STRING}:${FLAT_VALUE}(?:,${FLAT_STRING}:${FLAT_VALUE})*)?\\}`;
const FLAT_OBJECTS = new RegExp(`${FLAT_OBJECT}(?:,${FLAT_OBJECT})*`, 'y');

const ARRAY = 0;
const OBJECT = 1;

/**
 * Where the JSON value that starts at `at` (after any whitespace) ends, or -1 when there is none
 * there. Nesting is kept on a list, not the call stack, so no depth overflows it.
 */
export function endOfJsonValue(text: string, start: number): number {
  const strings = new Strings(text);
  const open: number[] = [];
  let at = start;
  for (;;) {
    // A value.
    at = skipWhitespace(text, at);
    const c = text.charCodeAt(at);
    if (c === 0x7b /* { */ && open[open.length - 1] === ARRAY && (FLAT_OBJECTS.lastIndex = at, FLAT_OBJECTS.test(text))) at = FLAT_OBJECTS.lastIndex;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      at = skipWhitespace(text, at + 1);
      const close = c === 0x7b ? 0x7d : 0x5d;
      if (text.charCodeAt(at) === close) at += 1;
      else {
        open.push(c === 0x7b ? OBJECT : ARRAY);
        if (c === 0x7b) {
          at = objectKey(text, at, strings);
          if (at === -1) return -1;
        }
        continue;
      }
    } else if (c === 0x22 /* " */) at = strings.skip(at);
    else if (c === 0x2d /* - */ || isDigit(c)) at = skipNumber(text, at);
    else if (text.startsWith('true', at)) at += 4;
    else if (text.startsWith('false', at)) at += 5;
    else if (text.startsWith('null', at)) at += 4;
    else return -1;
    if (at === -1) return -1;
    // After a value: the containers it ends, then a comma before the next value.
    for (;;) {
      if (open.length === 0) return at;
      at = skipWhitespace(text, at);
      const next = text.charCodeAt(at);
      const inside = open[open.length - 1];
      if (next === 0x2c /* , */) {
        at += 1;
        if (inside === OBJECT) {
          at = objectKey(text, skipWhitespace(text, at), strings);
          if (at === -1) return -1;
        }
        break;
      }
      if (next !== (inside === OBJECT ? 0x7d : 0x5d)) return -1;
      open.pop();
      at += 1;
    }
  }
}

/** After the key at `at` (a string) and its colon, or -1. */
function objectKey(text: string, at: number, strings: Strings): number {
  const end = text.charCodeAt(at) === 0x22 ? strings.skip(at) : -1;
  if (end === -1) return -1;
  const colon = skipWhitespace(text, end);
  return text.charCodeAt(colon) === 0x3a /* : */ ? colon + 1 : -1;
}

/** What stands in for the value left out: no text sent can name it (a random part, new each process). */
const SKIPPED = `\u0000skipped ${randomBytes(8).toString('hex')}`;
const PLACEHOLDER = JSON.stringify(SKIPPED);

/**
 * JSON.parse(text), except that the value of the object's own `key` is checked and left out
 * (undefined). The first `"key":` in the text is taken for it: wherever that text stands, what
 * follows its colon is a value (the quote before the colon closes a string, which the colon makes a
 * key) or the text is not JSON at all, which JSON.parse still finds. When it was not the object's
 * own key (one inside another value came first), the text is parsed whole.
 */
export function parseSkipping(text: string, key: string): unknown {
  const marker = `"${key}":`;
  const found = text.indexOf(marker);
  if (found === -1) return JSON.parse(text);
  const from = found + marker.length;
  const end = endOfJsonValue(text, from);
  if (end === -1) throw new SyntaxError(`Unexpected token in JSON at position ${from}`);
  const value: unknown = JSON.parse(`${text.slice(0, from)}${PLACEHOLDER}${text.slice(end)}`);
  if (typeof value === 'object' && value !== null && (value as Record<string, unknown>)[key] === SKIPPED) {
    (value as Record<string, unknown>)[key] = undefined;
    return value;
  }
  return JSON.parse(text);
}
