import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { escapeHtml } from '../src/console/html.js';
import { ADMIN, createTestApp, type TestApp } from './support/app.js';

/**
 * A report's free-form context (docs/limits.md#infrastructure-error-reports): bounded in depth and bytes,
 * and every console page about one error stays small, however large what it shows, with the whole
 * value offered as a download.
 */

const JSON_TYPE = 'application/json; charset=utf-8';
const TOO_DEEP = 'is nested too deeply (maximum is 32 levels of objects and arrays)';

/** `inner` wrapped in `levels` arrays. */
function nested(levels: number, inner: unknown = 1): unknown {
  let value = inner;
  for (let i = 0; i < levels; i += 1) value = [value];
  return value;
}

function assertError(res: LightMyRequestResponse, status: number, contentType: string, body: string): void {
  assert.equal(res.statusCode, status, res.body.slice(0, 300));
  assert.equal(res.headers['content-type'], contentType);
  assert.equal(res.headers['cache-control'], 'no-cache');
  assert.equal(res.headers.status, `${status} ${res.statusMessage}`);
  assert.equal(res.body, body);
}

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const report = (payload: string, contentType = 'application/json', url = '/sysadmin_tools/infrastructure/errors.json') =>
  t.app.inject({ method: 'POST', url, headers: { authorization: t.adminAuth, 'content-type': contentType }, payload });

describe('the depth of a context', () => {
  it('32 levels of objects and arrays are recorded, the context object counting as the first', async () => {
    const res = await report(JSON.stringify({ error_class: 'Deep32', context: { a: nested(31) } }));
    assert.equal(res.statusCode, 201, res.body);
  });

  it('33 levels answer 422 naming context, in JSON', async () => {
    assertError(await report(JSON.stringify({ error_class: 'Deep33', context: { a: nested(32) } })), 422, JSON_TYPE, `{"errors":{"context":["${TOO_DEEP}"]}}`);
  });

  it('100,000 levels (JSON.stringify would overflow its stack) answer 422, never 500, and record nothing', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    assertError(await report(`{"error_class":"Deeper","context":{"a":${deep}}}`), 422, JSON_TYPE, `{"errors":{"context":["${TOO_DEEP}"]}}`);
    assertError(await report(JSON.stringify({ error_class: 'Deeper', context: `{"a":${deep}}` })), 422, JSON_TYPE, `{"errors":{"context":["${TOO_DEEP}"]}}`);
    const xml = `<infrastructure_error><error_class>Deeper</error_class><context>{"a":${deep}}</context></infrastructure_error>`;
    assertError(
      await report(xml, 'application/xml', '/sysadmin_tools/infrastructure/errors.xml'),
      422,
      'application/xml; charset=utf-8',
      `<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Context ${TOO_DEEP}</error>\n</errors>\n`,
    );
    const listed = await t.app.inject({ method: 'GET', url: '/sysadmin_tools/infrastructure/errors.json?error_class=Deeper', headers: { authorization: t.adminAuth } });
    assert.equal(listed.body, '[]');
  });

  it('over 16,384 bytes answers 422 naming context', async () => {
    assertError(
      await report(JSON.stringify({ error_class: 'Large', context: { a: 'x'.repeat(16_384) } })),
      422,
      JSON_TYPE,
      '{"errors":{"context":["is too large (maximum is 16384 bytes as JSON)"]}}',
    );
  });
});

describe("an error's console page stays small", () => {
  // 16 KiB as compact JSON, 32 levels deep: indented, about 470 KB an occurrence.
  const context = { a: nested(30, Array.from({ length: 7_000 }, () => 1)) };
  const compact = JSON.stringify(context);
  const indented = JSON.stringify(context, null, 2);
  const message = `${'m'.repeat(30_000)}\u{1F600}${'n'.repeat(10_000)}`;
  let id: number;
  let occurrence: number;
  let cookie: string;

  before(async () => {
    assert.ok(Buffer.byteLength(compact) <= 16_384 && indented.length > 450_000);
    for (let i = 0; i < 20; i += 1) {
      const res = await report(JSON.stringify({ error_class: 'Wide', message, context }));
      assert.equal(res.statusCode, i === 0 ? 201 : 200, res.body);
      id = (JSON.parse(res.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
    }
    const occurrences = await t.app.inject({ method: 'GET', url: `/sysadmin_tools/infrastructure/errors/${id}/occurrences.json`, headers: { authorization: t.adminAuth } });
    occurrence = (JSON.parse(occurrences.body) as Array<{ occurrence: { id: number } }>)[0]!.occurrence.id;
    const signIn = await t.app.inject({
      method: 'POST', url: '/console/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ login: ADMIN.login, password: ADMIN.password }).toString(),
    });
    cookie = String(signIn.headers['set-cookie']).split(';')[0] as string;
  });

  it('shows 2,000 characters of each context and message, the cut marked, with a link to the whole', async () => {
    const page = await t.app.inject({ method: 'GET', url: `/console/errors/${id}`, headers: { cookie } });
    assert.equal(page.statusCode, 200);
    // 20 occurrences of ~470 KB indented context and 40 KB message: without the cut, about 10 MB.
    assert.ok(page.body.length < 250_000, `${page.body.length} characters`);
    const base = `/console/errors/${id}/occurrences/${occurrence}`;
    assert.ok(page.body.includes(
      `<pre>${escapeHtml(indented.slice(0, 2_000))}\n<span class="muted">… [truncated: ${indented.length - 2_000} more characters]</span> <a href="${base}/context" download>Download the full context</a></pre>`,
    ));
    assert.ok(page.body.includes(
      `<td class="pre">${'m'.repeat(2_000)}\n<span class="muted">… [truncated: ${message.length - 2_000} more characters]</span> <a href="${base}/message" download>Download the full message</a></td>`,
    ));
  });

  it('downloads the whole context and message', async () => {
    const base = `/console/errors/${id}/occurrences/${occurrence}`;
    const json = await t.app.inject({ method: 'GET', url: `${base}/context`, headers: { cookie } });
    assert.equal(json.statusCode, 200);
    assert.equal(json.headers['content-type'], 'application/octet-stream');
    assert.equal(json.headers['content-disposition'], `attachment; filename="error-${id}-occurrence-${occurrence}-context.json"`);
    assert.equal(json.headers['x-content-type-options'], 'nosniff');
    assert.equal(json.body, compact);
    const text = await t.app.inject({ method: 'GET', url: `${base}/message`, headers: { cookie } });
    assert.equal(text.statusCode, 200);
    assert.equal(text.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(text.headers['content-disposition'], `attachment; filename="error-${id}-occurrence-${occurrence}-message.txt"`);
    assert.equal(text.body, message);
  });

  it('an occurrence the page does not show is not found; without a session, the sign-in', async () => {
    const missing = await t.app.inject({ method: 'GET', url: `/console/errors/${id}/occurrences/999999/context`, headers: { cookie } });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['content-type'], 'text/html; charset=utf-8');
    const anonymous = await t.app.inject({ method: 'GET', url: `/console/errors/${id}/occurrences/${occurrence}/context` });
    assert.equal(anonymous.statusCode, 303);
  });
});
