import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';
import { exportText } from './support/journal.js';
import { startSourceSilenceWatch } from '../src/logs/source-silence.js';

/**
 * A hostile review of the log sources (docs/log-sources.md): each test states what the documentation
 * promises and shows a way to break it, over a real HTTP socket.
 */

const KEYS = '/sysadmin_tools/infrastructure/ingest_keys.json';

interface Key { id: number; public_key: string }

describe('log sources under attack', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp({}, { ingestUsageFlushMs: 3_600_000 });
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
  });
  after(async () => {
    await t.close();
  });

  const post = (url: string, body: unknown) => t.app.inject({ method: 'POST', url, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  async function makeKey(fields: Record<string, unknown>): Promise<Key> {
    const made = await post(KEYS, { ingest_key: fields });
    assert.equal(made.statusCode, 201, made.body);
    return (JSON.parse(made.body) as { ingest_key: Key }).ingest_key;
  }

  it('a journal entry sent again (the uploader resends its last one) is counted once on its source too', async () => {
    const key = await makeKey({ label: 'journal', kind: 'journald' });
    const upload = exportText([[
      ['__CURSOR', 's=0123;i=1;b=abc;m=1;t=1;x=1'],
      ['__REALTIME_TIMESTAMP', String(t.time.clock().getTime() * 1000)],
      ['_HOSTNAME', 'resend-host'],
      ['SYSLOG_IDENTIFIER', 'libvirtd'],
      ['PRIORITY', '3'],
      ['MESSAGE', 'qemu failed to start'],
    ]]);
    for (let i = 0; i < 2; i += 1) {
      const answer = await fetch(`${base}/api/${key.id}/journal/${key.public_key}/upload`, { method: 'POST', headers: { 'content-type': 'application/vnd.fdo.journal' }, body: upload });
      assert.equal(answer.status, 202, await answer.text());
    }
    const errors = await t.database.db.selectFrom('infrastructure_errors').select(['counter']).where('message', '=', 'qemu failed to start').execute();
    assert.deepEqual(errors.map((e) => Number(e.counter)), [1], 'the error counted once (its __CURSOR)');
    await t.app.logSources.ingestion.flush();
    const source = await t.database.db.selectFrom('log_sources').select(['lines', 'errors']).where('host', '=', 'resend-host').executeTakeFirstOrThrow();
    assert.deepEqual({ lines: Number(source.lines), errors: Number(source.errors) }, { lines: 1, errors: 1 }, 'docs: "a line is never skipped and never counted twice"');
  });

  it('the silence check survives 70,000 silent sources coming back at once (hosts a sender may invent, under the 100,000 cap)', async () => {
    const rule = await post('/sysadmin_tools/alert_destinations.json', { alert_destination: { label: 'Nowhere', kind: 'webhook', url: 'http://127.0.0.1:65000/hook', secret: 'secret-0123456789abcdef' } });
    assert.equal(rule.statusCode, 201, rule.body);
    const destinationId = (JSON.parse(rule.body) as { alert_destination: { id: number } }).alert_destination.id;
    const made = await post('/sysadmin_tools/alert_rules.json', { alert_rule: { label: 'Flood', events: ['back'], component: 'flood', silent_minutes: 1, destination_ids: [destinationId] } });
    assert.equal(made.statusCode, 201, made.body);
    const ruleId = (JSON.parse(made.body) as { alert_rule: { id: number } }).alert_rule.id;
    const then = new Date(t.time.clock().getTime() - 3_600_000).toISOString();
    const now = t.time.clock().toISOString();
    // The state 70 checks leave (1,000 silences claimed per check): 70,000 sources silent, claimed...
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 70000)
      insert into log_sources (host, program, component, key_id, first_seen_at, last_seen_at, lines, errors)
      select 'flood-' || cast(i as varchar(10)), 'p', 'flood', 1, ${then}, ${then}, 1, 0 from n`.execute(t.database.db);
    await sql`insert into log_source_silences (rule_id, source_id, last_seen_at, silent_at)
      select ${ruleId}, id, last_seen_at, ${then} from log_sources where component = 'flood'`.execute(t.database.db);
    // ...then all of them send again (the network back after a partition).
    await sql`update log_sources set last_seen_at = ${now} where component = 'flood'`.execute(t.database.db);
    const watch = startSourceSilenceWatch({ database: t.database, clock: t.time.clock, publicUrl: 'http://cmi.test', wake: () => {}, onError: () => {} });
    try {
      await assert.doesNotReject(watch.checkOnce(), 'a check that fails now fails at every check: no silent or back alert of any rule is told again');
    } finally {
      await watch.stop();
    }
  });

  it('an OTLP request without a key, its chunked body still coming, is answered 401 and its connection closed (the rest never read)', async () => {
    const socket = connect(Number(new URL(base).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write('POST /v1/logs HTTP/1.1\r\nHost: cmi\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"resourceLogs":\r\n');
    await eventually(() => assert.match(answer, /\r\n\r\n/, 'the answer\'s head arrived'));
    assert.match(answer, /^HTTP\/1\.1 401 /);
    assert.match(answer, /\r\nconnection: close\r\n/i, `a stranger may go on sending (read and thrown away) until the request timeout: ${answer}`);
    socket.write('10\r\n0123456789abcdef\r\n');
    await closed;
  });

  it('one ingest key holder\'s request is not slowed by an operator rule: a glob is matched "in at most (message x glob) steps" and blocks everything', async () => {
    // A rule an operator may well write: a long message to match, with * to match inside a longer one.
    const rule = await post('/sysadmin_tools/infrastructure/log_rules.json', { log_rule: { label: 'Long', pattern: `*${'a'.repeat(1022)}b`, error_class: 'long' } });
    assert.equal(rule.statusCode, 201, rule.body);
    try {
      const key = await makeKey({ label: 'otlp glob', kind: 'otlp' });
      // 400 info records of 4,096 characters: 3 KiB gzipped, well within every limit of a request.
      const body = gzipSync(JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: 400 }, () => ({ severityNumber: 9, body: { stringValue: 'a'.repeat(4096) } })) }] }] }));
      const started = performance.now();
      const answer = await fetch(`${base}/v1/logs`, { method: 'POST', headers: { authorization: `Bearer ${key.public_key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body });
      const ms = performance.now() - started;
      assert.equal(answer.status, 200, await answer.text());
      // Each record costs ~13 ms per rule, judged twice (takeAll): the event loop is held for seconds, 200 rules make it minutes.
      assert.ok(ms < 1000, `400 records took ${Math.round(ms)} ms of a blocked event loop (${body.length} bytes sent)`);
    } finally {
      const id = (JSON.parse(rule.body) as { log_rule: { id: number } }).log_rule.id;
      await t.app.inject({ method: 'DELETE', url: `/sysadmin_tools/infrastructure/log_rules/${id}.json`, headers: { authorization: t.adminAuth } });
    }
  });

  it('a stranger no syslog key admits cannot take every TCP connection of the listener from an allowed sender', async () => {
    await makeKey({ label: 'syslog rack', kind: 'syslog', allowed_networks: '127.0.0.1/32', component: 'rack' });
    const listeners = (await t.app.logSources.listenSyslog(['tcp://127.0.0.1:0'], undefined))!;
    const port = listeners.addresses()[0]!.port;
    // 1,000 idle connections from 127.0.0.2, an address no key names: they would be held 30 minutes.
    const strangers: Socket[] = [];
    try {
      for (let i = 0; i < 1000; i += 1) {
        const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
        socket.on('error', () => {});
        strangers.push(socket);
      }
      // Each is closed as it opens: no key admits 127.0.0.2.
      await eventually(() => assert.equal(listeners.counters.dropped.unauthenticated, 1000));
      assert.equal(listeners.counters.connections.open, 0);
      const sender = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.1' });
      sender.on('error', () => {});
      const closed = new Promise((resolve) => sender.once('close', resolve));
      sender.end('<27>1 - rack-host libvirtd - - - legit line from the allowed network\n');
      await closed;
      await t.app.logSources.ingestion.syslogDrained();
      assert.deepEqual(listeners.counters.dropped.connection_limit, 0, 'the allowed sender was refused: the stranger holds every connection');
    } finally {
      for (const socket of strangers) socket.destroy();
    }
  });

  it('a key holder\'s kernel lines are judged by the shipped rules in time: io-error\'s `blk_update_request: .*error` is quadratic on a 64 KiB message', async () => {
    const key = await makeKey({ label: 'otlp kernel', kind: 'otlp' });
    // 60 records of 64 KiB from `kernel`: a few KiB gzipped.
    const message = 'blk_update_request: '.repeat(3276);
    const body = gzipSync(JSON.stringify({ resourceLogs: [{
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'kernel' } }, { key: 'host.name', value: { stringValue: 'regex-host' } }] },
      scopeLogs: [{ logRecords: Array.from({ length: 60 }, () => ({ severityNumber: 9, body: { stringValue: message } })) }],
    }] }));
    const started = performance.now();
    const answer = await fetch(`${base}/v1/logs`, { method: 'POST', headers: { authorization: `Bearer ${key.public_key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body });
    const ms = performance.now() - started;
    assert.equal(answer.status, 200, await answer.text());
    assert.ok(ms < 1000, `60 records took ${Math.round(ms)} ms of a blocked event loop (${body.length} bytes sent; 16 MiB decompressed is 250 of them)`);
  });

  it('an entry the uploader resends (already recorded, recognised by its __CURSOR) spends none of the key\'s rate limit', async () => {
    const key = await makeKey({ label: 'journal limited', kind: 'journald', rate_limit_per_minute: 2 });
    const entry = (n: number) => [
      ['__CURSOR', `s=77;i=${n};b=abc;m=1;t=1;x=1`] as [string, string],
      ['_HOSTNAME', 'limited-host'] as [string, string],
      ['SYSLOG_IDENTIFIER', 'libvirtd'] as [string, string],
      ['PRIORITY', '3'] as [string, string],
      ['MESSAGE', `limited failure ${n}`] as [string, string],
    ];
    const upload = (entries: Array<Array<[string, string]>>) => fetch(`${base}/api/${key.id}/journal/${key.public_key}/upload`, { method: 'POST', headers: { 'content-type': 'application/vnd.fdo.journal' }, body: exportText(entries) });
    assert.equal((await upload([entry(1)])).status, 202);
    // Started again from its saved cursor: entry 1 again, and one new error, which fits in the token left.
    const again = await upload([entry(1), entry(2)]);
    assert.equal(again.status, 202, `the resent entry spent a token: ${again.status} ${await again.text()}`);
  });

  it('a sender inventing 10,000 hosts between two writes does not stop a real source being counted (it would be told silent while it sends)', async () => {
    const key = await makeKey({ label: 'otlp hosts', kind: 'otlp' });
    const info = (host: string) => ({ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'nova-compute' } }, { key: 'host.name', value: { stringValue: host } }] }, scopeLogs: [{ logRecords: [{ severityNumber: 9, body: { stringValue: 'alive' } }] }] });
    const send = async (hosts: string[]) => {
      const answer = await fetch(`${base}/v1/logs`, { method: 'POST', headers: { authorization: `Bearer ${key.public_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ resourceLogs: hosts.map(info) }) });
      assert.equal(answer.status, 200, await answer.text());
    };
    await send(['real-hv-1']);
    await t.app.logSources.ingestion.flush();
    await send(Array.from({ length: 10_000 }, (_, i) => `fake-${i}`));
    await send(['real-hv-1']);
    await t.app.logSources.ingestion.flush();
    const real = await t.database.db.selectFrom('log_sources').select(['lines']).where('host', '=', 'real-hv-1').executeTakeFirstOrThrow();
    assert.equal(Number(real.lines), 2, 'the real source\'s line was not counted: its last_seen_at stands still and a silence rule calls it silent');
  });

  it('at most 200 operator rules, however many are created at once', async () => {
    const made = await Promise.all(Array.from({ length: 220 }, (_, i) => post('/sysadmin_tools/infrastructure/log_rules.json', { log_rule: { label: `r${i}`, pattern: `*never-${i}*`, error_class: 'x' } })
      .then((answer) => answer.statusCode)));
    const kept = Number((await t.database.db.selectFrom('log_rules').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    await t.database.db.deleteFrom('log_rules').execute();
    assert.ok(kept <= 200, `${kept} rules kept (${made.filter((status) => status === 201).length} answered 201)`);
  });

  it('a rule\'s update is held to the rule\'s fields as its creation is: an empty error_class, pattern or label is a 422', async () => {
    const made = await post('/sysadmin_tools/infrastructure/log_rules.json', { log_rule: { label: 'Port flaps', pattern: '*link state changed to down*', error_class: 'ovs: port down' } });
    assert.equal(made.statusCode, 201, made.body);
    const id = (JSON.parse(made.body) as { log_rule: { id: number } }).log_rule.id;
    try {
      const changed = await fetch(`${base}/sysadmin_tools/infrastructure/log_rules/${id}.json`, { method: 'PUT', headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, body: JSON.stringify({ log_rule: { label: '   ', pattern: '', error_class: '' } }) });
      const kept = await t.database.db.selectFrom('log_rules').select(['label', 'pattern', 'error_class']).where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(changed.status, 422, `answered ${changed.status}, the rule now ${JSON.stringify(kept)}`);
    } finally {
      await t.database.db.deleteFrom('log_rules').execute();
    }
  });
});
