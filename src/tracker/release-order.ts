/**
 * The order of releases (docs/search.md#releases): by semantic versioning where both names are
 * versions (`6.7.2`, `v1.2.0-rc.1`, `2.0`) of the same package (Sentry's `shop@1.2.3`: the part
 * before the last `@`, or none), else by when each was first seen (a release never seen is newer
 * than every release seen).
 */

const VERSION = /^(?:(.{1,100})@)?v?(\d{1,9})(?:\.(\d{1,9}))?(?:\.(\d{1,9}))?(?:-([0-9A-Za-z.-]{1,64}))?(?:\+[0-9A-Za-z.-]{1,64})?$/;

interface Version { pkg: string; numbers: [number, number, number]; pre: string[] }

export function versionOf(name: string): Version | undefined {
  const match = VERSION.exec(name);
  if (!match) return undefined;
  return { pkg: match[1] ?? '', numbers: [Number(match[2]), Number(match[3] ?? 0), Number(match[4] ?? 0)], pre: match[5] === undefined ? [] : match[5].split('.') };
}

/** Semantic versioning's precedence (its section 11): negative when `a` comes before `b`. */
export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a.numbers[i] !== b.numbers[i]) return a.numbers[i]! - b.numbers[i]!;
  // A pre-release comes before its release.
  if (a.pre.length === 0 || b.pre.length === 0) return (b.pre.length === 0 ? 0 : 1) - (a.pre.length === 0 ? 0 : 1);
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i]!;
    const y = b.pre[i]!;
    if (x === y) continue;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) return Number(x) - Number(y);
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.pre.length - b.pre.length;
}

/**
 * Whether `release` comes after `resolvedIn`; `firstSeen` answers when a release was first seen
 * (undefined: never).
 */
export function isLaterRelease(release: string, resolvedIn: string, firstSeen: (name: string) => string | undefined): boolean {
  if (release === resolvedIn) return false;
  const a = versionOf(release);
  const b = versionOf(resolvedIn);
  if (a && b && a.pkg === b.pkg) return compareVersions(a, b) > 0;
  const seen = firstSeen(release);
  const resolvedSeen = firstSeen(resolvedIn);
  if (seen === undefined || resolvedSeen === undefined) return true;
  return seen > resolvedSeen;
}
