import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN, ALICE, createTestApp, type TestApp } from './support/app.js';
import { logSourcesRepository } from '../src/logs/log-sources.store.js';

// The console's log sources page (docs/console.md#log-sources), through app.inject().

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const CONSOLE_COOKIE = /^_cmi_console=([^;\s]+);/;

async function session(t: TestApp, login = ADMIN.login, password = ADMIN.password): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: new URLSearchParams({ login, password }).toString() });
  assert.equal(res.statusCode, 303, res.body);
  return `_cmi_console=${CONSOLE_COOKIE.exec(String(res.headers['set-cookie']))![1]}`;
}

describe('the console\'s log sources', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('lists every source with its counts, escaped, filtered by the form; linked from the menu', async () => {
    const cookie = await session(t);
    const empty = await t.app.inject({ method: 'GET', url: '/console/sources', headers: { cookie } });
    assert.equal(empty.statusCode, 200);
    assert.match(empty.body, /<a href="\/console\/sources">Log sources<\/a>/);
    assert.match(empty.body, /<p class="empty">No log sources yet\.<\/p>/);
    const at = new Date('2026-11-20T09:55:00.000Z');
    await logSourcesRepository(t.database).add([
      { host: '<hv-7>', program: 'libvirtd', component: 'nova', keyId: 3, lines: 120, errors: 2, firstAt: at, lastAt: at },
      { host: 'hv-8', program: '', component: null, keyId: 4, lines: 5, errors: 0, firstAt: at, lastAt: at },
    ]);
    const list = await t.app.inject({ method: 'GET', url: '/console/sources', headers: { cookie } });
    assert.ok(list.body.includes('<p class="total">2 sources</p>'), 'the total');
    assert.ok(list.body.includes('<td>&lt;hv-7&gt;</td><td>libvirtd</td><td>nova</td>\n<td><a href="/console/ingest-keys/3">#3</a></td><td>120</td><td>2</td>'), 'the source, its host escaped');
    assert.ok(list.body.includes('<td>hv-8</td><td><span class="muted">none</span></td><td>-</td>'), 'a source without program');
    const filtered = await t.app.inject({ method: 'GET', url: '/console/sources?component=nova&host=', headers: { cookie } });
    assert.ok(filtered.body.includes('<p class="total">1 source</p>'), 'one left');
    assert.ok(filtered.body.includes('<input id="component" name="component" maxlength="255" value="nova">'), 'the filter kept in the form');
    assert.ok(!filtered.body.includes('<td>hv-8</td>'), 'the other filtered out');
  });

  it('is not offered to a user without infrastructure_errors.read, and refused (403) when asked', async () => {
    const cookie = await session(t, ALICE.login, ALICE.password);
    const users = await t.app.inject({ method: 'GET', url: '/console/users', headers: { cookie } });
    assert.ok(!users.body.includes('/console/sources'), 'no link');
    const res = await t.app.inject({ method: 'GET', url: '/console/sources', headers: { cookie } });
    assert.equal(res.statusCode, 403);
  });
});
