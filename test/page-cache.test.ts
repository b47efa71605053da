import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { KyselyPlugin } from 'kysely';
import { PartialChanges, versionedCache } from '../src/shared/page-cache.js';
import { trackerChanges } from '../src/tracker/tracker-changes.js';
import type { ErrorReport, InfrastructureError } from '../src/tracker/infrastructure-error.js';
import { buildApp } from '../src/app/app.js';
import { renderedCost, renderResponse } from '../src/http/respond.js';
import { createTestApp, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';
import { validateResponses } from './support/response-validation.js';

/** A cache whose entries cost their length (docs/operations.md#configuration, CMI_PAGE_CACHE_BYTES). */
function cacheOf(maxBytes: number, version: () => string | undefined = () => 'v1') {
  return versionedCache<string>(version, { maxBytes, costOf: (key, value) => key.length + value.length });
}
const fill = (cache: ReturnType<typeof cacheOf>, key: string, value: string) => cache.get(key, () => Promise.resolve(value));

describe('the versioned cache is bounded in bytes', () => {
  it('keeps values while their costs fit, then drops the oldest until a new one fits', async () => {
    const cache = cacheOf(20);
    await fill(cache, 'a', 'aaaa'); // 5
    await fill(cache, 'b', 'bbbbbbbbb'); // 10
    assert.equal(cache.bytes, 15);
    await fill(cache, 'c', 'cccc'); // 5: exactly the bound
    assert.deepEqual([cache.bytes, cache.size], [20, 3]);
    await fill(cache, 'd', 'dddddddddd'); // 11: a (5) and b (10) go, c stays
    assert.deepEqual([cache.peek('a'), cache.peek('b'), cache.peek('c'), cache.peek('d')], [undefined, undefined, 'cccc', 'dddddddddd']);
    assert.deepEqual([cache.bytes, cache.size], [16, 2]);
  });

  it('answers a value costing more than the bound but keeps it not, and drops nothing for it', async () => {
    const cache = cacheOf(20);
    await fill(cache, 'a', 'aaaa');
    assert.equal(await fill(cache, 'big', 'x'.repeat(18)), 'x'.repeat(18));
    assert.equal(cache.peek('big'), undefined);
    assert.deepEqual([cache.peek('a'), cache.bytes, cache.size], ['aaaa', 5, 1]);
  });

  it('with a bound of 0 keeps nothing', async () => {
    const cache = cacheOf(0);
    assert.equal(await fill(cache, 'a', ''), '');
    assert.deepEqual([cache.peek('a'), cache.bytes, cache.size], [undefined, 0, 0]);
  });

  it('a new version empties it, and its bytes', async () => {
    let version = 'v1';
    const cache = cacheOf(100, () => version);
    await fill(cache, 'a', 'aaaa');
    version = 'v2';
    assert.equal(cache.peek('a'), undefined);
    assert.deepEqual([cache.bytes, cache.size], [0, 0]);
  });

  it('never costs more than its bound, over a long run of values of every size', async () => {
    const cache = cacheOf(1000);
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648);
    for (let i = 0; i < 2000; i++) {
      const key = `k${next() % 300}`;
      await fill(cache, key, 'v'.repeat(next() % 1200));
      assert.ok(cache.bytes <= 1000, `${cache.bytes} bytes after ${i + 1} values`);
    }
  });

  it('a rendered page costs its body bytes, its headers and its key', () => {
    const page = renderResponse('json', { kind: 'errors', messages: { base: ['\u00e9'] } }, { 'x-total': '12' });
    const body = Buffer.byteLength('{"errors":{"base":["\u00e9"]}}');
    assert.equal(page.body.byteLength, body);
    const headerChars = Object.entries(page.headers).reduce((sum, [name, value]) => sum + name.length + value.length, 0);
    assert.equal(renderedCost('json|all|1|25', page), body + 2 * (headerChars + 'json|all|1|25'.length) + 1024);
  });
});

describe('changes told to the cache drop only what they may have changed (docs/architecture.md#how-cached-pages-stay-right)', () => {
  const tagged = (partial: PartialChanges<string>) => versionedCache<string, string>(() => 'v1', { maxBytes: 1000, costOf: (key, value) => key.length + value.length }, partial);

  it('keeps an entry whose tag no change told admits, drops one it admits and one kept without a tag', async () => {
    const partial = new PartialChanges<string>();
    const cache = tagged(partial);
    await cache.get('a', () => Promise.resolve('A'), 'host-a');
    await cache.get('b', () => Promise.resolve('B'), 'host-b');
    await cache.get('c', () => Promise.resolve('C'));
    partial.tell((tag) => tag === 'host-b');
    assert.deepEqual([cache.peek('a'), cache.peek('b'), cache.peek('c'), cache.size, cache.bytes], ['A', undefined, undefined, 1, 2]);
  });

  it('keeps a value computed while changes were told unless one of them admits its tag, and everything goes when more changes came than are kept', async () => {
    const partial = new PartialChanges<string>(2);
    const cache = tagged(partial);
    // Told while computing, not of its tag: kept (a slow page stays kept through a stream of new errors).
    await cache.get('other', () => {
      partial.tell((tag) => tag === 'y');
      return Promise.resolve('O');
    }, 'x');
    // Told while computing, of its tag; and one kept without a tag: neither kept.
    await cache.get('late', () => {
      partial.tell((tag) => tag === 'w');
      return Promise.resolve('L');
    }, 'w');
    await cache.get('untagged', () => {
      partial.tell(() => false);
      return Promise.resolve('U');
    });
    assert.deepEqual([cache.peek('other'), cache.peek('late'), cache.peek('untagged'), cache.size], ['O', undefined, undefined, 1]);
    // More changes told while computing than are kept: not kept.
    await cache.get('long', () => {
      for (let k = 0; k < 3; k++) partial.tell(() => false);
      return Promise.resolve('G');
    }, 'z');
    assert.equal(cache.peek('long'), undefined);
    await cache.get('a', () => Promise.resolve('A'), 'x');
    for (let k = 0; k < 3; k++) partial.tell(() => false);
    assert.deepEqual([cache.peek('a'), cache.size], [undefined, 0]);
  });

  it('a batch tells its new errors only when every report in it created its error', () => {
    const report = (host: string): ErrorReport => ({ fingerprint: host, error_class: 'E', message: '', backtrace: '', occurred_at: new Date(0), count: 1, host, component: null, request_id: null, context: null });
    const record = (id: number) => ({ id, error_class: 'E' } as unknown as InfrastructureError);
    const changes = trackerChanges();
    // The second report counted an error that was there before: nothing is told, the version moves instead.
    assert.equal(changes.tellCreated([report('h1'), report('h2')], [{ record: record(1), created: true }, { record: record(2), created: false }]), false);
    assert.equal(changes.changes.sequence, 0);
    // Two reports of one new error (the second not the one that created it), from two hosts: both hosts count.
    assert.equal(changes.tellCreated([report('h1'), report('H2')], [{ record: record(3), created: true }, { record: record(3), created: false }]), true);
    const [mayChange] = changes.changes.since(0) ?? [];
    const list = (filters: Record<string, string>) => mayChange?.({ filters });
    assert.deepEqual([list({ host: 'h2' }), list({ host: 'h3' }), list({}), mayChange?.({ record: true })], [true, false, true, false]);
    assert.deepEqual([list({ errorClass: 'e' }), list({ errorClass: 'F' }), list({ component: '' }), list({ component: 'db' })], [true, false, true, false]);
  });
});

describe('the users page cache over HTTP, with a tiny CMI_PAGE_CACHE_BYTES', () => {
  let t: TestApp;
  let app: FastifyInstance;
  let statements = 0;
  const counting: KyselyPlugin = {
    transformQuery: ({ node }) => {
      statements += 1;
      return node;
    },
    transformResult: ({ result }) => Promise.resolve(result),
  };

  before(async () => {
    // One page of one plain user costs about 3.4 kB (its record shows its role and that role's
    // permissions): two fit in 8,000 bytes, three do not. The administrator's, with every permission, is
    // larger than the bound and never kept, so the pages here are plain users' (page 2 on).
    // The outbox and the password policy are read every second by default: their statements would land
    // in a request's count by chance. Once an hour here, after their first read at start (before the
    // pages are kept).
    t = await createTestApp({ CMI_PAGE_CACHE_BYTES: '8000', CMI_WEBHOOK_POLL_INTERVAL: '3600000', CMI_PASSWORD_POLICY_REFRESH: '3600000' });
    await t.addUsers(4);
    app = await buildApp({ config: t.config, database: { ...t.database, db: t.database.db.withPlugin(counting) }, clock: t.time.clock, extend: validateResponses(), logger: false });
    // The credential is verified once and then answered from the verification cache, without statements.
    assert.equal((await app.inject({ url: '/version.json', headers: { authorization: t.adminAuth } })).statusCode, 200);
    // That verification is written to the last access log a second later, apart from the request: written
    // before any page is counted, so its statements never land in a page's count.
    await eventually(async () => assert.ok((await t.database.db.selectFrom('last_access_log').select('id').executeTakeFirst()) !== undefined, 'the sign-in written'));
    // On PostgreSQL the users just added are heard of by notification, after their inserts: pages are
    // kept once the data version has settled (docs/architecture.md#how-cached-pages-stay-right).
    await eventually(async () => {
      await page('/users.json?per_page=1&page=2');
      assert.equal((await page('/users.json?per_page=1&page=2')).statements, 0, 'page 2 kept');
    });
  });
  after(async () => {
    await app.close();
    await t.close();
  });

  /** GETs a page; returns its body and how many statements answering it took. */
  const page = async (url: string) => {
    const before = statements;
    const res = await app.inject({ url, headers: { authorization: t.adminAuth } });
    assert.equal(res.statusCode, 200, res.body);
    return { body: res.body, statements: statements - before };
  };

  it('keeps the newest pages within the bound and recomputes the oldest', async () => {
    // Kept now: page 2 (from before). Page 4 will make room by dropping it, the oldest.
    const p3 = await page('/users.json?per_page=1&page=3');
    // What computing a page takes (the same for every page of one user); a kept page takes none.
    const computed = p3.statements;
    assert.ok(computed > 0);
    assert.match(p3.body, /"login":"user001"/);
    assert.equal((await page('/users.json?per_page=1&page=4')).statements, computed);
    assert.equal((await page('/users.json?per_page=1&page=3')).statements, 0);
    assert.equal((await page('/users.json?per_page=1&page=5')).statements, computed);
    // Page 3 was the oldest: it made room for page 5; page 4 is still kept.
    assert.equal((await page('/users.json?per_page=1&page=4')).statements, 0);
    const again = await page('/users.json?per_page=1&page=3');
    assert.deepEqual(again, { body: p3.body, statements: computed });
  });

  it('stays in place while the error tracker is written to (migration 006): an incident leaves users fast', async () => {
    await page('/users.json?per_page=1&page=2');
    assert.equal((await page('/users.json?per_page=1&page=2')).statements, 0);
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/sysadmin_tools/infrastructure/errors.json',
        headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
        payload: JSON.stringify({ error_class: 'StorageTimeout', host: `hv-${i}` }),
      });
      assert.equal(res.statusCode, i === 0 ? 201 : 200, res.body);
    }
    // Long enough for a PostgreSQL notification to arrive, had the write sent one.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await page('/users.json?per_page=1&page=2')).statements, 0);
  });

  it('serves a page larger than the bound, every time computed', async () => {
    const first = await page('/users.xml?per_page=1000');
    const second = await page('/users.xml?per_page=1000');
    assert.equal(first.body.match(/<user>/g)?.length, 6);
    assert.ok(Buffer.byteLength(first.body) > 8000);
    assert.ok(first.statements > 0);
    assert.deepEqual(second, { body: first.body, statements: first.statements });
  });
});
