import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { LRUCache } from 'lru-cache';
import { errorTrackerLimits } from '../shared/limits.js';

// How occurrences of an error are grouped under one fingerprint, and how long their text may be.
// The rule is documented in docs/error-grouping.md; change both together.

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `    at findUser (/srv/cmi/src/store/users.ts:42:17)` or `    at /srv/cmi/src/x.ts:3:9`. */
const V8_STACK_FRAME = /^\s*at (?:(.+?) \((.+):(\d+):\d+\)|(.+):(\d+):\d+)$/;

/**
 * A V8 stack in the backtrace form of docs/api.md#infrastructure-errors: one frame per line, `src/store/users.ts:42:in 'findUser'`. Frames
 * below the outermost one of cmi's own code (the framework calling in) are left out: they differ with
 * how the request got there, and would split one fault into several fingerprints.
 */
export function backtraceFromStack(stack: string | undefined): string {
  if (!stack) return '';
  const frames: string[] = [];
  for (const line of stack.split('\n')) {
    const match = V8_STACK_FRAME.exec(line);
    if (!match) continue;
    const operation = match[1] ?? '<anonymous>';
    let location = (match[2] ?? match[4] ?? '').replace(/^file:\/\//, '');
    if (location.startsWith(PROJECT_ROOT)) location = location.slice(PROJECT_ROOT.length);
    frames.push(`${location}:${match[3] ?? match[5]}:in '${operation}'`);
  }
  const outermostOwn = frames.findLastIndex((frame) => frame.startsWith('src/'));
  return (outermostOwn === -1 ? frames : frames.slice(0, outermostOwn + 1)).join('\n');
}

/** The marker that stands for a run of library frames in the identity. */
export const LIBRARY_FRAMES = '<library>';

/** One backtrace line, understood: where it is and what it ran, or (unrecognised) its text. */
type Frame =
  | { kind: 'frame'; file?: string; operation?: string; go?: 'function' | 'file' }
  | { kind: 'library' }
  | { kind: 'text'; text: string }
  | { kind: 'skip' };

/** `src/store/users.ts:42:in 'findUser'`, `app/models/user.rb:42:17:in `find'` (cmi and Ruby). */
const RUBY_FRAME = /^(.+?):\d+(?::\d+)?:in [`'](.*)'$/;
/** The location of a V8 frame: `path:42:17` or `path:42`. */
const V8_LOCATION = /^(.+?):\d+(?::\d+)?$/;
/** V8 frames without a file: built-ins (`<anonymous>`, `native`) and `Promise.all (index 0)`. */
const V8_RUNTIME = /^(?:<anonymous>|native|index \d+)$/;
/** `File "app/views.py", line 42, in index` (Python). */
const PYTHON_FRAME = /^File "(.+)", line \d+(?:, in (.+))?$/;
/** `/src/app/main.go:42 +0x1d` (Go, the second line of a frame). */
const GO_FILE = /^(.+\.go):\d+(?: \+0x[0-9a-f]+)?$/;
/** `main.(*Server).handle(0xc000010000, {0x1, 0x2})`, `pkg.Func(...)`, `panic({0x4a, 0x5})` (Go, the first line). */
const GO_FUNCTION = /^(\S*\.\S*|panic)\(.*\)$/;
/** `created by main.main in goroutine 1` (Go). */
const GO_CREATED_BY = /^(created by \S+)(?: in goroutine \d+)?$/;
/** `goroutine 7 [running]:` (Go): a header, not a frame. */
const GO_GOROUTINE = /^goroutine \d+ \[.*\]:$/;
/** The line truncateBacktrace puts where it left frames out. */
const OMITTED_FRAMES = /^… \[\d+ frames omitted\]$/;
/** Line and column numbers in any other line: `:42` or `:42:17` before `:`, `)`, white space or the end; `line 42`. */
const LINE_NUMBERS = /:\d+(?=[:)\s]|$)|\bline \d+/g;

const isLibraryFile = (file: string) => /node_modules[/\\]/.test(file) || file.startsWith('node:') || file.startsWith('internal/');

const located = (file: string, operation?: string, go?: 'file'): Frame =>
  isLibraryFile(file) ? { kind: 'library' } : { kind: 'frame', file, operation, go };

/** `at op (location)` or `at location` (V8), when the location is one V8 writes. */
function v8Frame(line: string): Frame | undefined {
  if (!line.startsWith('at ')) return undefined;
  const rest = line.slice(3);
  const open = rest.indexOf(' (');
  const [operation, location] = rest.endsWith(')') && open !== -1 ? [rest.slice(0, open), rest.slice(open + 2, -1)] : ['<anonymous>', rest];
  if (V8_RUNTIME.test(location)) return { kind: 'library' };
  const match = V8_LOCATION.exec(location);
  return match ? located(match[1]!, operation) : undefined;
}

function parseFrame(line: string): Frame {
  if (line === '' || GO_GOROUTINE.test(line) || OMITTED_FRAMES.test(line)) return { kind: 'skip' };
  let match = RUBY_FRAME.exec(line);
  if (match) return located(match[1]!, match[2]);
  const v8 = v8Frame(line);
  if (v8) return v8;
  if ((match = PYTHON_FRAME.exec(line))) return located(match[1]!, match[2]);
  if ((match = GO_FILE.exec(line))) return located(match[1]!, undefined, 'file');
  if ((match = GO_FUNCTION.exec(line) ?? GO_CREATED_BY.exec(line))) return { kind: 'frame', operation: match[1], go: 'function' };
  const text = line.replace(LINE_NUMBERS, (number) => (number.startsWith(':') ? '' : 'line')).trim();
  return isLibraryFile(text) ? { kind: 'library' } : { kind: 'text', text };
}

/** A frame as it enters the identity: `file:in 'operation'`, `file`, or `in 'operation'`. */
function frameIdentity(frame: Frame): string {
  if (frame.kind === 'library') return LIBRARY_FRAMES;
  if (frame.kind === 'text') return frame.text;
  if (frame.kind === 'skip') return '';
  if (frame.file === undefined) return `in '${frame.operation}'`;
  return frame.operation === undefined ? frame.file : `${frame.file}:in '${frame.operation}'`;
}

/**
 * The frames of a backtrace as they enter the identity, innermost first: a run of library frames
 * becomes one LIBRARY_FRAMES marker; a Go function line and the file line after it become one frame.
 */
export function identityFrames(backtrace: string): string[] {
  const frames: Frame[] = [];
  for (const line of truncateBacktrace(backtrace).split('\n')) {
    const frame = parseFrame(line.trim());
    const previous = frames.at(-1);
    if (frame.kind === 'skip') continue;
    if (frame.kind === 'library' && previous?.kind === 'library') continue;
    if (frame.kind === 'frame' && frame.go === 'file' && previous?.kind === 'frame' && previous.go === 'function') {
      frames[frames.length - 1] = { kind: 'frame', file: frame.file, operation: previous.operation };
      continue;
    }
    frames.push(frame);
  }
  return frames.map(frameIdentity);
}

/**
 * The string whose SHA-256 is the fingerprint: the error class (trimmed, at most 255 characters),
 * then one line per identity frame; with no frame of the application's own (no frames, or library
 * frames only), the masked message instead of the frames. Lines are joined by `\n`.
 */
export function groupingIdentity(errorClass: string, backtrace: string, message: string): string {
  const frames = identityFrames(backtrace);
  const own = frames.some((frame) => frame !== LIBRARY_FRAMES);
  return [truncateErrorClass(errorClass), ...(own ? frames : [maskMessage(truncateMessage(message))])].join('\n');
}

/**
 * The fingerprint that groups occurrences of one error: SHA-256 (64 lowercase hex) of the grouping
 * identity (docs/error-grouping.md). The same fault at shifted lines, or reached through more or fewer
 * framework frames, has one fingerprint; another class or another path through the application's
 * own code has another.
 */
export function fingerprint(errorClass: string, backtrace: string, message: string): string {
  // A stream of reports repeats a few errors: their fingerprints (a pure function of the three
  // texts) are remembered, the FINGERPRINTS_KEPT used last of texts up to REMEMBERED_CHARS (16 MB at most).
  const key = `${errorClass}\u0000${message}\u0000${backtrace}`;
  const known = fingerprints.get(key);
  if (known !== undefined) return known;
  const computed = createHash('sha256').update(groupingIdentity(errorClass, backtrace, message)).digest('hex');
  if (key.length > REMEMBERED_CHARS) return computed;
  fingerprints.set(key, computed);
  return computed;
}

/** How many fingerprints `fingerprint` remembers, and of texts how long. */
const FINGERPRINTS_KEPT = 1_000;
const REMEMBERED_CHARS = 8_192;
const fingerprints = new LRUCache<string, string>({ max: FINGERPRINTS_KEPT });

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
/** A run that may be an IPv6 address (two colons at least), with an optional zone; isIPv6Text decides. */
const IPV6_CANDIDATE = /(?<![\w.:])(?=[0-9a-f.]*:[0-9a-f.]*:)[0-9a-f:.]+(?:%[\w.-]+)?/gi;
const IPV4 = /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g;
const HEX = /\b0x[0-9a-f]+\b|\b(?=[a-f]*\d)[0-9a-f]{8,}\b/gi;
const NUMBER = /\d+(?:\.\d+)?/g;

const H16 = '[0-9a-f]{1,4}';
const IPV6_FORMS = new RegExp(
  `^(?:(?:${H16}:){7}${H16}|(?:(?:${H16}:){0,6}${H16})?::(?:(?:${H16}:){0,6}${H16})?)(?::(?:\\d{1,3}\\.){3}\\d{1,3})?(?:%[\\w.-]+)?$`,
  'i',
);

/** An IPv6 address in any of its textual forms, with a digit in it (so `Abc::Def` is not one). */
function isIPv6Text(text: string): boolean {
  if (!/\d/.test(text) || text === '::') return false;
  if (!IPV6_FORMS.test(text)) return false;
  const groups = text.replace(/%.*$/, '').split(/::?/).filter((group) => group !== '');
  const ipv4Tail = groups.at(-1)?.includes('.') ? 1 : 0;
  const count = groups.length + ipv4Tail;
  return text.includes('::') ? count <= 7 : count === 8;
}

/**
 * A message with its variable parts masked, so occurrences that differ only in them read the same:
 * UUIDs become `<uuid>`, IPv4 (with an optional port) and IPv6 addresses `<ip>`, `0x` hex and hex
 * words of 8 or more characters with a digit `<hex>`, other numbers `<n>`. Trimmed.
 */
export function maskMessage(message: string): string {
  return message
    .replace(UUID, '<uuid>')
    .replace(IPV6_CANDIDATE, (candidate) => {
      // A sentence may end right after the address: try without trailing dots and colons too.
      const bare = candidate.replace(/[.:]+$/, '');
      if (isIPv6Text(candidate)) return '<ip>';
      return isIPv6Text(bare) ? `<ip>${candidate.slice(bare.length)}` : candidate;
    })
    .replace(IPV4, '<ip>')
    .replace(HEX, '<hex>')
    .replace(NUMBER, '<n>')
    .trim();
}

/** The first `max` UTF-16 code units of text, one fewer if the cut would split a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

const truncationMarker = (removed: number) => `\n… [truncated: ${removed} more characters]`;

/**
 * A message of at most errorTrackerLimits.messageChars characters (UTF-16 code units). A longer one
 * is cut, and a marker saying how many characters were cut off is appended within the limit.
 */
export function truncateMessage(message: string): string {
  const limit = errorTrackerLimits.messageChars;
  if (message.length <= limit) return message;
  // The marker's length depends on the number it carries, which depends on where the cut falls.
  let kept = limit - truncationMarker(message.length - limit).length;
  while (kept + truncationMarker(message.length - kept).length > limit) kept -= 1;
  const head = cut(message, kept);
  return head + truncationMarker(message.length - head.length);
}

/**
 * A backtrace of at most errorTrackerLimits.backtraceFrames lines, each at most frameChars long.
 * A longer one keeps its innermost (first) and outermost (last) frames, with one line in between
 * saying how many were left out: `… [N frames omitted]`.
 */
export function truncateBacktrace(backtrace: string): string {
  const { backtraceFrames, innermostFrames, outermostFrames, frameChars } = errorTrackerLimits;
  let lines = backtrace.split('\n');
  if (lines.length > backtraceFrames) {
    const omitted = lines.length - innermostFrames - outermostFrames;
    lines = [...lines.slice(0, innermostFrames), `… [${omitted} frames omitted]`, ...lines.slice(-outermostFrames)];
  }
  return lines.map((line) => cut(line, frameChars)).join('\n');
}

/** An error class, trimmed, of at most errorTrackerLimits.errorClassChars characters. */
export function truncateErrorClass(errorClass: string): string {
  return cut(errorClass.trim(), errorTrackerLimits.errorClassChars).trimEnd();
}
