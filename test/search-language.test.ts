import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseSearch, printSearch, SearchSyntaxError, type SearchTerm } from '../src/tracker/search-language.js';

// The search language's syntax (docs/search.md): the parser read against its own printer over
// generated queries, and the refusals pointing where the query goes wrong.

const withoutPositions = (terms: SearchTerm[]) => terms.map((term) => ({ ...term, at: 0 }));

const text = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '"', '\\', ':', '!', '[', ']', ',', '*', '>', '<', '=', '-', '.', 'é', '\t'), maxLength: 12 });
const key = fc.stringMatching(/^[a-z][a-z0-9_.-]{0,10}$/);
const operator = fc.constantFrom<'=' | '>' | '>=' | '<' | '<='>('=', '>', '>=', '<', '<=');
const filter = fc.oneof(
  fc.record({ kind: fc.constant('filter' as const), key, negated: fc.boolean(), operator, values: text.map((v) => [v]), at: fc.constant(0) }),
  fc.record({ kind: fc.constant('filter' as const), key, negated: fc.boolean(), operator: fc.constant('=' as const), values: fc.array(text, { minLength: 2, maxLength: 5 }), at: fc.constant(0) }),
);
const freeText = fc.record({ kind: fc.constant('text' as const), text, at: fc.constant(0) });
const query = fc.array(fc.oneof(filter, freeText), { maxLength: 8 });

describe('the search language', () => {
  it('reads back what its printer writes, for any terms', () => {
    fc.assert(fc.property(query, (terms) => {
      assert.deepEqual(withoutPositions(parseSearch(printSearch(terms))), withoutPositions(terms));
    }), { numRuns: 2000 });
  });

  it('prints again what it read, for any query it accepts', () => {
    const typed = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '"', '\\', ':', '!', '[', ']', ',', '>', '=', 'k'), maxLength: 30 });
    fc.assert(fc.property(typed, (input) => {
      let terms: SearchTerm[];
      try {
        terms = parseSearch(input);
      } catch (error) {
        assert.ok(error instanceof SearchSyntaxError, String(error));
        assert.ok(error.position >= 0 && error.position <= input.length, `${error.position} in ${JSON.stringify(input)}`);
        return;
      }
      assert.deepEqual(withoutPositions(parseSearch(printSearch(terms))), withoutPositions(terms));
    }), { numRuns: 3000 });
  });

  it('reads every form of term', () => {
    assert.deepEqual(parseSearch('host:hv-07 !component:billing class:[Storage*, "Net Error"] counter:>100 last_seen:-1h "iscsi login" timeout is:unresolved tag.region:eu'), [
      { kind: 'filter', key: 'host', negated: false, operator: '=', values: ['hv-07'], at: 0 },
      { kind: 'filter', key: 'component', negated: true, operator: '=', values: ['billing'], at: 11 },
      { kind: 'filter', key: 'class', negated: false, operator: '=', values: ['Storage*', 'Net Error'], at: 30 },
      { kind: 'filter', key: 'counter', negated: false, operator: '>', values: ['100'], at: 60 },
      { kind: 'filter', key: 'last_seen', negated: false, operator: '=', values: ['-1h'], at: 73 },
      { kind: 'text', text: 'iscsi login', at: 87 },
      { kind: 'text', text: 'timeout', at: 101 },
      { kind: 'filter', key: 'is', negated: false, operator: '=', values: ['unresolved'], at: 109 },
      { kind: 'filter', key: 'tag.region', negated: false, operator: '=', values: ['eu'], at: 123 },
    ]);
    assert.deepEqual(parseSearch('  first_seen:>=2026-11-01  '), [{ kind: 'filter', key: 'first_seen', negated: false, operator: '>=', values: ['2026-11-01'], at: 2 }]);
    assert.deepEqual(parseSearch('message:"say \\"hi\\" \\\\ now"'), [{ kind: 'filter', key: 'message', negated: false, operator: '=', values: ['say "hi" \\ now'], at: 0 }]);
    assert.deepEqual(parseSearch('HOST:a'), [{ kind: 'filter', key: 'host', negated: false, operator: '=', values: ['a'], at: 0 }]);
    assert.deepEqual(parseSearch(''), []);
  });

  it('points at what is wrong', () => {
    const refusal = (input: string) => {
      try {
        parseSearch(input);
      } catch (error) {
        assert.ok(error instanceof SearchSyntaxError);
        return [error.position, error.reason];
      }
      assert.fail(`accepted ${input}`);
    };
    assert.deepEqual(refusal('host:"hv-07'), [5, 'a quote is not closed']);
    assert.deepEqual(refusal('a host:'), [7, 'a value must follow host:']);
    assert.deepEqual(refusal('class:[a, b'), [6, 'a list is not closed with ]']);
    assert.deepEqual(refusal('class:[a b]'), [9, 'list items are separated by commas']);
    assert.deepEqual(refusal('class:[a,,b]'), [9, 'a list item is missing']);
    assert.deepEqual(refusal('counter:>[1,2]'), [9, 'a list cannot follow a comparison']);
    assert.deepEqual(refusal('"a"b'), [3, 'a space must separate terms']);
    assert.deepEqual(refusal('x !timeout'), [2, '! must come before a key:value term']);
    assert.deepEqual(refusal('a\u0000'), [1, 'the NUL character (U+0000) is not allowed']);
    assert.deepEqual(refusal(Array.from({ length: 21 }, (_, i) => `t${i}`).join(' ')), [70, 'a query has at most 20 terms']);
    assert.equal(refusal('x'.repeat(1001))[1], 'a query is at most 1000 characters');
    assert.equal(new SearchSyntaxError(5, 'a quote is not closed').message, 'a quote is not closed at position 6');
  });
});
