import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { weakEtag } from '../src/http/respond.js';

// ETags (docs/api.md#response-headers): W/"<SHA-1 of the body's UTF-8 bytes>", whatever was hashed before.

const sha1 = (text: string) => `W/"${createHash('sha1').update(Buffer.from(text, 'utf8')).digest('hex')}"`;

describe('weakEtag', () => {
  it('is the SHA-1 of the UTF-8 bytes, the same for a text and its bytes', () => {
    assert.equal(weakEtag('{"version":"6.7"}'), 'W/"0a3bf303531a651ce11eca0001f91b1f23f659dc"');
    assert.equal(weakEtag('Überlauf'), sha1('Überlauf'));
    assert.equal(weakEtag(Buffer.from('Überlauf', 'utf8')), sha1('Überlauf'));
  });

  it('answers every body right when asked again, past the bodies it remembers and past the length it remembers', () => {
    const bodies = [...Array.from({ length: 150 }, (_, i) => `{"n":${i}}`), 'x'.repeat(4096), 'y'.repeat(4097), ''];
    for (let round = 0; round < 3; round++) {
      for (const body of round === 1 ? [...bodies].reverse() : bodies) assert.equal(weakEtag(body), sha1(body), `round ${round}: ${body.slice(0, 20)}`);
    }
  });
});
