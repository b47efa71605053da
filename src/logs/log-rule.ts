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

/** How much of a message an operator's glob is matched against: bounded work for every record. */
export const GLOB_TEXT_CHARS = 4096;

/**
 * A glob (`*` any run of characters, `?` any one, `\` makes the next one literal) as a matcher of whole
 * texts, in O(text × glob) steps at worst: no regular expression, so no pattern an operator writes can
 * make a record take exponential time. Case-sensitive. `exec` answers as RegExp#exec does, without groups.
 */
export function globMatcher(glob: string): { test(text: string): boolean; exec(text: string): { groups?: undefined } | null } {
  // Tokens: a literal character, or a wildcard.
  const tokens: Array<{ kind: 'char'; char: string } | { kind: 'any' } | { kind: 'one' }> = [];
  for (let i = 0; i < glob.length; i += 1) {
    const char = glob[i] as string;
    if (char === '\\' && i + 1 < glob.length) tokens.push({ kind: 'char', char: glob[(i += 1)] as string });
    else if (char === '*') {
      if (tokens.at(-1)?.kind !== 'any') tokens.push({ kind: 'any' });
    } else if (char === '?') tokens.push({ kind: 'one' });
    else tokens.push({ kind: 'char', char });
  }
  const test = (whole: string): boolean => {
    const text = whole.length > GLOB_TEXT_CHARS ? whole.slice(0, GLOB_TEXT_CHARS) : whole;
    // The classic greedy match: on a mismatch, go back to just after the last `*` and let it take one more character.
    let t = 0;
    let p = 0;
    let starAt = -1;
    let resumeAt = 0;
    while (t < text.length) {
      const token = tokens[p];
      if (token !== undefined && (token.kind === 'one' || (token.kind === 'char' && token.char === text[t]))) {
        t += 1;
        p += 1;
      } else if (token?.kind === 'any') {
        starAt = p;
        resumeAt = t;
        p += 1;
      } else if (starAt !== -1) {
        p = starAt + 1;
        resumeAt += 1;
        t = resumeAt;
      } else {
        return false;
      }
    }
    while (tokens[p]?.kind === 'any') p += 1;
    return p === tokens.length;
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
