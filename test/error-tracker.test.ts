import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { trackerRepository } from '../src/tracker/tracker.store.js';
import { createTestApp, type TestApp } from './support/app.js';
import {
  call, ERRORS, errorJson, errorRow, errorXml, forbiddenJson, forbiddenXml, histogramRows, hourOf, idsOf, JSON_TYPE, NOT_FOUND_JSON,
  occurrenceRows, recordOf, report, reportXml, rowCounts, wire, XML_DECLARATION, XML_TYPE,
} from './support/error-reports.js';
import { ACCESS_DENIED_XML, assertAccessDenied } from './support/http.js';
import { cmiVersion } from '../src/version/version.js';

// The error tracker's reading and acting endpoints over HTTP (docs/api.md#infrastructure-errors,
// docs/error-grouping.md#truncation), in JSON and XML, on whichever database the suite runs on. Ids are
// read from answers: on PostgreSQL an upsert draws on the id sequence, so ids may skip.

const count422 = '{"errors":{"count":["must be an integer from 1 to 10000"]}}';
const FINGERPRINT_MESSAGE = 'must be 64 lowercase hexadecimal characters (a SHA-256)';
const DATETIME_MESSAGE = 'must be a datetime such as 2026-11-20T10:00:00+00:00';

describe('error reports: the optional fields (docs/api.md#post-sysadmin_toolsinfrastructureerrors)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(); // the test clock stands at 2026-11-20T10:00:00Z
  });
  after(() => t.close());

  it('reads occurred_at in every accepted form: it sets the occurrence time, the record times and the histogram hour', async () => {
    const forms: Array<[given: string, stored: string, answered: string]> = [
      ['20261120T060000Z', '2026-11-20T06:00:00.000Z', '2026-11-20T06:00:00+00:00'],
      ['2026-11-20T07:00:00Z', '2026-11-20T07:00:00.000Z', '2026-11-20T07:00:00+00:00'],
      ['2026-11-20T08:45:30.750Z', '2026-11-20T08:45:30.750Z', '2026-11-20T08:45:30+00:00'],
      ['2026-11-20T11:15:00+02:00', '2026-11-20T09:15:00.000Z', '2026-11-20T09:15:00+00:00'],
    ];
    let id = 0;
    for (const [i, [given, , answered]] of forms.entries()) {
      const res = await report(t, { error_class: 'Clock::Probe', message: 'probe', occurred_at: given });
      assert.equal(res.statusCode, i === 0 ? 201 : 200, res.body);
      const record = recordOf(res);
      if (i === 0) id = record.id;
      assert.equal(record.id, id);
      assert.equal(record.counter, i + 1);
      assert.equal(record.created_at, '2026-11-20T06:00:00+00:00', given);
      assert.equal(record.updated_at, answered, given);
    }
    assert.deepEqual((await occurrenceRows(t, id)).map((row) => [row.ordinal, row.occurred_at]), forms.map(([, stored], i) => [i + 1, stored]));
    assert.deepEqual(await histogramRows(t, id), forms.map(([, stored]) => [hourOf(stored), 1]));

    const occurrences = await call(t, 'GET', `${ERRORS}/${id}/occurrences.json`);
    assert.deepEqual((JSON.parse(occurrences.body) as Array<{ occurrence: { occurred_at: string } }>).map((o) => o.occurrence.occurred_at), forms.map(([, , answered]) => answered).reverse());
    const histogram = await call(t, 'GET', `${ERRORS}/${id}/histogram.json?period=24h`);
    const counted = (JSON.parse(histogram.body) as Array<{ bucket: { start: string; count: number } }>).filter((b) => b.bucket.count > 0);
    assert.deepEqual(counted, ['06', '07', '08', '09'].map((h) => ({ bucket: { start: `2026-11-20T${h}:00:00+00:00`, count: 1 } })));
  });

  it('takes occurred_at up to 5 minutes ahead of the clock and refuses it beyond, naming occurred_at; an unreadable one too', async () => {
    const before = await rowCounts(t);
    for (const ahead of ['2026-11-20T10:05:00.001Z', '20261120T120501+0200', '2026-11-20T10:06:00+00:00']) {
      const res = await report(t, { error_class: 'Clock::Ahead', occurred_at: ahead });
      assert.equal(res.statusCode, 422, ahead);
      assert.equal(res.body, '{"errors":{"occurred_at":["must not be more than 5 minutes in the future"]}}');
    }
    for (const unreadable of ['2026-02-30T10:00:00Z', 'yesterday', '2026-11-20T10:00:00 +0000x']) {
      const res = await report(t, { error_class: 'Clock::Ahead', occurred_at: unreadable });
      assert.equal(res.statusCode, 422, unreadable);
      assert.equal(res.body, `{"errors":{"occurred_at":["${DATETIME_MESSAGE}"]}}`);
    }
    assert.deepEqual(await rowCounts(t), before);
    const edge = await report(t, { error_class: 'Clock::Ahead', occurred_at: '2026-11-20T10:05:00Z' });
    assert.equal(edge.statusCode, 201, edge.body);
    assert.equal(recordOf(edge).updated_at, '2026-11-20T10:05:00+00:00');
  });

  it('adds count (1..10000, a number or its text) to the counter, the histogram and the breakdown; refuses 0, 10001, "abc"', async () => {
    const counts: Array<[given: unknown, counter: number]> = [[3, 3], ['10000', 10003], [1, 10004]];
    let id = 0;
    for (const [given, counter] of counts) {
      const res = await report(t, { error_class: 'Count::Probe', message: 'aggregated', count: given });
      assert.equal(res.statusCode, counter === 3 ? 201 : 200, res.body);
      id = recordOf(res).id;
      assert.equal(recordOf(res).counter, counter);
    }
    assert.deepEqual((await occurrenceRows(t, id)).map((row) => [row.ordinal, row.count]), [[3, 3], [10003, 10000], [10004, 1]]);
    assert.deepEqual(await histogramRows(t, id), [[hourOf('2026-11-20T10:00:00Z'), 10004]]);
    const breakdown = await call(t, 'GET', `${ERRORS}/${id}/breakdown.json?by=component`);
    assert.equal(breakdown.body, '[{"group":{"value":null,"count":10004}}]');

    const before = await rowCounts(t);
    for (const bad of [0, 10001, 'abc', 2.5, -1, '1e3', true]) {
      const res = await report(t, { error_class: 'Count::Probe', message: 'aggregated', count: bad });
      assert.equal(res.statusCode, 422, String(bad));
      assert.equal(res.body, count422, String(bad));
    }
    assert.deepEqual(await rowCounts(t), before);
    assert.equal(Number((await errorRow(t, id))?.counter), 10004);
  });

  it('keeps host, component, request_id (trimmed) and context, and answers them with the occurrences: an object in JSON, its text in XML', async () => {
    const context = { vm: 42, tags: ['a', 'b'], nested: { ok: true, note: 'a < b & c' } };
    const first = await report(t, { error_class: 'Detail::Probe', message: 'probe 1', host: ' hv-7 ', component: 'hypervisor', request_id: 'req-42', context });
    assert.equal(first.statusCode, 201, first.body);
    const id = recordOf(first).id;
    t.time.advance(60);
    const second = await report(t, { error_class: 'Detail::Probe', message: 'probe 2', host: '', component: null });
    assert.equal(second.statusCode, 200, second.body);

    const rows = await occurrenceRows(t, id);
    assert.deepEqual(
      rows.map((row) => [row.host, row.component, row.request_id, row.message, row.context, row.count]),
      [
        ['hv-7', 'hypervisor', 'req-42', 'probe 1', JSON.stringify(context), 1],
        [null, null, null, 'probe 2', null, 1],
      ],
    );
    const [one, two] = rows.map((row) => Number(row.id));

    const json = await call(t, 'GET', `${ERRORS}/${id}/occurrences.json`);
    assert.equal(json.statusCode, 200);
    assert.equal(json.headers['content-type'], JSON_TYPE);
    assert.equal(
      json.body,
      JSON.stringify([
        { occurrence: { id: two, occurred_at: '2026-11-20T10:01:00+00:00', host: null, component: null, request_id: null, message: 'probe 2', context: null } },
        { occurrence: { id: one, occurred_at: '2026-11-20T10:00:00+00:00', host: 'hv-7', component: 'hypervisor', request_id: 'req-42', message: 'probe 1', context } },
      ]),
    );
    const xml = await call(t, 'GET', `${ERRORS}/${id}/occurrences.xml`);
    assert.equal(xml.statusCode, 200);
    assert.equal(xml.headers['content-type'], XML_TYPE);
    assert.equal(
      xml.body,
      `${XML_DECLARATION}<occurrences type="array">
  <occurrence>
    <id type="integer">${two}</id>
    <occurred_at type="datetime">2026-11-20T10:01:00+00:00</occurred_at>
    <host nil="true"/>
    <component nil="true"/>
    <request_id nil="true"/>
    <message>probe 2</message>
    <context nil="true"/>
  </occurrence>
  <occurrence>
    <id type="integer">${one}</id>
    <occurred_at type="datetime">2026-11-20T10:00:00+00:00</occurred_at>
    <host>hv-7</host>
    <component>hypervisor</component>
    <request_id>req-42</request_id>
    <message>probe 1</message>
    <context>{"vm":42,"tags":["a","b"],"nested":{"ok":true,"note":"a &lt; b &amp; c"}}</context>
  </occurrence>
</occurrences>
`,
    );
  });

  it('takes a context of 16 KiB as JSON and refuses one a byte larger (bytes, not characters), or one that is not an object', async () => {
    // {"pad":""} is 10 bytes.
    const exact = await report(t, { error_class: 'Context::Probe', context: { pad: 'x'.repeat(16_374) } });
    assert.equal(exact.statusCode, 201, exact.body.slice(0, 200));
    const before = await rowCounts(t);
    for (const pad of ['x'.repeat(16_375), 'é'.repeat(8_188)]) {
      const res = await report(t, { error_class: 'Context::Probe', context: { pad } });
      assert.equal(res.statusCode, 422);
      assert.equal(res.body, '{"errors":{"context":["is too large (maximum is 16384 bytes as JSON)"]}}');
    }
    for (const bad of [[1, 2], 'not json', 7, '[1]']) {
      const res = await report(t, { error_class: 'Context::Probe', context: bad });
      assert.equal(res.statusCode, 422, JSON.stringify(bad));
      assert.equal(res.body, '{"errors":{"context":["must be a JSON object"]}}');
    }
    assert.deepEqual(await rowCounts(t), before);
  });

  it("groups two reports with different classes and messages under the reporter's own fingerprint", async () => {
    const fingerprint = '0123456789abcdef'.repeat(4);
    const first = await report(t, { error_class: 'Agent::DiskFull', message: 'sda full', fingerprint });
    assert.equal(first.statusCode, 201, first.body);
    const second = await report(t, { error_class: 'Agent::InodesFull', message: 'inodes exhausted on sdb', fingerprint }, { format: 'xml' });
    assert.equal(second.statusCode, 200, second.body);
    const row = await errorRow(t, recordOf(first).id);
    assert.ok(row);
    // The record keeps the class it was created with and takes the latest message.
    assert.deepEqual([row.fingerprint, row.error_class, row.message, Number(row.counter)], [fingerprint, 'Agent::DiskFull', 'inodes exhausted on sdb', 2]);
    assert.equal(second.body, XML_DECLARATION + errorXml(row));
  });

  it('refuses a fingerprint that is not 64 lowercase hex characters, naming fingerprint', async () => {
    const before = await rowCounts(t);
    for (const bad of ['0123456789ABCDEF'.repeat(4), '0123456789abcdef'.repeat(4).slice(1), `${'0123456789abcdef'.repeat(4)}0`, 'g'.repeat(64), 12345]) {
      const res = await report(t, { error_class: 'Agent::DiskFull', fingerprint: bad });
      assert.equal(res.statusCode, 422, String(bad));
      assert.equal(res.body, `{"errors":{"fingerprint":["${FINGERPRINT_MESSAGE}"]}}`);
    }
    assert.deepEqual(await rowCounts(t), before);
  });

  it('names every bad field in one 422, in JSON and in XML, and records nothing', async () => {
    const before = await rowCounts(t);
    const body = {
      message: 'm',
      fingerprint: 'XYZ',
      occurred_at: '2026-11-21T00:00:00Z',
      count: 0,
      host: 'h'.repeat(256),
      component: 42,
      request_id: 'r'.repeat(256),
      context: [1],
    };
    const json = await report(t, body);
    assert.equal(json.statusCode, 422);
    assert.equal(json.headers['content-type'], JSON_TYPE);
    assert.equal(
      json.body,
      JSON.stringify({
        errors: {
          error_class: ["can't be blank"],
          fingerprint: [FINGERPRINT_MESSAGE],
          occurred_at: ['must not be more than 5 minutes in the future'],
          count: ['must be an integer from 1 to 10000'],
          host: ['is too long (maximum is 255 characters)'],
          component: ['must be a string'],
          request_id: ['is too long (maximum is 255 characters)'],
          context: ['must be a JSON object'],
        },
      }),
    );
    const xml = await report(t, body, { format: 'xml' });
    assert.equal(xml.statusCode, 422);
    assert.equal(
      xml.body,
      `${XML_DECLARATION}<errors>
  <error>Error class can't be blank</error>
  <error>Fingerprint ${FINGERPRINT_MESSAGE}</error>
  <error>Occurred at must not be more than 5 minutes in the future</error>
  <error>Count must be an integer from 1 to 10000</error>
  <error>Host is too long (maximum is 255 characters)</error>
  <error>Component must be a string</error>
  <error>Request id is too long (maximum is 255 characters)</error>
  <error>Context must be a JSON object</error>
</errors>
`,
    );
    assert.deepEqual(await rowCounts(t), before);
  });

  it('takes an XML report with count, occurred_at, host, component, request_id and a context of JSON text', async () => {
    const res = await reportXml(
      t,
      `<?xml version="1.0" encoding="UTF-8"?>
<infrastructure_error>
  <error_class>Storage::Timeout</error_class>
  <message>pool ssd-1 timed out after 3012 ms</message>
  <count type="integer">7</count>
  <occurred_at type="datetime">2026-11-20T09:59:00+00:00</occurred_at>
  <host>hv-3</host>
  <component>storage</component>
  <request_id>agent-17</request_id>
  <context>{"pool":"ssd-1","note":"a &lt; b"}</context>
</infrastructure_error>`,
    );
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['content-type'], XML_TYPE);
    const id = Number(/<id type="integer">(\d+)<\/id>/.exec(res.body)?.[1]);
    assert.equal(res.headers.location, `${ERRORS}/${id}.xml`);
    const row = await errorRow(t, id);
    assert.ok(row);
    assert.equal(Number(row.counter), 7);
    assert.equal(row.created_at, '2026-11-20T09:59:00.000Z');
    assert.equal(res.body, XML_DECLARATION + errorXml(row));
    const [occurrence, ...others] = await occurrenceRows(t, id);
    assert.equal(others.length, 0);
    assert.ok(occurrence);
    assert.deepEqual(
      [occurrence.ordinal, occurrence.count, occurrence.occurred_at, occurrence.host, occurrence.component, occurrence.request_id, occurrence.context],
      [7, 7, '2026-11-20T09:59:00.000Z', 'hv-3', 'storage', 'agent-17', '{"pool":"ssd-1","note":"a < b"}'],
    );
    const json = await call(t, 'GET', `${ERRORS}/${id}/occurrences.json`);
    assert.equal(
      json.body,
      JSON.stringify([{ occurrence: { id: Number(occurrence.id), occurred_at: '2026-11-20T09:59:00+00:00', host: 'hv-3', component: 'storage', request_id: 'agent-17', message: 'pool ssd-1 timed out after 3012 ms', context: { pool: 'ssd-1', note: 'a < b' } } }]),
    );
    const xml = await call(t, 'GET', `${ERRORS}/${id}/occurrences.xml`);
    assert.match(xml.body, /\n {4}<context>\{"pool":"ssd-1","note":"a &lt; b"\}<\/context>\n/);
  });
});

describe('error reports: over-long text is truncated and marked, never refused (docs/error-grouping.md#truncation)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('stores a 70,000-character message as 65,536 characters ending with the marker, and answers 201', async () => {
    const message = `A${'x'.repeat(69_998)}Z`;
    const expected = `A${'x'.repeat(65_499)}\n… [truncated: 4500 more characters]`;
    assert.equal(expected.length, 65_536);
    const res = await report(t, { error_class: 'Big::Message', message });
    assert.equal(res.statusCode, 201);
    const record = recordOf(res);
    assert.equal(record.message, expected);
    assert.equal((await errorRow(t, record.id))?.message, expected);
    assert.deepEqual((await occurrenceRows(t, record.id)).map((row) => row.message), [expected]);
  });

  it('stores a 300-frame backtrace as the innermost 200, a line saying 50 were left out, and the outermost 50', async () => {
    const frames = Array.from({ length: 300 }, (_, i) => `src/deep/f${i + 1}.ts:${i + 1}:in 'f${i + 1}'`);
    const res = await report(t, { error_class: 'Deep::Recursion', message: 'too deep', backtrace: frames });
    assert.equal(res.statusCode, 201);
    const stored = (await errorRow(t, recordOf(res).id))?.backtrace ?? '';
    const lines = stored.split('\n');
    assert.equal(lines.length, 251);
    assert.equal(lines[0], "src/deep/f1.ts:1:in 'f1'");
    assert.equal(lines[199], "src/deep/f200.ts:200:in 'f200'");
    assert.equal(lines[200], '… [50 frames omitted]');
    assert.equal(lines[201], "src/deep/f251.ts:251:in 'f251'");
    assert.equal(lines[250], "src/deep/f300.ts:300:in 'f300'");
    assert.equal(stored, [...frames.slice(0, 200), '… [50 frames omitted]', ...frames.slice(250)].join('\n'));
    assert.equal(recordOf(res).backtrace, stored);
    // The same frames as one string are the same error, stored the same way.
    const again = await report(t, { error_class: 'Deep::Recursion', message: 'too deep', backtrace: frames.join('\n') });
    assert.equal(again.statusCode, 200);
    assert.equal(recordOf(again).backtrace, stored);
    assert.equal(recordOf(again).counter, 2);
  });

  it('keeps a backtrace of exactly 256 frames whole', async () => {
    const frames = Array.from({ length: 256 }, (_, i) => `src/edge/g${i + 1}.ts:${i + 1}:in 'g${i + 1}'`);
    const res = await report(t, { error_class: 'Deep::Edge', backtrace: frames });
    assert.equal(res.statusCode, 201);
    assert.equal(recordOf(res).backtrace, frames.join('\n'));
  });
});

describe('GET /sysadmin_tools/infrastructure/errors: order, filters, pagination', () => {
  let t: TestApp;
  // Six errors, created in this order (ids ascending), with known times, counters, hosts and components;
  // A is reported again at 09:45. C and E are marked reported.
  const seeds = {
    A: { error_class: 'Storage::Timeout', message: 'pool ssd-1 timed out', host: 'hv-1', component: 'storage', occurred_at: '2026-11-20T06:00:00Z', count: 5 },
    B: { error_class: 'Hypervisor::Unreachable', message: '100% packet loss', backtrace: "lib/hypervisor/ping.rb:12:in `check'", host: 'hv-2', component: 'hypervisor', occurred_at: '2026-11-20T07:00:00Z', count: 1 },
    C: { error_class: 'TypeError', message: 'Cannot read properties of undefined (reading user_id)', component: 'request', occurred_at: '2026-11-20T08:00:00Z', count: 3 },
    D: { error_class: 'Storage::Timeout', message: 'volume detach timed out', host: 'hv-2', component: 'storage', occurred_at: '2026-11-20T09:00:00Z', count: 2 },
    E: { error_class: 'Net::ReadTimeout', message: 'read timeout at 50%_done', host: 'hv-1', component: 'network', occurred_at: '2026-11-20T09:30:00Z', count: 4 },
    F: { error_class: 'Ceph::SlowOps', message: 'slow ops', host: 'hv-3', component: 'storage', occurred_at: '2026-11-20T09:00:00Z', count: 2 },
  } as const;
  type Name = keyof typeof seeds;
  const id: Record<string, number> = {};
  const nameOf = (value: number) => Object.keys(id).find((name) => id[name] === value) ?? `#${value}`;

  before(async () => {
    t = await createTestApp();
    for (const [name, fields] of Object.entries(seeds)) {
      const res = await report(t, fields);
      assert.equal(res.statusCode, 201, res.body);
      id[name] = recordOf(res).id;
    }
    const again = await report(t, { ...seeds.A, message: 'pool ssd-2 timed out', occurred_at: '2026-11-20T09:45:00Z', count: 1 });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(recordOf(again).id, id.A);
    await t.database.db.updateTable('infrastructure_errors').set({ reported: 1 }).where('id', 'in', [id.C as number, id.E as number]).execute();
  });
  after(() => t.close());

  const list = (query: string, format = 'json') => call(t, 'GET', `${ERRORS}.${format}${query}`);
  const names = async (query: string): Promise<string[]> => {
    const res = await list(query);
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
    return idsOf(res).map(nameOf);
  };
  const rowsOf = async (order: Name[]) => Promise.all(order.map(async (name) => (await errorRow(t, id[name] as number))!));

  it('lists newest updated_at first by default (ties by id, the same way), exactly, in JSON and XML', async () => {
    const order: Name[] = ['A', 'E', 'F', 'D', 'C', 'B'];
    const rows = await rowsOf(order);
    const json = await list('');
    assert.equal(json.statusCode, 200);
    assert.equal(json.headers['content-type'], JSON_TYPE);
    assert.equal(json.body, `[${rows.map(errorJson).join(',')}]`);
    assert.deepEqual(
      [json.headers['x-total'], json.headers['x-limit'], json.headers['x-page'], json.headers.link],
      ['6', '25', '1', `<${ERRORS}.json?page=1>; rel="first", <${ERRORS}.json?page=1>; rel="last"`],
    );
    const a = JSON.parse(json.body) as Array<{ infrastructure_error: { counter: number; message: string; updated_at: string; created_at: string; reported: boolean } }>;
    assert.deepEqual(a[0]?.infrastructure_error, { ...a[0]?.infrastructure_error, counter: 6, message: 'pool ssd-2 timed out', created_at: '2026-11-20T06:00:00+00:00', updated_at: '2026-11-20T09:45:00+00:00', reported: false });
    assert.equal(a[1]?.infrastructure_error.reported, true);
    const xml = await list('', 'xml');
    assert.equal(xml.headers['content-type'], XML_TYPE);
    assert.equal(xml.body, `${XML_DECLARATION}<infrastructure_errors type="array">\n${rows.map((row) => errorXml(row, '  ')).join('')}</infrastructure_errors>\n`);
  });

  it('sorts by updated_at, created_at or counter, either way', async () => {
    assert.deepEqual(await names('?direction=asc'), ['B', 'C', 'D', 'F', 'E', 'A']);
    assert.deepEqual(await names('?sort=updated_at&direction=desc'), ['A', 'E', 'F', 'D', 'C', 'B']);
    assert.deepEqual(await names('?sort=created_at'), ['E', 'F', 'D', 'C', 'B', 'A']);
    assert.deepEqual(await names('?sort=created_at&direction=asc'), ['A', 'B', 'C', 'D', 'F', 'E']);
    assert.deepEqual(await names('?sort=counter&direction=asc'), ['B', 'D', 'F', 'C', 'E', 'A']);
    assert.deepEqual(await names('?sort=counter'), ['A', 'E', 'C', 'F', 'D', 'B']);
  });

  it('filters on reported, error_class (exact) and q (case-insensitive; % and _ taken literally)', async () => {
    assert.deepEqual(await names('?reported=true'), ['E', 'C']);
    assert.deepEqual(await names('?reported=false'), ['A', 'F', 'D', 'B']);
    assert.deepEqual(await names('?error_class=Storage::Timeout'), ['A', 'D']);
    assert.deepEqual(await names('?error_class=storage::timeout'), []);
    assert.deepEqual(await names('?error_class=Storage'), []);
    assert.deepEqual(await names('?q=TIMEOUT'), ['A', 'E', 'D']);
    assert.deepEqual(await names('?q=Timed%20Out'), ['A', 'D']);
    assert.deepEqual(await names('?q=ssd-2'), ['A']);
    // A text holding key: is quoted (docs/search.md).
    assert.deepEqual(await names('?q=%22hypervisor::%22'), ['B']);
    assert.deepEqual(await names('?q=%25'), ['E', 'B']);
    assert.deepEqual(await names('?q=_'), ['E', 'C']);
    assert.deepEqual(await names('?q=%25_'), ['E']);
    assert.deepEqual(await names('?q=p%25'), []);
    assert.deepEqual(await names('?q=%5C'), []);
  });

  it('filters on since and until (updated_at, inclusive, any datetime form)', async () => {
    assert.deepEqual(await names('?since=2026-11-20T09:00:00Z'), ['A', 'E', 'F', 'D']);
    assert.deepEqual(await names('?since=2026-11-20T11:00:00%2B02:00'), ['A', 'E', 'F', 'D']);
    assert.deepEqual(await names('?since=2026-11-20T09:00:00.001Z'), ['A', 'E']);
    assert.deepEqual(await names('?until=2026-11-20T08:00:00%2B00:00'), ['C', 'B']);
    assert.deepEqual(await names('?since=20261120T070000Z&until=2026-11-20T11:00:00%2B02:00'), ['F', 'D', 'C', 'B']);
    assert.deepEqual(await names('?since=2026-11-20T09:46:00Z'), []);
  });

  it('filters on host and component: errors with an occurrence there', async () => {
    assert.deepEqual(await names('?host=hv-1'), ['A', 'E']);
    assert.deepEqual(await names('?host=hv-2'), ['D', 'B']);
    assert.deepEqual(await names('?host=hv-9'), []);
    assert.deepEqual(await names('?component=storage'), ['A', 'F', 'D']);
    assert.deepEqual(await names('?component=request'), ['C']);
    // Each is matched against its own dimension only.
    assert.deepEqual(await names('?host=storage'), []);
    assert.deepEqual(await names('?component=hv-1'), []);
  });

  it('combines filters (all must hold), with a sort', async () => {
    assert.deepEqual(await names('?host=hv-1&component=storage'), ['A']);
    assert.deepEqual(await names('?error_class=Storage::Timeout&host=hv-2'), ['D']);
    assert.deepEqual(await names('?q=timeout&reported=true'), ['E']);
    assert.deepEqual(await names('?reported=false&component=storage&since=2026-11-20T09:00:00Z&sort=counter&direction=asc'), ['D', 'F', 'A']);
    assert.deepEqual(await names('?reported=false&q=timed&until=2026-11-20T09:00:00Z'), ['D']);
  });

  it('counts in X-Total exactly what a combined filter lists (host and component are counted from the breakdown)', async () => {
    for (const query of ['?host=hv-1', '?component=storage', '?host=hv-1&component=storage', '?error_class=Storage::Timeout&host=hv-2',
      '?reported=false&component=storage&since=2026-11-20T09:00:00Z', '?reported=true&host=hv-1', '?q=timeout&reported=true']) {
      const res = await list(`${query}&per_page=1`);
      assert.equal(res.headers['x-total'], String((await names(query)).length), query);
    }
  });

  it('paginates a filtered list; X-Total counts what matches, and Link keeps the filters (query form)', async () => {
    const res = await list('?component=storage&per_page=1&page=2');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(idsOf(res).map(nameOf), ['F']);
    const link = (page: number) => `<${ERRORS}.json?component=storage&page=${page}&per_page=1>`;
    assert.deepEqual(
      [res.headers['x-total'], res.headers['x-limit'], res.headers['x-page'], res.headers.link],
      ['3', '1', '2', `${link(1)}; rel="first", ${link(1)}; rel="prev", ${link(3)}; rel="next", ${link(3)}; rel="last"`],
    );
    const encoded = await list('?error_class=Storage::Timeout&since=2026-11-20T06:00:00%2B00:00&per_page=1');
    assert.deepEqual(idsOf(encoded).map(nameOf), ['A']);
    const kept = (page: number) => `<${ERRORS}.json?error_class=Storage%3A%3ATimeout&since=2026-11-20T06%3A00%3A00%2B00%3A00&page=${page}&per_page=1>`;
    assert.deepEqual(
      [encoded.headers['x-total'], encoded.headers['x-limit'], encoded.headers['x-page'], encoded.headers.link],
      ['2', '1', '1', `${kept(1)}; rel="first", ${kept(2)}; rel="next", ${kept(2)}; rel="last"`],
    );
    // The last page of a sorted list keeps the sort too.
    const sorted = await list('?sort=counter&direction=asc&page=3&per_page=2');
    assert.deepEqual(idsOf(sorted).map(nameOf), ['E', 'A']);
    const s = (page: number) => `<${ERRORS}.json?sort=counter&direction=asc&page=${page}&per_page=2>`;
    assert.equal(sorted.headers.link, `${s(1)}; rel="first", ${s(2)}; rel="prev", ${s(3)}; rel="last"`);
  });

  it('paginates in the path forms like /users (docs/api.md#pagination), filters kept in the query', async () => {
    const res = await list('/page/2/per_page/1?component=storage', 'xml');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], XML_TYPE);
    const [f] = await rowsOf(['F']);
    assert.equal(res.body, `${XML_DECLARATION}<infrastructure_errors type="array">\n${errorXml(f!, '  ')}</infrastructure_errors>\n`);
    const link = (page: number) => `<${ERRORS}.xml/page/${page}/per_page/1?component=storage>`;
    assert.deepEqual(
      [res.headers['x-total'], res.headers['x-limit'], res.headers['x-page'], res.headers.link],
      ['3', '1', '2', `${link(1)}; rel="first", ${link(1)}; rel="prev", ${link(3)}; rel="next", ${link(3)}; rel="last"`],
    );
    const forms: Array<[path: string, page: number, perPage: number, expected: string[]]> = [
      ['/page/2', 2, 25, []],
      ['/per_page/4', 1, 4, ['A', 'E', 'F', 'D']],
      ['/per_page/2/page/3', 3, 2, ['C', 'B']],
      ['/page/2?per_page=4', 2, 4, ['C', 'B']],
    ];
    for (const [path, page, perPage, expected] of forms) {
      const answer = await list(path);
      assert.equal(answer.statusCode, 200, path);
      assert.deepEqual(idsOf(answer).map(nameOf), expected, path);
      assert.deepEqual([answer.headers['x-total'], answer.headers['x-limit'], answer.headers['x-page']], ['6', String(perPage), String(page)], path);
    }
    const empty = await list('/page/9?reported=true', 'xml');
    assert.equal(empty.body, `${XML_DECLARATION}<infrastructure_errors type="array"/>\n`);
  });

  it('answers one small filtered list exactly in XML', async () => {
    const res = await list('?error_class=Hypervisor::Unreachable', 'xml');
    const [b] = await rowsOf(['B']);
    assert.ok(b);
    assert.equal(
      res.body,
      `${XML_DECLARATION}<infrastructure_errors type="array">
  <infrastructure_error>
    <id type="integer">${id.B}</id>
    <backtrace>lib/hypervisor/ping.rb:12:in \`check'</backtrace>
    <counter type="integer">1</counter>
    <created_at type="datetime">2026-11-20T07:00:00+00:00</created_at>
    <error_class>Hypervisor::Unreachable</error_class>
    <fingerprint>${b.fingerprint}</fingerprint>
    <message>100% packet loss</message>
    <reported type="boolean">false</reported>
    <updated_at type="datetime">2026-11-20T07:00:00+00:00</updated_at>
  </infrastructure_error>
</infrastructure_errors>
`,
    );
    assert.match(b.fingerprint, /^[0-9a-f]{64}$/);
  });

  it('refuses a value it does not understand with a 422 naming the parameter', async () => {
    const cases: Array<[query: string, body: string]> = [
      ['?sort=name', '{"errors":{"sort":["must be one of updated_at, created_at, counter"]}}'],
      ['?direction=up', '{"errors":{"direction":["must be one of asc, desc"]}}'],
      ['?reported=maybe', '{"errors":{"reported":["must be one of true, false"]}}'],
      ['?reported=1', '{"errors":{"reported":["must be one of true, false"]}}'],
      ['?since=yesterday', `{"errors":{"since":["${DATETIME_MESSAGE}"]}}`],
      ['?until=2026-13-01', `{"errors":{"until":["${DATETIME_MESSAGE}"]}}`],
      ['?since=2026-11-20T09:00:00+00:00', `{"errors":{"since":["${DATETIME_MESSAGE}"]}}`], // an unencoded + is a space
      ['?host=hv-1&host=hv-2', '{"errors":{"host":["must be given only once"]}}'],
      ['?component=storage&component=storage', '{"errors":{"component":["must be given only once"]}}'],
      ['?sort=counter&sort=created_at', '{"errors":{"sort":["must be given only once"]}}'],
      ['?q=', '{"errors":{"q":["must be 1 to 1000 characters"]}}'],
      ['?hots=hv-1', '{"errors":{"hots":["is not a parameter of this list"]}}'],
      ['?all=true', '{"errors":{"all":["is not a parameter of this list"]}}'],
    ];
    for (const [query, body] of cases) {
      const res = await list(query);
      assert.equal(res.statusCode, 422, query);
      assert.equal(res.body, body, query);
    }
    const all = await list('?sort=name&direction=up&reported=maybe&since=yesterday&host=a&host=b', 'xml');
    assert.equal(all.statusCode, 422);
    assert.equal(
      all.body,
      `${XML_DECLARATION}<errors>
  <error>Reported must be one of true, false</error>
  <error>Since ${DATETIME_MESSAGE}</error>
  <error>Host must be given only once</error>
  <error>Sort must be one of updated_at, created_at, counter</error>
  <error>Direction must be one of asc, desc</error>
</errors>
`,
    );
  });
});

describe('a host filter matching many errors (read in list order, not from the index)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
    // 2,400 errors, one every second; every third on hv-many: 800 matches, past the index threshold.
    const start = Date.parse('2026-11-20T08:00:00Z');
    const reports = Array.from({ length: 2400 }, (_, i) => ({
      fingerprint: i.toString(16).padStart(64, '0'),
      error_class: `Many${i}`,
      message: '',
      backtrace: '',
      occurred_at: new Date(start + i * 1000),
      count: 1,
      host: i % 3 === 0 ? 'hv-many' : 'hv-other',
      component: null,
      request_id: null,
      context: null,
    }));
    await trackerRepository(t.database).recordBatch(reports, { first: 1, latest: 1 });
  });
  after(() => t.close());

  it('counts and pages exactly, the newest first', async () => {
    const ERRORS = '/sysadmin_tools/infrastructure/errors';
    for (const [host, total, classes] of [['hv-many', '800', ['Many2397', 'Many2394', 'Many2391']], ['hv-other', '1600', ['Many2399', 'Many2398', 'Many2396']]] as const) {
      const res = await t.app.inject({ url: `${ERRORS}.json?host=${host}&per_page=3`, headers: { authorization: t.adminAuth } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['x-total'], total);
      const page = JSON.parse(res.body) as Array<{ infrastructure_error: { error_class: string } }>;
      assert.deepEqual(page.map((row) => row.infrastructure_error.error_class), classes);
    }
  });
});

describe('q beyond ASCII', () => {
  let t: TestApp;
  let errorId: number;
  before(async () => {
    t = await createTestApp();
    errorId = recordOf(await report(t, { error_class: 'Échec::Réseau', message: 'ÉCHEC de connexion' })).id;
  });
  after(() => t.close());

  // TODO(src): on SQLite, lower() folds ASCII only while the pattern is lowered in JavaScript
  // (src/tracker/tracker-sql.ts, containsPattern and filtered()), so `q=ÉCHEC`
  // does not find 'ÉCHEC de connexion', not even in its own case. Passes on PostgreSQL.
  it('matches non-ASCII letters case-insensitively, the exact case included', async () => {
    for (const q of ['ÉCHEC', 'échec', 'Échec::Réseau', 'RÉSEAU']) {
      const res = await call(t, 'GET', `${ERRORS}.json?q=${encodeURIComponent(q)}`);
      assert.deepEqual(idsOf(res), [errorId], q);
    }
  });
});

describe('the tracker is for administrators only', () => {
  let t: TestApp;
  let errorId: number;
  before(async () => {
    t = await createTestApp();
    errorId = recordOf(await report(t, { error_class: 'Access::Probe', host: 'hv-1' })).id;
  });
  after(() => t.close());

  const endpoints = (): Array<['GET' | 'DELETE', string, string]> => [
    ['GET', `${ERRORS}.json`, 'infrastructure_errors.read'],
    ['GET', `${ERRORS}/${errorId}.json`, 'infrastructure_errors.read'],
    ['GET', `${ERRORS}/${errorId}/occurrences.json`, 'infrastructure_errors.read'],
    ['GET', `${ERRORS}/${errorId}/histogram.json`, 'infrastructure_errors.read'],
    ['GET', `${ERRORS}/${errorId}/breakdown.json`, 'infrastructure_errors.read'],
    ['DELETE', `${ERRORS}/${errorId}.json`, 'infrastructure_errors.delete'],
    ['DELETE', `${ERRORS}.json?host=hv-1`, 'infrastructure_errors.delete'],
    ['DELETE', `${ERRORS}.json?all=true`, 'infrastructure_errors.delete'],
  ];

  it('answers 403 to alice on every endpoint, reporting included, and changes nothing', async () => {
    const before = await rowCounts(t);
    for (const [method, url, needs] of endpoints()) {
      const res = await call(t, method, url, t.aliceAuth);
      assert.equal(res.statusCode, 403, `${method} ${url}`);
      assert.equal(res.body, forbiddenJson(needs), `${method} ${url}`);
    }
    const posted = await report(t, { error_class: 'Access::Probe', host: 'hv-1' }, { authorization: t.aliceAuth });
    assert.equal(posted.statusCode, 403);
    assert.equal(posted.body, forbiddenJson('infrastructure_errors.create'));
    const xml = await call(t, 'GET', `${ERRORS}.xml`, t.aliceAuth);
    assert.equal(xml.statusCode, 403);
    assert.equal(xml.body, forbiddenXml('infrastructure_errors.read'));
    assert.deepEqual(await rowCounts(t), before);
  });

  it('answers 401 without credentials on every endpoint', async () => {
    for (const [method, url] of endpoints()) assertAccessDenied(await call(t, method, url, null));
    const posted = await t.app.inject({ method: 'POST', url: `${ERRORS}.json`, payload: '{"error_class":"X"}', headers: { 'content-type': 'application/json' } });
    assertAccessDenied(posted);
    const xml = await call(t, 'GET', `${ERRORS}.xml`, null);
    assert.equal(xml.statusCode, 401);
    assert.equal(xml.headers['www-authenticate'], 'Basic realm="cmi"');
    assert.equal(xml.body, ACCESS_DENIED_XML);
    assert.equal((await rowCounts(t)).errors, 1);
  });
});

describe('GET .../errors/:id/occurrences', () => {
  let t: TestApp;
  let errorId: number;
  before(async () => {
    t = await createTestApp();
    for (const n of [1, 2, 3]) {
      const res = await report(t, { error_class: 'Disk::Full', message: `disk ${n} full`, host: `hv-${n}` });
      assert.equal(res.statusCode, n === 1 ? 201 : 200, res.body);
      errorId = recordOf(res).id;
      t.time.advance(60);
    }
  });
  after(() => t.close());

  const path = () => `${ERRORS}/${errorId}/occurrences`;

  it('lists the kept occurrences newest first, paginated with X-Total, X-Limit, X-Page and Link', async () => {
    const rows = await occurrenceRows(t, errorId);
    const json = (row: (typeof rows)[number]) =>
      JSON.stringify({ occurrence: { id: Number(row.id), occurred_at: wire(row.occurred_at), host: row.host, component: null, request_id: null, message: row.message, context: null } });
    const first = await call(t, 'GET', `${path()}.json?per_page=2`);
    assert.equal(first.statusCode, 200);
    assert.equal(first.body, `[${[rows[2]!, rows[1]!].map(json).join(',')}]`);
    assert.deepEqual((JSON.parse(first.body) as Array<{ occurrence: { message: string } }>).map((o) => o.occurrence.message), ['disk 3 full', 'disk 2 full']);
    const q = (page: number) => `<${path()}.json?page=${page}&per_page=2>`;
    assert.deepEqual(
      [first.headers['x-total'], first.headers['x-limit'], first.headers['x-page'], first.headers.link],
      ['3', '2', '1', `${q(1)}; rel="first", ${q(2)}; rel="next", ${q(2)}; rel="last"`],
    );
    const second = await call(t, 'GET', `${path()}.xml/page/2/per_page/2`);
    assert.equal(second.statusCode, 200);
    assert.equal(
      second.body,
      `${XML_DECLARATION}<occurrences type="array">
  <occurrence>
    <id type="integer">${Number(rows[0]!.id)}</id>
    <occurred_at type="datetime">2026-11-20T10:00:00+00:00</occurred_at>
    <host>hv-1</host>
    <component nil="true"/>
    <request_id nil="true"/>
    <message>disk 1 full</message>
    <context nil="true"/>
  </occurrence>
</occurrences>
`,
    );
    const p = (page: number) => `<${path()}.xml/page/${page}/per_page/2>`;
    assert.deepEqual(
      [second.headers['x-total'], second.headers['x-limit'], second.headers['x-page'], second.headers.link],
      ['3', '2', '2', `${p(1)}; rel="first", ${p(1)}; rel="prev", ${p(2)}; rel="last"`],
    );
  });

  it('answers 404 for an unknown error, in JSON and XML', async () => {
    const unknown = errorId + 1000;
    for (const sub of ['occurrences', 'histogram', 'breakdown']) {
      const res = await call(t, 'GET', `${ERRORS}/${unknown}/${sub}.json`);
      assert.equal(res.statusCode, 404, sub);
      assert.equal(res.body, NOT_FOUND_JSON, sub);
      const xml = await call(t, 'GET', `${ERRORS}/${unknown}/${sub}.xml`);
      assert.equal(xml.statusCode, 404, sub);
      assert.equal(xml.body, `${XML_DECLARATION}<errors>\n  <error>Resource not found</error>\n</errors>\n`);
    }
    const bad = await call(t, 'GET', `${ERRORS}/abc/occurrences.json`);
    assert.equal(bad.statusCode, 404);
  });
});

describe('occurrence sampling: the first CMI_ERRORS_SAMPLE_FIRST and the latest CMI_ERRORS_SAMPLE_LATEST are kept', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ CMI_ERRORS_SAMPLE_FIRST: '2', CMI_ERRORS_SAMPLE_LATEST: '3' });
  });
  after(() => t.close());

  it('after 10 reports keeps occurrences 1, 2 and 8, 9, 10, while the counter and the histogram count all 10', async () => {
    let errorId = 0;
    for (let n = 1; n <= 10; n++) {
      const res = await report(t, { error_class: 'Sample::Probe', message: `occurrence ${n}`, request_id: `r-${n}` });
      assert.equal(res.statusCode, n === 1 ? 201 : 200, res.body);
      errorId = recordOf(res).id;
      assert.equal(recordOf(res).counter, n);
      t.time.advance(600);
    }
    const rows = await occurrenceRows(t, errorId);
    assert.deepEqual(rows.map((row) => [row.ordinal, row.message, row.request_id]), [1, 2, 8, 9, 10].map((n) => [n, `occurrence ${n}`, `r-${n}`]));
    const res = await call(t, 'GET', `${ERRORS}/${errorId}/occurrences.json`);
    assert.deepEqual((JSON.parse(res.body) as Array<{ occurrence: { message: string } }>).map((o) => o.occurrence.message), [10, 9, 8, 2, 1].map((n) => `occurrence ${n}`));
    assert.equal(res.headers['x-total'], '5');
    assert.equal(Number((await errorRow(t, errorId))?.counter), 10);
    // Ten minutes apart from 10:00: hours 10 (6 reports) and 11 (4 reports).
    assert.deepEqual(await histogramRows(t, errorId), [[hourOf('2026-11-20T10:00:00Z'), 6], [hourOf('2026-11-20T11:00:00Z'), 4]]);
    const histogram = JSON.parse((await call(t, 'GET', `${ERRORS}/${errorId}/histogram.json`)).body) as Array<{ bucket: { count: number } }>;
    assert.equal(histogram.reduce((sum, b) => sum + b.bucket.count, 0), 10);
    const breakdown = await call(t, 'GET', `${ERRORS}/${errorId}/breakdown.json?by=host`);
    assert.equal(breakdown.body, '[{"group":{"value":null,"count":10}}]');
  });
});

describe('GET .../errors/:id/histogram', () => {
  let t: TestApp;
  let errorId: number;
  // Reports at known times around the windows' edges, the clock at 2026-11-20T10:30:00Z:
  // 24h = hours 2026-11-19T11:00 .. 2026-11-20T10:00, 7d = hours 2026-11-13T11:00 .. 2026-11-20T10:00,
  // 30d = days 2026-10-22 .. 2026-11-20.
  const reports: Array<[occurredAt: string, count: number]> = [
    ['2026-10-21T23:59:59Z', 128],
    ['2026-10-22T00:00:00Z', 64],
    ['2026-11-13T10:59:59Z', 32],
    ['2026-11-13T11:00:00Z', 16],
    ['2026-11-19T10:59:59Z', 8],
    ['2026-11-19T11:00:00Z', 4],
    ['2026-11-20T09:59:59Z', 1],
    ['2026-11-20T10:10:00Z', 2],
  ];
  before(async () => {
    t = await createTestApp();
    t.time.set('2026-11-20T10:30:00Z');
    for (const [occurred_at, count] of reports) {
      const res = await report(t, { error_class: 'Histogram::Probe', occurred_at, count });
      assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
      errorId = recordOf(res).id;
    }
  });
  after(() => t.close());

  type Bucket = { bucket: { start: string; count: number } };
  const expected = (first: string, buckets: number, stepHours: number, counts: Record<string, number>): Bucket[] =>
    Array.from({ length: buckets }, (_, i) => {
      const start = wire(new Date(new Date(first).getTime() + i * stepHours * 3_600_000).toISOString());
      return { bucket: { start, count: counts[start] ?? 0 } };
    });
  const histogram = async (query: string): Promise<Bucket[]> => {
    const res = await call(t, 'GET', `${ERRORS}/${errorId}/histogram.json${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return JSON.parse(res.body) as Bucket[];
  };
  const sum = (buckets: Bucket[]) => buckets.reduce((total, b) => total + b.bucket.count, 0);

  it('stores each report under its hour', async () => {
    assert.deepEqual(await histogramRows(t, errorId), reports.map(([at, count]) => [hourOf(at), count]));
    assert.equal(Number((await errorRow(t, errorId))?.counter), 255);
  });

  it('period=24h (the default): 24 hourly buckets, oldest first, zero-filled, the last the current hour, summing to what happened in them', async () => {
    const want = expected('2026-11-19T11:00:00Z', 24, 1, {
      '2026-11-19T11:00:00+00:00': 4,
      '2026-11-20T09:00:00+00:00': 1,
      '2026-11-20T10:00:00+00:00': 2,
    });
    const buckets = await histogram('?period=24h');
    assert.equal(buckets.length, 24);
    assert.deepEqual(buckets, want);
    assert.equal(buckets[0]?.bucket.start, '2026-11-19T11:00:00+00:00');
    assert.equal(buckets[23]?.bucket.start, '2026-11-20T10:00:00+00:00');
    assert.equal(sum(buckets), 7);
    assert.deepEqual(await histogram(''), want);

    const xml = await call(t, 'GET', `${ERRORS}/${errorId}/histogram.xml?period=24h`);
    assert.equal(xml.statusCode, 200);
    assert.equal(xml.headers['content-type'], XML_TYPE);
    assert.equal(
      xml.body,
      `${XML_DECLARATION}<buckets type="array">\n${want
        .map((b) => `  <bucket>\n    <start type="datetime">${b.bucket.start}</start>\n    <count type="integer">${b.bucket.count}</count>\n  </bucket>\n`)
        .join('')}</buckets>\n`,
    );
    // Not paginated.
    assert.equal(xml.headers['x-total'], undefined);
    assert.equal((await call(t, 'GET', `${ERRORS}/${errorId}/histogram.json/page/2`)).statusCode, 404);
  });

  it('period=7d: 168 hourly buckets', async () => {
    const buckets = await histogram('?period=7d');
    assert.equal(buckets.length, 168);
    assert.deepEqual(
      buckets,
      expected('2026-11-13T11:00:00Z', 168, 1, {
        '2026-11-13T11:00:00+00:00': 16,
        '2026-11-19T10:00:00+00:00': 8,
        '2026-11-19T11:00:00+00:00': 4,
        '2026-11-20T09:00:00+00:00': 1,
        '2026-11-20T10:00:00+00:00': 2,
      }),
    );
    assert.equal(sum(buckets), 31);
  });

  it('period=30d: 30 daily buckets (UTC days), each the sum of its hours', async () => {
    const buckets = await histogram('?period=30d');
    assert.equal(buckets.length, 30);
    assert.deepEqual(
      buckets,
      expected('2026-10-22T00:00:00Z', 30, 24, {
        '2026-10-22T00:00:00+00:00': 64,
        '2026-11-13T00:00:00+00:00': 48,
        '2026-11-19T00:00:00+00:00': 12,
        '2026-11-20T00:00:00+00:00': 3,
      }),
    );
    assert.equal(buckets[29]?.bucket.start, '2026-11-20T00:00:00+00:00');
    assert.equal(sum(buckets), 127);
  });

  it('moves with the clock: an hour later the oldest 24h bucket has left the window', async () => {
    t.time.advance(3600);
    try {
      const buckets = await histogram('?period=24h');
      assert.deepEqual(buckets, expected('2026-11-19T12:00:00Z', 24, 1, { '2026-11-20T09:00:00+00:00': 1, '2026-11-20T10:00:00+00:00': 2 }));
      assert.equal(sum(buckets), 3);
    } finally {
      t.time.set('2026-11-20T10:30:00Z');
    }
  });

  it('refuses another period with a 422 naming period', async () => {
    for (const [query, message] of [
      ['?period=1y', 'must be one of 24h, 7d, 30d'],
      ['?period=24H', 'must be one of 24h, 7d, 30d'],
      ['?period=24h&period=7d', 'must be given only once'],
    ]) {
      const res = await call(t, 'GET', `${ERRORS}/${errorId}/histogram.json${query}`);
      assert.equal(res.statusCode, 422, query);
      assert.equal(res.body, `{"errors":{"period":["${message}"]}}`, query);
    }
    const xml = await call(t, 'GET', `${ERRORS}/${errorId}/histogram.xml?period=1y`);
    assert.equal(xml.body, `${XML_DECLARATION}<errors>\n  <error>Period must be one of 24h, 7d, 30d</error>\n</errors>\n`);
  });
});

describe('GET .../errors/:id/breakdown', () => {
  let t: TestApp;
  let errorId: number;
  before(async () => {
    t = await createTestApp();
    const reports = [
      { host: 'hv-1', component: 'storage', count: 5 },
      { host: 'hv-2', component: 'storage', count: 2 },
      { component: 'hypervisor', count: 3 },
      { host: 'hv-3', count: 4 },
      { host: 'hv-1', component: 'storage', count: 1 },
    ];
    for (const fields of reports) {
      const res = await report(t, { error_class: 'Breakdown::Probe', ...fields });
      assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
      errorId = recordOf(res).id;
    }
  });
  after(() => t.close());

  const breakdown = (query: string, format = 'json') => call(t, 'GET', `${ERRORS}/${errorId}/breakdown.${format}${query}`);

  it('by=host (the default): occurrences per host, largest first, nil for reports without a host, in JSON and XML', async () => {
    const want = '[{"group":{"value":"hv-1","count":6}},{"group":{"value":"hv-3","count":4}},{"group":{"value":null,"count":3}},{"group":{"value":"hv-2","count":2}}]';
    const res = await breakdown('?by=host');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.body, want);
    assert.equal((await breakdown('')).body, want);
    assert.equal(res.headers['x-total'], '4');
    const xml = await breakdown('?by=host', 'xml');
    assert.equal(
      xml.body,
      `${XML_DECLARATION}<groups type="array">
  <group>
    <value>hv-1</value>
    <count type="integer">6</count>
  </group>
  <group>
    <value>hv-3</value>
    <count type="integer">4</count>
  </group>
  <group>
    <value nil="true"/>
    <count type="integer">3</count>
  </group>
  <group>
    <value>hv-2</value>
    <count type="integer">2</count>
  </group>
</groups>
`,
    );
  });

  it('by=component: occurrences per component, summing to the counter', async () => {
    const res = await breakdown('?by=component');
    assert.equal(res.body, '[{"group":{"value":"storage","count":8}},{"group":{"value":null,"count":4}},{"group":{"value":"hypervisor","count":3}}]');
    assert.equal(Number((await errorRow(t, errorId))?.counter), 15);
  });

  it('paginates with X-Total, X-Limit, X-Page and a Link keeping by=', async () => {
    const res = await breakdown('?by=host&per_page=2&page=2');
    assert.equal(res.body, '[{"group":{"value":null,"count":3}},{"group":{"value":"hv-2","count":2}}]');
    const link = (page: number) => `<${ERRORS}/${errorId}/breakdown.json?by=host&page=${page}&per_page=2>`;
    assert.deepEqual(
      [res.headers['x-total'], res.headers['x-limit'], res.headers['x-page'], res.headers.link],
      ['4', '2', '2', `${link(1)}; rel="first", ${link(1)}; rel="prev", ${link(2)}; rel="last"`],
    );
    const path = await breakdown('/per_page/1?by=component', 'xml');
    assert.equal(path.body, `${XML_DECLARATION}<groups type="array">\n  <group>\n    <value>storage</value>\n    <count type="integer">8</count>\n  </group>\n</groups>\n`);
    // Only per_page in the path: the links give page in the path too, as for /users.
    const p = (page: number) => `<${ERRORS}/${errorId}/breakdown.xml/page/${page}/per_page/1?by=component>`;
    assert.deepEqual(
      [path.headers['x-total'], path.headers['x-limit'], path.headers['x-page'], path.headers.link],
      ['3', '1', '1', `${p(1)}; rel="first", ${p(2)}; rel="next", ${p(3)}; rel="last"`],
    );
  });

  it('refuses another dimension with a 422 naming by', async () => {
    for (const [query, message] of [['?by=rack', 'must be one of host, component, release, environment, level'], ['?by=host&by=component', 'must be given only once']]) {
      const res = await breakdown(query as string);
      assert.equal(res.statusCode, 422, query);
      assert.equal(res.body, `{"errors":{"by":["${message}"]}}`);
    }
  });
});

describe('DELETE .../errors/:id and bulk DELETE .../errors', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const rowsFor = async (errorId: number) => {
    const { db } = t.database;
    const n = async (table: 'error_occurrences' | 'error_histogram' | 'error_breakdown') =>
      (await db.selectFrom(table).select('error_id').where('error_id', '=', errorId).execute()).length;
    return { occurrences: await n('error_occurrences'), histogram: await n('error_histogram'), breakdown: await n('error_breakdown') };
  };
  const fault = { error_class: 'Delete::Probe', message: 'gone soon', backtrace: "src/a.ts:1:in 'a'", host: 'hv-1', component: 'storage' };

  it('deletes one error with everything kept about it: 204, then 404; deleting again is 404', async () => {
    const created = await report(t, fault);
    assert.equal(created.statusCode, 201);
    const errorId = recordOf(created).id;
    t.time.advance(3600);
    assert.equal((await report(t, { ...fault, host: 'hv-2' })).statusCode, 200);
    const other = recordOf(await report(t, { error_class: 'Delete::Bystander', host: 'hv-1' })).id;
    assert.deepEqual(await rowsFor(errorId), { occurrences: 2, histogram: 2, breakdown: 3 });

    const res = await call(t, 'DELETE', `${ERRORS}/${errorId}.json`);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    const gone = await call(t, 'GET', `${ERRORS}/${errorId}.json`);
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.body, NOT_FOUND_JSON);
    for (const format of ['json', 'xml']) {
      const again = await call(t, 'DELETE', `${ERRORS}/${errorId}.${format}`);
      assert.equal(again.statusCode, 404, format);
    }
    assert.equal(await errorRow(t, errorId), undefined);
    assert.deepEqual(await rowsFor(errorId), { occurrences: 0, histogram: 0, breakdown: 0 });
    // Nothing else was touched.
    assert.deepEqual(await rowsFor(other), { occurrences: 1, histogram: 1, breakdown: 2 });
    assert.equal((await call(t, 'GET', `${ERRORS}/${other}.json`)).statusCode, 200);
  });

  it('starts a new record for a later report of a deleted error: 201, a new id, counter 1', async () => {
    const first = recordOf(await report(t, { error_class: 'Delete::Returns', message: 'back' }));
    t.time.advance(60);
    assert.equal((await report(t, { error_class: 'Delete::Returns', message: 'back' })).statusCode, 200);
    const deleted = await call(t, 'DELETE', `${ERRORS}/${first.id}.xml`);
    assert.equal(deleted.statusCode, 204);
    assert.equal(deleted.body, '');
    t.time.advance(60);
    const back = await report(t, { error_class: 'Delete::Returns', message: 'back' });
    assert.equal(back.statusCode, 201);
    const record = recordOf(back);
    assert.notEqual(record.id, first.id);
    assert.ok(record.id > first.id);
    assert.equal(back.headers.location, `${ERRORS}/${record.id}.json`);
    assert.deepEqual([record.counter, record.fingerprint, record.created_at], [1, first.fingerprint, wire(t.time.clock().toISOString())]);
    assert.deepEqual(await rowsFor(record.id), { occurrences: 1, histogram: 1, breakdown: 2 });
  });

  it('bulk: deletes what the filters select and answers how many, in JSON and XML; 422 naming all without a filter; all=true deletes everything', async () => {
    // Start from nothing.
    assert.equal((await call(t, 'DELETE', `${ERRORS}.json?all=true`)).statusCode, 200);
    const made: Record<string, number> = {};
    for (const [name, fields] of Object.entries({
      s1: { error_class: 'Bulk::One', host: 'hv-1', component: 'storage' },
      s2: { error_class: 'Bulk::Two', host: 'hv-2', component: 'storage' },
      n1: { error_class: 'Bulk::Three', host: 'hv-1', component: 'network' },
      r1: { error_class: 'Bulk::Four', component: 'request' },
    })) {
      made[name] = recordOf(await report(t, fields)).id;
    }
    await t.database.db.updateTable('infrastructure_errors').set({ reported: 1 }).where('id', '=', made.r1 as number).execute();
    const remaining = async () =>
      (await t.database.db.selectFrom('infrastructure_errors').select('error_class').orderBy('id').execute()).map((row) => row.error_class);

    // Refused: no filter, all not true, an unknown parameter, a bad filter value. Nothing is deleted.
    const refusals: Array<[query: string, body: string]> = [
      ['', '{"errors":{"all":["must be true to delete every error (or give a filter)"]}}'],
      ['?all=false', '{"errors":{"all":["must be true to delete every error (or give a filter)"]}}'],
      // A misspelt filter is refused, never ignored: ignored, it would widen the delete to everything.
      ['?hots=hv-1', '{"errors":{"hots":["is not a parameter of this list"]}}'],
      ['?hots=hv-1&all=true', '{"errors":{"hots":["is not a parameter of this list"]}}'],
      ['?all=yes', '{"errors":{"all":["must be one of true, false"]}}'],
      ['?reported=maybe', '{"errors":{"reported":["must be one of true, false"]}}'],
      ['?host=hv-1&host=hv-2', '{"errors":{"host":["must be given only once"]}}'],
    ];
    for (const [query, body] of refusals) {
      const res = await call(t, 'DELETE', `${ERRORS}.json${query}`);
      assert.equal(res.statusCode, 422, query);
      assert.equal(res.body, body, query);
    }
    const xmlRefusal = await call(t, 'DELETE', `${ERRORS}.xml`);
    assert.equal(xmlRefusal.body, `${XML_DECLARATION}<errors>\n  <error>All must be true to delete every error (or give a filter)</error>\n</errors>\n`);
    const alice = await call(t, 'DELETE', `${ERRORS}.json?all=true`, t.aliceAuth);
    assert.equal(alice.statusCode, 403);
    assert.equal(alice.body, forbiddenJson('infrastructure_errors.delete'));
    assert.deepEqual(await remaining(), ['Bulk::One', 'Bulk::Two', 'Bulk::Three', 'Bulk::Four']);

    const storage = await call(t, 'DELETE', `${ERRORS}.json?component=storage`);
    assert.equal(storage.statusCode, 200);
    assert.equal(storage.headers['content-type'], JSON_TYPE);
    assert.equal(storage.body, '{"deleted":2}');
    assert.deepEqual(await remaining(), ['Bulk::Three', 'Bulk::Four']);
    for (const gone of [made.s1, made.s2] as number[]) assert.deepEqual(await rowsFor(gone), { occurrences: 0, histogram: 0, breakdown: 0 });

    const none = await call(t, 'DELETE', `${ERRORS}.json?host=hv-2`);
    assert.equal(none.body, '{"deleted":0}');

    const reported = await call(t, 'DELETE', `${ERRORS}.xml?reported=true`);
    assert.equal(reported.statusCode, 200);
    assert.equal(reported.headers['content-type'], XML_TYPE);
    assert.equal(reported.body, '<?xml version="1.0" encoding="UTF-8"?>\n<deleted type="integer">1</deleted>\n');
    assert.deepEqual(await remaining(), ['Bulk::Three']);

    await report(t, { error_class: 'Bulk::Five' });
    const all = await call(t, 'DELETE', `${ERRORS}.json?all=true`);
    assert.equal(all.body, '{"deleted":2}');
    assert.deepEqual(await rowCounts(t), { errors: 0, occurrences: 0, histogram: 0, breakdown: 0 });
    const empty = await call(t, 'DELETE', `${ERRORS}.xml?all=true`);
    assert.equal(empty.body, `${XML_DECLARATION}<deleted type="integer">0</deleted>\n`);
  });
});

describe('ingestion rate limit: CMI_ERRORS_RATE_LIMIT reports a second per credential', () => {
  let t: TestApp;
  let second: string;
  before(async () => {
    t = await createTestApp({ CMI_ERRORS_RATE_LIMIT: '5' });
    const [other] = await t.addUsers(1, 'admin');
    second = t.basic(other!.login, 'shared-password');
  });
  after(() => t.close());

  it('answers the 6th report in the same instant 429 with Retry-After and records nothing of it; a second later reports pass again', async () => {
    // The test clock stands still: every report below is in the same instant.
    for (let n = 1; n <= 5; n++) {
      const res = await report(t, { error_class: 'Rate::Probe', message: 'within the limit' });
      assert.equal(res.statusCode, n === 1 ? 201 : 200, res.body);
    }
    const before = await rowCounts(t);
    for (const format of ['json', 'xml'] as const) {
      const res = await report(t, { error_class: 'Rate::Sixth', message: 'over the limit' }, { format });
      assert.equal(res.statusCode, 429, format);
      assert.equal(res.headers['retry-after'], '1', format);
      assert.equal(res.headers.location, undefined);
      assert.equal(
        res.body,
        format === 'json'
          ? '{"errors":{"base":["Too many requests, try again later"]}}'
          : `${XML_DECLARATION}<errors>\n  <error>Too many requests, try again later</error>\n</errors>\n`,
      );
    }
    assert.deepEqual(await rowCounts(t), before);
    const sixth = await t.database.db.selectFrom('infrastructure_errors').select('id').where('error_class', '=', 'Rate::Sixth').execute();
    assert.deepEqual(sixth, []);
    assert.equal((await call(t, 'GET', `${ERRORS}.json?error_class=Rate::Probe`)).statusCode, 200, 'reading is not limited');

    // Per credential: another administrator still reports.
    const other = await report(t, { error_class: 'Rate::Probe', message: 'within the limit' }, { authorization: second });
    assert.equal(other.statusCode, 200, other.body);
    assert.equal(recordOf(other).counter, 6);

    t.time.advance(1);
    for (let n = 1; n <= 5; n++) {
      const res = await report(t, { error_class: 'Rate::Sixth', message: 'over the limit' });
      assert.equal(res.statusCode, n === 1 ? 201 : 200, res.body);
    }
    assert.equal((await report(t, { error_class: 'Rate::Sixth', message: 'over the limit' })).statusCode, 429);
    const counters = await t.database.db.selectFrom('infrastructure_errors').select(['error_class', 'counter']).orderBy('id').execute();
    assert.deepEqual(counters.map((row) => [row.error_class, Number(row.counter)]), [['Rate::Probe', 6], ['Rate::Sixth', 5]]);
  });
});

describe("cmi's own faults: coalesced in memory, written on flush and on shutdown (docs/operations.md#faults-of-cmi)", () => {
  let t: TestApp;
  before(async () => {
    // No periodic write during the test: what is not in the database can only be held in memory.
    t = await createTestApp({}, { faultFlushIntervalMs: 3_600_000 });
    // A real fault: a row the code cannot render (an unparseable timestamp) makes GET /users throw.
    await t.database.db.updateTable('users').set({ created_at: 'not a date' }).where('login', '=', 'alice').execute();
  });
  after(() => t.close());

  // With a query: the context names the route pattern, not the URL.
  const fault = (requestId: string) => t.app.inject({ url: '/users.json?per_page=25', headers: { authorization: t.adminAuth, 'x-request-id': requestId } });
  const errors = () => t.database.db.selectFrom('infrastructure_errors').selectAll().execute();

  it('holds 5 faults as one report until flush(), then writes one record with counter 5 and one occurrence with the latest request', async () => {
    for (let n = 1; n <= 5; n++) {
      const res = await fault(`fault-${n}`);
      assert.equal(res.statusCode, 500);
      assert.equal(res.body, `{"errors":{"base":["Internal server error (request fault-${n})"]}}`);
    }
    const unwritten = await errors();
    const held = t.app.faults.pending();
    assert.deepEqual(unwritten, []);
    assert.deepEqual(held.map((r) => [r.error_class, r.count, r.request_id]), [['RangeError', 5, 'fault-5']]);

    await t.app.faults.flush();
    const [record, ...others] = await errors();
    assert.equal(others.length, 0);
    assert.ok(record);
    assert.deepEqual([record.error_class, record.message, Number(record.counter)], ['RangeError', 'Invalid time value', 5]);
    const occurrences = await occurrenceRows(t, Number(record.id));
    // cmi's own version (package.json), not the OnApp version /version reports.
    const version = cmiVersion();
    assert.deepEqual(
      occurrences.map((o) => [o.ordinal, o.count, o.request_id, o.component, o.host, o.context, o.occurred_at]),
      [[5, 5, 'fault-5', 'request', hostname(), JSON.stringify({ method: 'GET', route: '/users', pid: process.pid, version }), '2026-11-20T10:00:00.000Z']],
    );
    const latest = occurrences.at(-1);
    assert.equal(latest?.request_id, 'fault-5');
    assert.deepEqual(JSON.parse(latest?.context ?? 'null'), { method: 'GET', route: '/users', pid: process.pid, version });
    assert.deepEqual(await histogramRows(t, Number(record.id)), [[hourOf('2026-11-20T10:00:00Z'), 5]]);

    const api = await call(t, 'GET', `${ERRORS}/${record.id}/occurrences.json`);
    const [shown] = JSON.parse(api.body) as Array<{ occurrence: { request_id: string; host: string; component: string; context: unknown } }>;
    assert.deepEqual(
      [shown?.occurrence.request_id, shown?.occurrence.host, shown?.occurrence.component, shown?.occurrence.context],
      ['fault-5', hostname(), 'request', { method: 'GET', route: '/users', pid: process.pid, version }],
    );
    assert.deepEqual(t.app.faults.pending(), []);
  });

  it('writes what it holds when the app closes', async () => {
    t.time.advance(1);
    assert.equal((await fault('fault-6')).statusCode, 500);
    const [record] = await errors();
    assert.ok(record);
    assert.equal(Number(record.counter), 5);
    assert.deepEqual(t.app.faults.pending().map((r) => [r.count, r.request_id]), [[1, 'fault-6']]);
    // The app closes (the onClose hook writes what is held); the test's own connection stays open
    // until t.close() in after() (support/app.ts), so the database can be read after the close.
    await t.app.close();
    const [after, ...others] = await errors();
    assert.equal(others.length, 0);
    assert.equal(Number(after?.counter), 6);
    const latest = (await occurrenceRows(t, Number(after?.id))).at(-1);
    assert.deepEqual([latest?.ordinal, latest?.request_id, latest?.occurred_at], [6, 'fault-6', '2026-11-20T10:00:01.000Z']);
  });
});
