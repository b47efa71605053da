import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from './support/app.js';
import { ERRORS, report } from './support/error-reports.js';

// The errors list's `q` in the search language (docs/search.md) over HTTP: each key, negation,
// lists, wildcards, comparisons, free text in the backtrace, combined with the fixed parameters, and
// the 422 that points at what it cannot read. One app for the file, its errors made once.

describe('the errors list q in the search language', () => {
  let t: TestApp;
  const ids: Record<string, number> = {};

  before(async () => {
    t = await createTestApp();
    t.time.set('2026-11-20T10:00:00.000Z');
    const made = async (name: string, fields: Record<string, unknown>, times = 1) => {
      for (let i = 0; i < times; i++) {
        const res = await report(t, fields);
        assert.ok(res.statusCode === 200 || res.statusCode === 201, res.body);
        ids[name] = (JSON.parse(res.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
      }
    };
    await made('iscsi', { error_class: 'StorageError', message: 'login to target failed', host: 'hv-07', component: 'storage', backtrace: "lib/iscsi.rb:12:in 'iscsi_login'" }, 3);
    t.time.advance(3600);
    await made('nfs', { error_class: 'StorageTimeout', message: 'nfs server not responding', host: 'hv-02', component: 'storage' });
    t.time.advance(3600);
    await made('dns', { error_class: 'Net::Timeout', message: 'dns lookup timed out', host: 'hv-07', component: 'network' }, 2);
    t.time.advance(3600);
    await made('billing', { error_class: 'Billing::Error', message: 'invoice "42" failed', component: 'billing' });
    // Releases, environments, levels and tags from the context, kept per error like its hosts.
    await made('v672', { error_class: 'Api::Error', message: 'quota', component: 'api', context: { release: '6.7.2', environment: 'production', level: 'error', tags: { Region: 'eu', zone: 'eu-1', 'bad tag': 'x' } } });
    await made('v672', { error_class: 'Api::Error', message: 'quota', component: 'api', context: { release: '6.7.1', environment: 'staging', tags: { region: 'us' } } });
    await made('v680', { error_class: 'Api::Fatal', message: 'crash', component: 'api', context: { release: '6.8.0', environment: 'production', level: 'fatal' } });
    const triage = (id: number, body: Record<string, unknown>) => t.app.inject({ method: 'PUT', url: `${ERRORS}/${id}/triage.json`, headers: { authorization: t.adminAuth }, payload: { triage: body } });
    assert.equal((await triage(ids.nfs!, { status: 'resolved' })).statusCode, 200);
    assert.equal((await triage(ids.dns!, { assignee_id: 1 })).statusCode, 200);
  });
  after(() => t?.close());

  async function found(q: string, extra = ''): Promise<string[]> {
    const res = await t.app.inject({ method: 'GET', url: `${ERRORS}.json?q=${encodeURIComponent(q)}${extra}`, headers: { authorization: t.adminAuth } });
    assert.equal(res.statusCode, 200, `${q}: ${res.body}`);
    const names = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
    const listed = (JSON.parse(res.body) as Array<{ infrastructure_error: { id: number } }>).map((item) => names[item.infrastructure_error.id] ?? '?');
    assert.equal(res.headers['x-total'], String(listed.length), q);
    return listed;
  }

  it('filters by host, component and class, exactly, negated, as lists and with wildcards', async () => {
    assert.deepEqual(await found('host:hv-07'), ['dns', 'iscsi']);
    assert.deepEqual(await found('host:hv-07 component:storage'), ['iscsi']);
    assert.deepEqual(await found('!component:storage'), ['v680', 'v672', 'billing', 'dns']);
    assert.deepEqual(await found('class:Storage*'), ['nfs', 'iscsi']);
    assert.deepEqual(await found('class:storage*'), []);
    assert.deepEqual(await found('class:[Net::Timeout, "Billing::Error"]'), ['billing', 'dns']);
    assert.deepEqual(await found('host:hv-0*'), ['dns', 'nfs', 'iscsi']);
    assert.deepEqual(await found('!host:hv-0*'), ['v680', 'v672', 'billing']);
    assert.deepEqual(await found('message:*timed*'), ['dns']);
  });

  it('matches free text in the class, the message and the backtrace, case-insensitively', async () => {
    assert.deepEqual(await found('iscsi_login'), ['iscsi']);
    assert.deepEqual(await found('TIMEOUT'), ['dns', 'nfs']);
    assert.deepEqual(await found('"not responding"'), ['nfs']);
    assert.deepEqual(await found('storage iscsi'), []);
    assert.deepEqual(await found('host:hv-07 iscsi_login'), ['iscsi']);
  });

  it('filters by triage, assignment, counter and times', async () => {
    assert.deepEqual(await found('is:resolved'), ['nfs']);
    assert.deepEqual(await found('!is:resolved'), ['v680', 'v672', 'billing', 'dns', 'iscsi']);
    assert.deepEqual(await found('is:[resolved, ignored]'), ['nfs']);
    assert.deepEqual(await found('is:assigned'), ['dns']);
    assert.deepEqual(await found('is:unassigned component:storage'), ['nfs', 'iscsi']);
    assert.deepEqual(await found('assigned:me'), ['dns']);
    assert.deepEqual(await found('assigned:ADMIN'), ['dns']);
    assert.deepEqual(await found('assigned:[nobody, admin]'), ['dns']);
    assert.deepEqual(await found('!assigned:none'), ['dns']);
    assert.deepEqual(await found('counter:>1'), ['v672', 'dns', 'iscsi']);
    assert.deepEqual(await found('counter:>=3'), ['iscsi']);
    assert.deepEqual(await found('counter:1'), ['v680', 'billing', 'nfs']);
    assert.deepEqual(await found('!counter:1'), ['v672', 'dns', 'iscsi']);
    // The clock is 13:00; iscsi was first seen at 10:00, billing at 13:00.
    assert.deepEqual(await found('first_seen:-90m'), ['v680', 'v672', 'billing', 'dns']);
    assert.deepEqual(await found('first_seen:+90m'), ['nfs', 'iscsi']);
    assert.deepEqual(await found('last_seen:>=2026-11-20T12:00:00Z'), ['v680', 'v672', 'billing', 'dns']);
    assert.deepEqual(await found('first_seen:2026-11-20'), ['v680', 'v672', 'billing', 'dns', 'nfs', 'iscsi']);
    assert.deepEqual(await found('first_seen:2026-11-19'), []);
    assert.deepEqual(await found('has:host'), ['dns', 'nfs', 'iscsi']);
    assert.deepEqual(await found('!has:host'), ['v680', 'v672', 'billing']);
  });

  it('filters by release, environment, level and tags from the occurrences\' context, and breaks an error down by them', async () => {
    assert.deepEqual(await found('release:6.7.2'), ['v672']);
    assert.deepEqual(await found('release:6.7.*'), ['v672']);
    assert.deepEqual(await found('release:[6.7.1, 6.8.0]'), ['v680', 'v672']);
    assert.deepEqual(await found('environment:production !level:fatal'), ['v672']);
    assert.deepEqual(await found('tag.region:us'), ['v672']);
    assert.deepEqual(await found('tag.zone:eu-*'), ['v672']);
    assert.deepEqual(await found('has:tag.zone'), ['v672']);
    assert.deepEqual(await found('has:release component:api'), ['v680', 'v672']);
    assert.deepEqual(await found('!has:release component:api'), []);
    assert.deepEqual(await found('has:level'), ['v680', 'v672']);
    assert.deepEqual(await found('component:api', '&release=6.8.0'), ['v680']);
    assert.deepEqual(await found('component:api', '&environment=staging'), ['v672']);
    const breakdown = await t.app.inject({ method: 'GET', url: `${ERRORS}/${ids.v672}/breakdown.json?by=release`, headers: { authorization: t.adminAuth } });
    assert.equal(breakdown.statusCode, 200, breakdown.body);
    assert.deepEqual(JSON.parse(breakdown.body), [{ group: { value: '6.7.1', count: 1 } }, { group: { value: '6.7.2', count: 1 } }]);
  });

  it('keeps the fixed parameters, each holding beside the terms', async () => {
    assert.deepEqual(await found('class:Storage*', '&host=hv-02'), ['nfs']);
    assert.deepEqual(await found('host:hv-02', '&host=hv-07'), []);
    assert.deepEqual(await found('timeout', '&status=unresolved'), ['dns']);
    assert.deepEqual(await found('component:storage', '&component=storage'), ['nfs', 'iscsi']);
  });

  it('does not keep a page of a search by time: it moves with the clock', async () => {
    assert.deepEqual(await found('last_seen:-30m'), ['v680', 'v672', 'billing']);
    t.time.advance(7200);
    assert.deepEqual(await found('last_seen:-30m'), []);
  });

  it('answers 422 naming the position of what it cannot read, in JSON and XML', async () => {
    const refused = async (q: string, format = 'json') => {
      const res = await t.app.inject({ method: 'GET', url: `${ERRORS}.${format}?q=${encodeURIComponent(q)}`, headers: { authorization: t.adminAuth } });
      assert.equal(res.statusCode, 422, q);
      return res.body;
    };
    assert.equal(await refused('host:hv-07 colour:red'), '{"errors":{"q":["colour: is not a key of the search (keys: host, component, class, message, release, environment, level, status, is, assigned, reported, counter, first_seen, last_seen, has, tag.<name>) at position 12"]}}');
    assert.equal(await refused('class:"Storage'), '{"errors":{"q":["a quote is not closed at position 7"]}}');
    assert.equal(await refused('counter:>many'), '{"errors":{"q":["counter: must be a whole number, with > < >= <= or none at position 1"]}}');
    assert.equal(await refused('is:broken'), '{"errors":{"q":["is: must be one of unresolved, resolved, ignored, snoozed, assigned, unassigned at position 1"]}}');
    assert.equal(await refused('last_seen:yesterday'), '{"errors":{"q":["last_seen: must be a time such as -1h, -7d, 2026-11-01 or 2026-11-01T10:00:00Z, with > < >= <= at position 1"]}}');
    assert.equal(await refused('host:>a'), '{"errors":{"q":["host: cannot be compared with > at position 1"]}}');
    assert.equal(await refused('colour:red', 'xml'), '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Q colour: is not a key of the search (keys: host, component, class, message, release, environment, level, status, is, assigned, reported, counter, first_seen, last_seen, has, tag.&lt;name&gt;) at position 1</error>\n</errors>\n');
  });

  it('deletes exactly what a search lists', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: `${ERRORS}.json?q=${encodeURIComponent('component:billing invoice')}`, headers: { authorization: t.adminAuth } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await found('!has:host'), ['v680', 'v672']);
    assert.deepEqual(await found('has:component !component:api'), ['dns', 'nfs', 'iscsi']);
  });
});
