/**
 * The errors list's search language (docs/search.md): Sentry-style terms separated by spaces.
 *
 *   query   = *space [ term *( 1*space term ) ] *space
 *   term    = [ "!" ] key ":" [ operator ] value      a filter
 *           / word / quoted                           free text
 *   key     = ALPHA *( ALPHA / DIGIT / "_" / "." / "-" )
 *   operator= ">=" / "<=" / ">" / "<"
 *   value   = "[" item *( *space "," *space item ) "]" / item
 *   item    = quoted / bare
 *   quoted  = DQUOTE *( any but DQUOTE and "\" / "\" any ) DQUOTE
 *
 * This module knows the syntax only; which keys exist and what their values mean is the plan's
 * (search-plan.ts). Every term keeps where it starts, so a refusal can point at it.
 */

export type SearchOperator = '=' | '>' | '>=' | '<' | '<=';

export interface SearchFilterTerm {
  kind: 'filter';
  key: string;
  negated: boolean;
  operator: SearchOperator;
  /** One value, or the items of a `[a, b]` list (any of them). */
  values: string[];
  /** Where the term starts in the query (0-based, in UTF-16 units as JavaScript counts them). */
  at: number;
}

export interface SearchTextTerm {
  kind: 'text';
  text: string;
  at: number;
}

export type SearchTerm = SearchFilterTerm | SearchTextTerm;

/** A query that is not in the language: what is wrong and where (0-based). */
export class SearchSyntaxError extends Error {
  constructor(readonly position: number, readonly reason: string) {
    super(`${reason} at position ${position + 1}`);
  }
}

export const SEARCH_LIMITS = { queryChars: 1000, terms: 20, listItems: 50 } as const;

const KEY = /[A-Za-z][A-Za-z0-9_.-]*/y;
const SPACE = /\s/;

/** The terms of `query`; a SearchSyntaxError when it is not in the language. */
export function parseSearch(query: string): SearchTerm[] {
  if (query.length > SEARCH_LIMITS.queryChars) throw new SearchSyntaxError(SEARCH_LIMITS.queryChars, `a query is at most ${SEARCH_LIMITS.queryChars} characters`);
  if (query.includes('\u0000')) throw new SearchSyntaxError(query.indexOf('\u0000'), 'the NUL character (U+0000) is not allowed');
  const terms: SearchTerm[] = [];
  let i = 0;

  const quoted = (): string => {
    const start = i;
    i++;
    let out = '';
    while (i < query.length && query[i] !== '"') {
      if (query[i] === '\\') {
        i++;
        if (i >= query.length) break;
      }
      out += query[i];
      i++;
    }
    if (i >= query.length) throw new SearchSyntaxError(start, 'a quote is not closed');
    i++;
    return out;
  };
  const bare = (stops: string): string => {
    const start = i;
    while (i < query.length && !SPACE.test(query[i]!) && !stops.includes(query[i]!)) i++;
    return query.slice(start, i);
  };
  const endOfTerm = (): void => {
    if (i < query.length && !SPACE.test(query[i]!)) throw new SearchSyntaxError(i, 'a space must separate terms');
  };
  const skipSpace = (): void => {
    while (i < query.length && SPACE.test(query[i]!)) i++;
  };

  skipSpace();
  while (i < query.length) {
    const at = i;
    if (terms.length === SEARCH_LIMITS.terms) throw new SearchSyntaxError(at, `a query has at most ${SEARCH_LIMITS.terms} terms`);
    const negated = query[i] === '!';
    KEY.lastIndex = negated ? i + 1 : i;
    const key = KEY.exec(query);
    if (key && query[KEY.lastIndex] === ':') {
      i = KEY.lastIndex + 1;
      let operator: SearchOperator = '=';
      for (const candidate of ['>=', '<=', '>', '<'] as const) {
        if (query.startsWith(candidate, i)) {
          operator = candidate;
          i += candidate.length;
          break;
        }
      }
      const values: string[] = [];
      if (query[i] === '[') {
        if (operator !== '=') throw new SearchSyntaxError(i, 'a list cannot follow a comparison');
        const open = i;
        i++;
        for (;;) {
          skipSpace();
          if (i >= query.length) throw new SearchSyntaxError(open, 'a list is not closed with ]');
          if (values.length === SEARCH_LIMITS.listItems) throw new SearchSyntaxError(i, `a list has at most ${SEARCH_LIMITS.listItems} items`);
          const itemAt = i;
          const item = query[i] === '"' ? quoted() : bare(',]"[');
          if (item === '' && query[itemAt] !== '"') throw new SearchSyntaxError(itemAt, 'a list item is missing');
          values.push(item);
          skipSpace();
          if (query[i] === ',') {
            i++;
            continue;
          }
          if (query[i] === ']') {
            i++;
            break;
          }
          if (i >= query.length) throw new SearchSyntaxError(open, 'a list is not closed with ]');
          throw new SearchSyntaxError(i, 'list items are separated by commas');
        }
      } else if (query[i] === '"') {
        values.push(quoted());
      } else {
        const valueAt = i;
        const value = bare('');
        if (value === '') throw new SearchSyntaxError(valueAt, `a value must follow ${key[0]}:`);
        values.push(value);
      }
      endOfTerm();
      terms.push({ kind: 'filter', key: key[0].toLowerCase(), negated, operator, values, at });
    } else if (query[i] === '"') {
      terms.push({ kind: 'text', text: quoted(), at });
      endOfTerm();
    } else {
      if (negated) throw new SearchSyntaxError(at, '! must come before a key:value term');
      terms.push({ kind: 'text', text: bare(''), at });
    }
    skipSpace();
  }
  return terms;
}

function quote(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/** A filter's value or a list's item: bare where that reads back the same. */
function printValue(value: string): string {
  const plain = value !== '' && !/[\s"\\[\],]/.test(value) && !/^[<>=]/.test(value);
  return plain ? value : quote(value);
}

/** The query that `parseSearch` reads back as `terms` (positions aside). */
export function printSearch(terms: readonly SearchTerm[]): string {
  return terms.map((term) => {
    if (term.kind === 'text') {
      const plain = term.text !== '' && !/[\s"]/.test(term.text) && !term.text.startsWith('!') && !/^[A-Za-z][A-Za-z0-9_.-]*:/.test(term.text);
      return plain ? term.text : quote(term.text);
    }
    const operator = term.operator === '=' ? '' : term.operator;
    const value = term.values.length === 1 ? printValue(term.values[0]!) : `[${term.values.map((v) => printValue(v)).join(', ')}]`;
    return `${term.negated ? '!' : ''}${term.key}:${operator}${value}`;
  }).join(' ');
}
