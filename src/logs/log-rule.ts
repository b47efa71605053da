import type { PromotionRule } from './log-errors.js';

/** An operator rule as cmi keeps it (docs/log-sources.md#operator-rules). */
export interface LogRule {
  id: number;
  /** Rules are tried by position, then id, before the shipped ones. */
  position: number;
  label: string;
  /** A glob the record's program must match; null: any program. */
  program: string | null;
  /** A glob the record's message must match (whole: `*` on either side to match inside it). */
  pattern: string;
  error_class: string;
  component: string | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export type LogRuleFields = Omit<LogRule, 'id' | 'created_at' | 'updated_at'>;

/** A run of a glob between two `*`: literal text, or (with `?`) an expression of fixed width. */
interface Segment {
  width: number;
  /** Whether it matches `text` at `at`. */
  at(text: string, at: number): boolean;
  /** The first position from `from` where it matches, or -1. */
  find(text: string, from: number): number;
}

function segmentOf(chars: Array<string | undefined>): Segment {
  // `undefined` stands for `?`.
  if (!chars.includes(undefined)) {
    const literal = chars.join('');
    return { width: literal.length, at: (text, at) => text.startsWith(literal, at), find: (text, from) => text.indexOf(literal, from) };
  }
  // No quantifier in it: a fixed-width expression, never backtracking more than its width at a position.
  const source = chars.map((char) => (char === undefined ? '[\\s\\S]' : char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))).join('');
  const sticky = new RegExp(source, 'y');
  const global = new RegExp(source, 'g');
  return {
    width: chars.length,
    at(text, at) {
      sticky.lastIndex = at;
      return sticky.test(text);
    },
    find(text, from) {
      global.lastIndex = from;
      return global.exec(text)?.index ?? -1;
    },
  };
}

/**
 * A glob (`*` any run of characters, `?` any one, `\\` makes the next one literal) as a matcher of whole
 * texts. The runs between `*`s are found one after the other, each at its leftmost place (which is
 * right for globs): literal ones by `indexOf`, those with `?` by an expression of fixed width. No
 * backtracking across runs, so no glob an operator writes makes a record slow. Case-sensitive. `exec`
 * answers as RegExp#exec does, without groups.
 */
export function globMatcher(glob: string): { test(text: string): boolean; exec(text: string): { groups?: undefined } | null } {
  const runs: Array<Array<string | undefined>> = [[]];
  for (let i = 0; i < glob.length; i += 1) {
    const char = glob[i] as string;
    if (char === '\\' && i + 1 < glob.length) runs.at(-1)!.push(glob[(i += 1)]);
    else if (char === '*') runs.push([]);
    else runs.at(-1)!.push(char === '?' ? undefined : char);
  }
  const segments = runs.map(segmentOf);
  const first = segments[0]!;
  const last = segments.at(-1)!;
  const middle = segments.slice(1, -1).filter((segment) => segment.width > 0);
  const test = (text: string): boolean => {
    if (segments.length === 1) return text.length === first.width && first.at(text, 0);
    if (!first.at(text, 0)) return false;
    let position = first.width;
    for (const segment of middle) {
      const found = segment.find(text, position);
      if (found === -1) return false;
      position = found + segment.width;
    }
    const end = text.length - last.width;
    return end >= position && last.at(text, end);
  };
  return { test, exec: (text) => (test(text) ? {} : null) };
}

/** The enabled rules as the log sources try them: by position, then id; each named `rule <id>` in an occurrence's context. */
export function promotionRulesOf(rules: readonly LogRule[]): PromotionRule[] {
  return rules
    .filter((rule) => rule.enabled)
    .sort((a, b) => a.position - b.position || a.id - b.id)
    .map((rule) => ({
      name: `rule ${rule.id}`,
      ...(rule.program === null ? {} : { program: globMatcher(rule.program) }),
      pattern: globMatcher(rule.pattern),
      error_class: rule.error_class,
      ...(rule.component === null ? {} : { component: rule.component }),
    }));
}
