import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDatetime } from '../src/client/datetime.js';
import { CmiProtocolError } from '../src/client/errors.js';
import { decodeRecord } from '../src/client/records.js';
import { readXml } from '../src/client/xml-reader.js';
import { occurrenceResource } from '../src/tracker/error-details.resource.js';

describe('the client\'s datetimes (docs/client.md#datetimes)', () => {
  const instant = new Date('2026-11-20T10:00:00Z');
  for (const [text, expected] of [
    ['2026-11-20T10:00:00+00:00', instant],
    ['2026-11-20T10:00:00Z', instant],
    ['2026-11-20t10:00:00z', instant],
    ['2026-11-20T12:00:00+02:00', instant],
    ['2026-11-20T12:00:00+0200', instant],
    ['2026-11-20T05:00:00-05', instant],
    ['2026-11-20T10:00:00.517Z', new Date('2026-11-20T10:00:00.517Z')],
    ['2026-11-20T10:00:00,5+00:00', new Date('2026-11-20T10:00:00.500Z')],
    ['2026-11-20T10:00:00.123456789Z', new Date('2026-11-20T10:00:00.123Z')],
    ['20261120T100000Z', instant],
    ['20261120T120000+0200', instant],
    ['2024-02-29T00:00:00Z', new Date('2024-02-29T00:00:00Z')],
  ] as const) {
    it(`reads ${text}`, () => assert.deepEqual(parseDatetime(text), expected));
  }
  for (const text of ['2026-11-20T10:00:00', '2026-02-30T00:00:00Z', '2025-02-29T00:00:00Z', '2026-11-20T24:00:00Z', '2026-11-20T10:60:00Z', '2026-11-20T10:00:00+24:00', '20261120T100000', 'yesterday', '']) {
    it(`refuses ${JSON.stringify(text)}`, () => assert.equal(parseDatetime(text), undefined));
  }
});

describe('the client\'s XML reader (docs/client.md#formats)', () => {
  it('honours type and nil: integers, booleans, datetimes, arrays, empty arrays, text with its whitespace', () => {
    const { name, value } = readXml(`<?xml version="1.0" encoding="UTF-8"?>
<users type="array">
  <user>
    <id type="integer">-7</id>
    <ok type="boolean">false</ok>
    <at type="datetime">20261120T100000Z</at>
    <ratio type="decimal">1.5</ratio>
    <gone nil="true"/>
    <empty></empty>
    <text>  two
 lines &amp; &lt;tags&gt; &#233;&#x1F600; &quot;q&quot; &apos;a&apos;</text>
    <roles type="array"/>
  </user>
</users>`);
    assert.equal(name, 'users');
    // Records are read into objects without a prototype (an element named __proto__ is plain data).
    assert.deepEqual((value as object[]).map((record) => ({ ...record })), [{ id: -7, ok: false, at: new Date('2026-11-20T10:00:00Z'), ratio: 1.5, gone: null, empty: '', text: '  two\n lines & <tags> é😀 "q" \'a\'', roles: [] }]);
  });

  it('repeated elements become an array (an XML error body)', () => {
    assert.deepEqual({ ...(readXml('<errors><error>A</error><error>B</error></errors>').value as object) }, { error: ['A', 'B'] });
  });

  for (const [what, text] of [
    ['a DOCTYPE', '<!DOCTYPE user SYSTEM "file:///etc/passwd"><user/>'],
    ['an internal entity', '<?xml version="1.0"?>\n<!DOCTYPE u [<!ENTITY a "aaaa">]><u>&a;</u>'],
    ['an undeclared entity', '<u>&nbsp;</u>'],
    ['a bad integer', '<u><id type="integer">1.5</id></u>'],
    ['a bad boolean', '<u><b type="boolean">yes</b></u>'],
    ['a bad datetime', '<u><d type="datetime">2026-02-30T00:00:00Z</d></u>'],
    ['an unknown type', '<u><d type="symbol">x</d></u>'],
    ['no element', 'just text'],
  ] as const) {
    it(`refuses ${what}`, () => assert.throws(() => readXml(text), CmiProtocolError));
  }

  it('reads a record of either format into the same object: context is JSON in JSON and its text in XML', () => {
    const xml = readXml(`<occurrence><id type="integer">1</id><occurred_at type="datetime">2026-11-20T10:00:00+00:00</occurred_at><host nil="true"/><component>storage</component><request_id nil="true"/><message>m</message><context>{"vm_id":1042}</context></occurrence>`).value;
    const json = { id: 1, occurred_at: '2026-11-20T10:00:00+00:00', host: null, component: 'storage', request_id: null, message: 'm', context: { vm_id: 1042 } };
    const expected = { id: 1, occurred_at: new Date('2026-11-20T10:00:00Z'), host: null, component: 'storage', request_id: null, message: 'm', context: { vm_id: 1042 } };
    assert.deepEqual(decodeRecord(occurrenceResource, xml, 'xml'), expected);
    assert.deepEqual(decodeRecord(occurrenceResource, json, 'json'), expected);
  });
});
