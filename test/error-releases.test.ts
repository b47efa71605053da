import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from './support/app.js';
import { ERRORS, forbiddenJson, JSON_TYPE, report, XML_DECLARATION, XML_TYPE } from './support/error-reports.js';

// Releases and environments (docs/api.md#releases): each error's, exact from its occurrences; an
// error resolved in a release regresses only on a later one (semantic versioning, else first seen);
// the releases resource with what each brought, and declaring one ahead of its first event.

const RELEASES = '/sysadmin_tools/infrastructure/releases';

describe('releases and environments', () => {
  let t: TestApp;
  const get = (url: string, authorization = t.adminAuth) => t.app.inject({ method: 'GET', url, headers: { authorization } });
  const triage = (id: number, body: Record<string, unknown>) =>
    t.app.inject({ method: 'PUT', url: `${ERRORS}/${id}/triage.json`, headers: { authorization: t.adminAuth }, payload: { triage: body } });
  const status = async (id: number) => (JSON.parse((await get(`${ERRORS}/${id}/triage.json`)).body) as { triage: { status: string; resolved_in_release: string | null } }).triage;
  const made = async (fields: Record<string, unknown>) => {
    const res = await report(t, fields);
    assert.ok(res.statusCode === 200 || res.statusCode === 201, res.body);
    return (JSON.parse(res.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
  };
  const quota = (context?: Record<string, unknown>) => made({ error_class: 'Api::Quota', message: 'quota exceeded', component: 'api', ...(context ? { context } : {}) });

  before(async () => {
    t = await createTestApp();
    t.time.set('2026-11-20T10:00:00.000Z');
  });
  after(() => t?.close());

  it('keeps each error\'s releases and environments with their first and last occurrence, exactly, in JSON and XML', async () => {
    const id = await quota({ release: '6.7.1', environment: 'staging' });
    t.time.advance(60);
    await quota({ release: '6.7.2', environment: 'production' });
    t.time.advance(60);
    await quota({ release: '6.7.1', environment: 'production' });
    await quota();

    const releases = await get(`${ERRORS}/${id}/releases.json`);
    assert.equal(releases.statusCode, 200, releases.body);
    assert.equal(releases.headers['content-type'], JSON_TYPE);
    assert.equal(releases.headers['x-total'], '2');
    assert.equal(releases.body, JSON.stringify([
      { release: { name: '6.7.1', first_seen: '2026-11-20T10:00:00+00:00', last_seen: '2026-11-20T10:02:00+00:00', count: 2 } },
      { release: { name: '6.7.2', first_seen: '2026-11-20T10:01:00+00:00', last_seen: '2026-11-20T10:01:00+00:00', count: 1 } },
    ]));
    const environments = await get(`${ERRORS}/${id}/environments.xml`);
    assert.equal(environments.statusCode, 200, environments.body);
    assert.equal(environments.headers['content-type'], XML_TYPE);
    assert.equal(environments.body, `${XML_DECLARATION}<environments type="array">
  <environment>
    <name>production</name>
    <first_seen type="datetime">2026-11-20T10:01:00+00:00</first_seen>
    <last_seen type="datetime">2026-11-20T10:02:00+00:00</last_seen>
    <count type="integer">2</count>
  </environment>
  <environment>
    <name>staging</name>
    <first_seen type="datetime">2026-11-20T10:00:00+00:00</first_seen>
    <last_seen type="datetime">2026-11-20T10:00:00+00:00</last_seen>
    <count type="integer">1</count>
  </environment>
</environments>
`);
    const paged = await get(`${ERRORS}/${id}/releases.json?per_page=1&page=2`);
    assert.deepEqual([paged.headers['x-total'], JSON.parse(paged.body)], ['2', [{ release: { name: '6.7.2', first_seen: '2026-11-20T10:01:00+00:00', last_seen: '2026-11-20T10:01:00+00:00', count: 1 } }]]);
    assert.equal((await get(`${ERRORS}/999999/releases.json`)).statusCode, 404);
    const refused = await get(`${ERRORS}/${id}/environments.json`, t.aliceAuth);
    assert.deepEqual([refused.statusCode, refused.body], [403, forbiddenJson('infrastructure_errors.read')]);
    await t.app.inject({ method: 'DELETE', url: `${ERRORS}/${id}.json`, headers: { authorization: t.adminAuth } });
  });

  it('resolved in a release, regresses only on a later release by semantic versioning, or on one that says none', async () => {
    const id = await made({ error_class: 'Storage::Error', message: 'iscsi login failed', context: { release: 'v2.9.0' } });
    await made({ error_class: 'Storage::Error', message: 'iscsi login failed', context: { release: '2.10.0-rc.1' } });
    const resolved = await triage(id, { status: 'resolved', in_release: '2.10.0' });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal((JSON.parse(resolved.body) as { triage: { resolved_in_release: string } }).triage.resolved_in_release, '2.10.0');
    // Earlier (2.9.0, a pre-release of 2.10.0) and the same release: still resolved.
    for (const release of ['v2.9.0', '2.10.0-rc.1', '2.10.0']) {
      await made({ error_class: 'Storage::Error', message: 'iscsi login failed', context: { release } });
      assert.deepEqual(await status(id), { ...(await status(id)), status: 'resolved', resolved_in_release: '2.10.0' }, release);
    }
    // 2.10.1 comes after 2.10.0 (not 2.9.x, which a text order would say).
    await made({ error_class: 'Storage::Error', message: 'iscsi login failed', context: { release: '2.10.1' } });
    assert.deepEqual(await status(id), { ...(await status(id)), status: 'unresolved', resolved_in_release: null });
    const row = await t.database.db.selectFrom('error_triage').select(['triage_status', 'regressed_at', 'resolved_in_release']).where('error_id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { triage_status: 'unresolved', regressed_at: '2026-11-20T10:02:00.000Z', resolved_in_release: null });

    // An occurrence that names no release cannot be placed: it regresses.
    assert.equal((await triage(id, { status: 'resolved', in_release: '2.10.1' })).statusCode, 200);
    await made({ error_class: 'Storage::Error', message: 'iscsi login failed' });
    assert.equal((await status(id)).status, 'unresolved');
  });

  it('orders releases that are not versions by when each was first seen, and in_next_release takes the latest', async () => {
    const id = await made({ error_class: 'Billing::Error', message: 'invoice failed', context: { release: 'blue' } });
    t.time.advance(60);
    await made({ error_class: 'Billing::Error', message: 'invoice failed', context: { release: 'green' } });
    const next = await triage(id, { status: 'resolved', in_next_release: true });
    assert.equal(next.statusCode, 200, next.body);
    assert.equal((await status(id)).resolved_in_release, 'green');
    await made({ error_class: 'Billing::Error', message: 'invoice failed', context: { release: 'blue' } });
    await made({ error_class: 'Billing::Error', message: 'invoice failed', context: { release: 'green' } });
    assert.equal((await status(id)).status, 'resolved');
    t.time.advance(60);
    await made({ error_class: 'Billing::Error', message: 'invoice failed', context: { release: 'red' } });
    assert.deepEqual(await status(id), { ...(await status(id)), status: 'unresolved', resolved_in_release: null });

    const none = await made({ error_class: 'Billing::Other', message: 'no release' });
    const refused = await triage(none, { status: 'resolved', in_next_release: true });
    assert.deepEqual([refused.statusCode, refused.body], [422, JSON.stringify({ errors: { in_next_release: ['needs an occurrence that carried a release (or give in_release)'] } })]);
    const bad = await triage(none, { status: 'ignored', in_release: '   ', in_next_release: 'soon' });
    assert.deepEqual([bad.statusCode, JSON.parse(bad.body)], [422, { errors: { in_release: ['must be the name of a release, 1 to 100 characters'], in_next_release: ['must be true or false'] } }]);
    const notResolving = await triage(none, { status: 'ignored', in_release: '1.0' });
    assert.deepEqual([notResolving.statusCode, JSON.parse(notResolving.body)], [422, { errors: { in_release: ['is only given with status resolved'] } }]);
    const bulk = await t.app.inject({ method: 'PUT', url: `${ERRORS}/triage.json`, headers: { authorization: t.adminAuth }, payload: { triage: { status: 'resolved', in_next_release: true }, ids: [none] } });
    assert.deepEqual([bulk.statusCode, JSON.parse(bulk.body)], [422, { errors: { in_next_release: ['is given for one error at a time (each has its own latest release); give in_release'] } }]);
    const many = await t.app.inject({ method: 'PUT', url: `${ERRORS}/triage.json`, headers: { authorization: t.adminAuth }, payload: { triage: { status: 'resolved', in_release: '1.0' }, ids: [none] } });
    assert.deepEqual([many.statusCode, many.body], [200, '{"changed":1}']);
    assert.equal((await status(none)).resolved_in_release, '1.0');
  });

  it('keeps a tag of the longest name (32 characters) on both databases, and leaves out a longer one', async () => {
    const name = 'a'.repeat(32);
    const id = await made({ error_class: 'Tag::Long', message: 'long tag', context: { tags: { [name]: 'x', [`${name}b`]: 'y' } } });
    const found = await get(`${ERRORS}.json?q=${encodeURIComponent(`tag.${name}:x`)}`);
    assert.deepEqual([found.statusCode, (JSON.parse(found.body) as Array<{ infrastructure_error: { id: number } }>).map((item) => item.infrastructure_error.id)], [200, [id]]);
    const dimensions = await t.database.db.selectFrom('error_breakdown').select('dimension').where('error_id', '=', id).where('dimension', 'like', 'tag.%').execute();
    assert.deepEqual(dimensions, [{ dimension: `tag.${name}` }]);
    const longer = await get(`${ERRORS}.json?q=${encodeURIComponent(`tag.${name}b:y`)}`);
    assert.equal(longer.statusCode, 422, longer.body);
    await t.app.inject({ method: 'DELETE', url: `${ERRORS}/${id}.json`, headers: { authorization: t.adminAuth } });
  });

  it('lists the releases with the errors each brought and the regressions it caused, and declares one ahead of its first event', async () => {
    const list = await get(`${RELEASES}.json`);
    assert.equal(list.statusCode, 200, list.body);
    const byName = Object.fromEntries((JSON.parse(list.body) as Array<{ release: { name: string } }>).map(({ release }) => [release.name, release]));
    assert.deepEqual(byName['2.10.1'], { name: '2.10.1', first_seen: '2026-11-20T10:02:00+00:00', errors_new: 0, regressions: 1 });
    assert.deepEqual(byName['v2.9.0'], { name: 'v2.9.0', first_seen: '2026-11-20T10:02:00+00:00', errors_new: 1, regressions: 0 });
    assert.deepEqual(byName['red'], { name: 'red', first_seen: '2026-11-20T10:04:00+00:00', errors_new: 0, regressions: 1 });
    assert.deepEqual(byName['blue'], { name: 'blue', first_seen: '2026-11-20T10:02:00+00:00', errors_new: 1, regressions: 0 });
    assert.equal(list.headers['x-total'], String(Object.keys(byName).length));
    const stored = await t.database.db.selectFrom('releases').select(['name', 'errors_new', 'regressions']).where('name', '=', '6.7.1').executeTakeFirstOrThrow();
    assert.deepEqual(stored, { name: '6.7.1', errors_new: 1, regressions: 0 });

    const declared = await t.app.inject({ method: 'POST', url: `${RELEASES}.json`, headers: { authorization: t.adminAuth }, payload: { release: { name: ' 7.0.0 ' } } });
    assert.deepEqual([declared.statusCode, declared.body], [201, '{"release":{"name":"7.0.0","first_seen":null,"errors_new":0,"regressions":0}}']);
    const again = await t.app.inject({ method: 'POST', url: `${RELEASES}.xml`, headers: { authorization: t.adminAuth, 'content-type': 'application/xml' }, payload: '<release><name>7.0.0</name></release>' });
    assert.deepEqual([again.statusCode, again.body], [200, `${XML_DECLARATION}<release>
  <name>7.0.0</name>
  <first_seen nil="true"/>
  <errors_new type="integer">0</errors_new>
  <regressions type="integer">0</regressions>
</release>
`]);
    const first = await get(`${RELEASES}.json?per_page=1`);
    assert.equal(first.body, '[{"release":{"name":"7.0.0","first_seen":null,"errors_new":0,"regressions":0}}]');
    const audited = await t.database.db.selectFrom('audit_events').select(['action', 'target_type', 'changes']).where('action', '=', 'release.declare').execute();
    assert.deepEqual(audited, [{ action: 'release.declare', target_type: 'release', changes: '{"name":"7.0.0"}' }]);

    // Its first event fills in when it was first seen and counts what it brought.
    t.time.advance(60);
    await made({ error_class: 'Api::New', message: 'new in 7', context: { release: '7.0.0' } });
    const seen = await get(`${RELEASES}.json?per_page=1`);
    assert.equal(seen.body, '[{"release":{"name":"7.0.0","first_seen":"2026-11-20T10:05:00+00:00","errors_new":1,"regressions":0}}]');

    for (const [payload, errors] of [
      [{ release: { name: '' } }, { name: ["can't be blank"] }],
      [{ release: { name: 7 } }, { name: ['must be a string'] }],
      [{ release: { name: 'x'.repeat(101) } }, { name: ['is too long (maximum is 100 characters)'] }],
      [{ release: { name: '1.0', first_seen: 'now' } }, { first_seen: ['is not a field of a release'] }],
    ] as const) {
      const res = await t.app.inject({ method: 'POST', url: `${RELEASES}.json`, headers: { authorization: t.adminAuth }, payload });
      assert.deepEqual([res.statusCode, JSON.parse(res.body)], [422, { errors }], JSON.stringify(payload));
    }
    const stranger = await t.app.inject({ method: 'POST', url: `${RELEASES}.json`, headers: { authorization: t.aliceAuth }, payload: { release: { name: '9.9.9' } } });
    assert.deepEqual([stranger.statusCode, stranger.body], [403, forbiddenJson('infrastructure_errors.triage')]);
    assert.equal((await get(`${RELEASES}.json`, t.aliceAuth)).statusCode, 403);
    assert.equal((await t.app.inject({ method: 'GET', url: `${RELEASES}.json` })).statusCode, 401);
  });
});
