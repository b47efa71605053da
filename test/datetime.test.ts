import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDatetime } from '../src/shared/datetime.js';

// Every form docs/api.md#datetimes says a reader accepts, and what it refuses.
describe('parseDatetime', () => {
  const iso = (text: string) => parseDatetime(text)?.toISOString();

  it('reads the written form, fractions, Z, any offset, a space for T, a date alone, and the basic form', () => {
    assert.equal(iso('2026-11-20T10:00:00+00:00'), '2026-11-20T10:00:00.000Z');
    assert.equal(iso('2026-11-20T10:00:00.123456Z'), '2026-11-20T10:00:00.123Z');
    assert.equal(iso('2026-11-20T12:30:00+02:30'), '2026-11-20T10:00:00.000Z');
    assert.equal(iso('2026-11-20T05:00:00-0500'), '2026-11-20T10:00:00.000Z');
    assert.equal(iso('2026-11-20 10:00'), '2026-11-20T10:00:00.000Z');
    assert.equal(iso('2026-11-20'), '2026-11-20T00:00:00.000Z');
    assert.equal(iso('20261120T100000Z'), '2026-11-20T10:00:00.000Z');
    assert.equal(iso('20261120T120000+0200'), '2026-11-20T10:00:00.000Z');
    assert.equal(iso('2024-02-29T00:00:00Z'), '2024-02-29T00:00:00.000Z');
  });

  it('refuses what is no datetime, or a day or time that does not exist', () => {
    for (const text of ['', 'yesterday', '2026-11-20T10', '2026-13-01', '2026-02-29', '2026-11-31', '2026-11-20T24:00:00Z',
      '2026-11-20T10:60:00Z', '2026-11-20T10:00:00+24:00', '20261120T100000', '1700000000', '2026-11-20T10:00:00Zjunk']) {
      assert.equal(parseDatetime(text), undefined, text);
    }
  });
});
