import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';
import { webhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { logSourcesRepository, type SourceSeen } from '../src/logs/log-sources.store.js';
import { startSourceSilenceWatch } from '../src/logs/source-silence.js';
import { sourceAlertBody } from '../src/alerts/alert-messages.js';

// Log sources (docs/log-sources.md#sources-and-silence): the repository the readers add to, the list
// over the API, and silence alerts through the outbox to a real webhook receiver, claimed once by two
// processes checking at once.

const SOURCES = '/sysadmin_tools/infrastructure/sources';
const SECRET = 'sources-team-secret-0123';
const START = '2026-11-20T10:00:00.000Z';
const BASE = 'http://127.0.0.1:3000';
const at = (seconds: number) => new Date(new Date(START).getTime() + seconds * 1000);
const seen = (fields: Partial<SourceSeen> & Pick<SourceSeen, 'host' | 'program'>): SourceSeen =>
  ({ component: null, keyId: 1, lines: 1, errors: 0, firstAt: at(0), lastAt: at(0), ...fields });

describe('log sources', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  before(async () => {
    t = await createTestApp({ CMI_WEBHOOK_POLL_INTERVAL: '20', CMI_WEBHOOK_TIMEOUT: '1000', CMI_PUBLIC_URL: BASE });
    receiver = await webhookReceiver(SECRET);
  });
  after(async () => {
    await receiver.stop();
    await t.close();
  });

  const get = (url: string, authorization = t.adminAuth) => t.app.inject({ method: 'GET', url, headers: { authorization } });
  const post = async (url: string, body: unknown) => t.app.inject({ method: 'POST', url, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

  it('adds batches in one upsert: lines and errors summed, first the least, last the greatest, component and key the latest', async () => {
    const sources = logSourcesRepository(t.database);
    await sources.add([
      seen({ host: 'hv-1', program: 'libvirtd', component: 'nova', lines: 3, errors: 1, firstAt: at(5), lastAt: at(10) }),
      seen({ host: 'hv-1', program: 'libvirtd', component: 'nova', lines: 2, errors: 0, firstAt: at(1), lastAt: at(4) }),
      seen({ host: 'hv-2', program: '', lines: 7, errors: 2 }),
    ]);
    await sources.add([seen({ host: 'hv-1', program: 'libvirtd', component: 'compute', keyId: 2, lines: 10, errors: 5, firstAt: at(3), lastAt: at(20) })]);
    const rows = await t.database.db.selectFrom('log_sources').selectAll().orderBy('id').execute();
    assert.deepEqual(rows.map((row) => ({ ...row, id: Number(row.id), key_id: Number(row.key_id), lines: Number(row.lines), errors: Number(row.errors) })), [
      { id: 1, host: 'hv-1', program: 'libvirtd', component: 'compute', key_id: 2, first_seen_at: at(1).toISOString(), last_seen_at: at(20).toISOString(), lines: 15, errors: 6 },
      { id: 2, host: 'hv-2', program: '', component: null, key_id: 1, first_seen_at: at(0).toISOString(), last_seen_at: at(0).toISOString(), lines: 7, errors: 2 },
    ]);
    // An older batch arriving late moves neither end the wrong way.
    await sources.add([seen({ host: 'hv-2', program: '', lines: 1, firstAt: at(-60), lastAt: at(-30) })]);
    const hv2 = await sources.find('hv-2', '');
    assert.deepEqual([hv2?.first_seen_at, hv2?.last_seen_at, hv2?.lines], [at(-60), at(0), 8]);
  });

  it('keeps at most the cap: a new source past it is refused and counted, known ones still counted', async () => {
    const capped = logSourcesRepository(t.database, { maxSources: 2 });
    await capped.add([seen({ host: 'flood-1', program: 'x' }), seen({ host: 'hv-1', program: 'libvirtd', component: 'compute', keyId: 2, lines: 1, lastAt: at(20) })]);
    assert.equal(capped.refused(), 1);
    assert.equal(await capped.find('flood-1', 'x'), undefined);
    assert.equal((await capped.find('hv-1', 'libvirtd'))?.lines, 16);
  });

  it('lists the sources paginated, in JSON and XML, filtered by host, program and component; refuses bad filters and other users', async () => {
    const page = await get(`${SOURCES}.json?per_page=1&page=2`);
    assert.deepEqual([page.statusCode, page.headers['x-total'], page.headers['x-limit'], page.headers['x-page']], [200, '2', '1', '2']);
    assert.equal(page.body, '[{"log_source":{"id":2,"host":"hv-2","program":"","component":null,"key_id":1,"first_seen_at":"2026-11-20T09:59:00+00:00","last_seen_at":"2026-11-20T10:00:00+00:00","lines":8,"errors":2}}]');
    const xml = await get(`${SOURCES}.xml?host=hv-1&program=libvirtd&component=compute`);
    assert.equal(xml.statusCode, 200);
    assert.equal(xml.body, `<?xml version="1.0" encoding="UTF-8"?>
<log_sources type="array">
  <log_source>
    <id type="integer">1</id>
    <host>hv-1</host>
    <program>libvirtd</program>
    <component>compute</component>
    <key_id type="integer">2</key_id>
    <first_seen_at type="datetime">2026-11-20T10:00:00+00:00</first_seen_at>
    <last_seen_at type="datetime">2026-11-20T10:00:20+00:00</last_seen_at>
    <lines type="integer">16</lines>
    <errors type="integer">6</errors>
  </log_source>
</log_sources>
`);
    const none = await get(`${SOURCES}.json?program=`);
    assert.deepEqual(none.json<Array<{ log_source: { host: string } }>>().map((s) => s.log_source.host), ['hv-2']);
    const bad = await get(`${SOURCES}.json?hots=hv-1&host=a&host=b&component=${'c'.repeat(256)}`);
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.body, '{"errors":{"hots":["is not a parameter of this list"],"host":["must be given once"],"component":["is too long (maximum is 255 characters)"]}}');
    const badXml = await get(`${SOURCES}.xml?hots=1`);
    assert.equal(badXml.statusCode, 422);
    assert.equal(badXml.body, '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Hots is not a parameter of this list</error>\n</errors>\n');
    assert.equal((await get(`${SOURCES}.json`, t.aliceAuth)).statusCode, 403);
    assert.equal((await t.app.inject({ method: 'GET', url: `${SOURCES}.json` })).statusCode, 401);
  });

  it('a rule\'s silent_minutes is 1 to 10080 and goes with the events silent or back', async () => {
    const destination = await post('/sysadmin_tools/alert_destinations.json', { alert_destination: { label: 'Ops', kind: 'webhook', url: receiver.url, secret: SECRET } });
    assert.equal(destination.statusCode, 201, destination.body);
    for (const [fields, errors] of [
      [{ events: ['silent'], silent_minutes: 0 }, '{"errors":{"silent_minutes":["must be an integer from 1 to 10080"]}}'],
      [{ events: ['silent'], silent_minutes: 10081 }, '{"errors":{"silent_minutes":["must be an integer from 1 to 10080"]}}'],
      [{ events: ['silent', 'back'] }, '{"errors":{"silent_minutes":["can\'t be blank for a rule routing silent or back: the minutes a source may send nothing"]}}'],
      [{ events: ['new'], silent_minutes: 5 }, '{"errors":{"events":["must hold silent (or back) when silent_minutes is given"]}}'],
    ] as const) {
      const res = await post('/sysadmin_tools/alert_rules.json', { alert_rule: { label: 'Quiet', destination_ids: [1], ...fields } });
      assert.deepEqual([res.statusCode, res.body], [422, errors]);
    }
  });

  it('a source silent for the rule\'s minutes raises one silent alert, checked by two processes at once, and one back alert when it sends again', async () => {
    const sources = logSourcesRepository(t.database);
    t.time.set(START);
    await sources.add([seen({ host: 'hv-7', program: 'nova-compute', component: 'nova', lastAt: at(0) }), seen({ host: 'hv-8', program: 'nova-compute', component: 'glance', lastAt: at(0) })]);
    const rule = await post('/sysadmin_tools/alert_rules.json', { alert_rule: { label: 'Nova quiet', events: ['silent', 'back'], component: 'nova', silent_minutes: 1, destination_ids: [1] } });
    assert.equal(rule.statusCode, 201, rule.body);
    assert.equal(rule.json<{ alert_rule: { silent_minutes: number } }>().alert_rule.silent_minutes, 1);
    const other = await t.secondProcess();
    const watches = [t.database, other.database].map((database) => startSourceSilenceWatch({ database, clock: t.time.clock, publicUrl: BASE, wake: () => {}, onError: (error) => assert.fail(String(error)) }));
    try {
      t.time.advance(59);
      assert.deepEqual(await Promise.all(watches.map((w) => w.checkOnce())), [0, 0]);
      t.time.advance(1);
      const queued = await Promise.all(watches.map((w) => w.checkOnce()));
      assert.equal(queued[0]! + queued[1]!, 1, `one silent alert in all: ${queued.join(', ')}`);
      const silent = await eventually(() => {
        assert.equal(receiver.received.length, 1, 'the silent alert delivered');
        return receiver.received[0]!;
      });
      assert.equal(silent.signatureValid, true);
      // Its id: PostgreSQL's upserts take a sequence value each, SQLite's only when they insert.
      const id = (await sources.find('hv-7', 'nova-compute'))!.id;
      assert.equal(silent.body, JSON.stringify({
        event: 'silent',
        text: `[cmi] Source hv-7 nova-compute is silent: nothing for 1 minute (last at 2026-11-20T10:00:00+00:00) ${BASE}${SOURCES}.json?host=hv-7&program=nova-compute`,
        log_source: { id, host: 'hv-7', program: 'nova-compute', component: 'nova', key_id: 1, first_seen_at: '2026-11-20T10:00:00+00:00', last_seen_at: '2026-11-20T10:00:00+00:00', lines: 1, errors: 0 },
        url: `${BASE}${SOURCES}.json?host=hv-7&program=nova-compute`,
        console_url: `${BASE}/console/sources?host=hv-7&program=nova-compute`,
        silence: { rule_id: 1, minutes: 1, last_seen_at: '2026-11-20T10:00:00+00:00' },
      }));
      // Still silent: nothing more, however often it is checked.
      t.time.advance(600);
      assert.deepEqual(await Promise.all(watches.map((w) => w.checkOnce())), [0, 0]);

      await sources.add([seen({ host: 'hv-7', program: 'nova-compute', component: 'nova', lastAt: at(665) })]);
      t.time.advance(10);
      const back = await Promise.all(watches.map((w) => w.checkOnce()));
      assert.equal(back[0]! + back[1]!, 1, `one back alert in all: ${back.join(', ')}`);
      const received = await eventually(() => {
        assert.equal(receiver.received.length, 2, 'the back alert delivered');
        return receiver.received[1]!;
      });
      assert.deepEqual([received.json.event, received.json.text, received.json.silence], ['back',
        `[cmi] Source hv-7 nova-compute is back: it sent again at 2026-11-20T10:11:05+00:00 (silent since 2026-11-20T10:00:00+00:00) ${BASE}${SOURCES}.json?host=hv-7&program=nova-compute`,
        { rule_id: 1, minutes: 1, last_seen_at: '2026-11-20T10:00:00+00:00', back_at: '2026-11-20T10:11:05+00:00' }]);
      assert.equal(await t.database.db.selectFrom('log_source_silences').select('rule_id').executeTakeFirst(), undefined, 'the silence released');
      // The deliveries list shows them, about no error.
      const deliveries = await get('/sysadmin_tools/infrastructure/deliveries.json');
      assert.deepEqual(deliveries.json<Array<{ delivery: { kind: string; error_id: number; state: string } }>>().map((d) => [d.delivery.kind, d.delivery.error_id, d.delivery.state]),
        [['silent', 0, 'delivered'], ['back', 0, 'delivered']]);
      // Silent again, then the rule changed: its silences are forgotten, and told again under its new settings.
      t.time.advance(60);
      assert.equal((await watches[0]!.checkOnce()) + (await watches[1]!.checkOnce()), 1);
      const changed = await t.app.inject({ method: 'PUT', url: '/sysadmin_tools/alert_rules/1.json', headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: JSON.stringify({ silent_minutes: 2 }) });
      assert.equal(changed.statusCode, 204, changed.body);
      assert.equal(await t.database.db.selectFrom('log_source_silences').select('rule_id').executeTakeFirst(), undefined, 'the rule\'s silences forgotten');
      assert.equal(await watches[1]!.checkOnce(), 0, 'silent 65 s of the 2 minutes it now waits');
      t.time.advance(60);
      assert.equal(await watches[1]!.checkOnce(), 1);
      await eventually(() => assert.deepEqual(receiver.received.map((r) => r.json.event), ['silent', 'back', 'silent', 'silent'], 'told again'));
    } finally {
      await Promise.all(watches.map((w) => w.stop()));
      await other.close();
    }
  });

  it('a silent alert to Slack is chat-safe text and blocks; to mail a subject and two parts', () => {
    const source = { host: 'hv-<7>', program: '@channel', rendered: {} };
    const detail = { rule_id: 2, minutes: 5, last_seen_at: '2026-11-20T10:00:00+00:00' };
    const query = 'host=hv-%3C7%3E&program=%40channel';
    assert.equal(sourceAlertBody('slack', 'silent', source, BASE, detail), JSON.stringify({
      text: `[cmi] Source hv-&lt;7&gt; @\u200bchannel is silent: nothing for 5 minutes (last at 2026-11-20T10:00:00+00:00) ${BASE}/console/sources?${query}`,
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: `[cmi] Source hv-&lt;7&gt; @\u200bchannel is silent: nothing for 5 minutes (last at 2026-11-20T10:00:00+00:00)\n<${BASE}/console/sources?${query}|Open the source in the console>` } },
        { type: 'context', elements: [{ type: 'mrkdwn', text: `API: <${BASE}${SOURCES}.json?${query}|${BASE}${SOURCES}.json?${query}>` }] },
      ],
    }));
    const mail = JSON.parse(sourceAlertBody('email', 'back', source, BASE, { ...detail, back_at: '2026-11-20T10:20:00+00:00' })) as { subject: string; text: string; html: string };
    assert.equal(mail.subject, '[cmi] Source hv-<7> @channel is back: it sent again at 2026-11-20T10:20:00+00:00 (silent since 2026-11-20T10:00:00+00:00)');
    assert.equal(mail.text, `${mail.subject}\n\nConsole: ${BASE}/console/sources?${query}\nAPI: ${BASE}${SOURCES}.json?${query}\n`);
    assert.ok(mail.html.startsWith('<p>[cmi] Source hv-&lt;7&gt; @channel is back:'), 'the HTML part escaped');
  });
});
