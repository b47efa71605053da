import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { runCmi, startServer } from './support/cli.js';
import { CmiClient } from '../src/client/index.js';
import { freshDatabase } from './support/database.js';
import { ERRORS, forbiddenJson, JSON_TYPE, XML_DECLARATION, XML_TYPE } from './support/error-reports.js';
import { eventually } from './support/eventually.js';
import { webhookReceiver } from './support/webhook-receiver.js';
import { decodeMail, silentServer, smtpReceiver } from './support/smtp-receiver.js';

// Alert routing (docs/alert-routing.md): destinations and rules over the API, and alerts routed by
// them through the outbox to real receivers started here: an HTTP receiver (webhook, Slack) and an
// SMTP server the test reads each mail from.

const DESTINATIONS = '/sysadmin_tools/alert_destinations';
const RULES = '/sysadmin_tools/alert_rules';
const SECRET = 'storage-team-secret-0123';
const AT = '2026-11-20T10:00:00+00:00';
const BASE = 'http://127.0.0.1:3000';
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const ENV = { CMI_WEBHOOK_POLL_INTERVAL: '20', CMI_WEBHOOK_TIMEOUT: '1000' };

type Json = Record<string, unknown>;

function api(t: TestApp, app: FastifyInstance = t.app) {
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, authorization = t.adminAuth) => {
    const res = await app.inject({
      method, url, headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: res.body, headers: res.headers, json: () => JSON.parse(res.body) as Json };
  };
  return {
    call,
    destination: async (fields: Json): Promise<number> => {
      const res = await call('POST', `${DESTINATIONS}.json`, { alert_destination: fields });
      assert.equal(res.status, 201, res.body);
      return (res.json().alert_destination as { id: number }).id;
    },
    rule: async (fields: Json): Promise<number> => {
      const res = await call('POST', `${RULES}.json`, { alert_rule: fields });
      assert.equal(res.status, 201, res.body);
      return (res.json().alert_rule as { id: number }).id;
    },
    report: async (fields: Json): Promise<number> => {
      const res = await call('POST', `${ERRORS}.json`, { backtrace: `src/x.ts:1:in '${String(fields.message)}'`, ...fields });
      assert.ok(res.status === 201 || res.status === 200, res.body);
      return (res.json().infrastructure_error as { id: number }).id;
    },
  };
}

const deliveryRows = (t: TestApp) => t.database.db.selectFrom('webhook_deliveries')
  .select(['id', 'kind', 'error_id', 'destination_id', 'state', 'attempts', 'last_status', 'last_error', 'delivery_id', 'sent_as'])
  .orderBy('id').execute();

describe('alert routing', { timeout: 600_000 }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  const setUp = async (env: Record<string, string> = {}) => {
    const t = await createTestApp({ ...ENV, ...env });
    cleanups.push(() => t.close());
    return t;
  };

  it('destinations: created, read in JSON and XML with no secret, edited, refused with 422s naming the field, for administrators only', async () => {
    const t = await setUp();
    const { call } = api(t);
    const created = await call('POST', `${DESTINATIONS}.json`, { alert_destination: { label: 'Storage team', kind: 'webhook', url: 'https://hooks.example.com/storage/T0123?token=abc', secret: SECRET } });
    assert.equal(created.status, 201);
    assert.equal(created.headers.location, `${DESTINATIONS}/1.json`);
    assert.equal(created.body, JSON.stringify({ alert_destination: {
      id: 1, label: 'Storage team', kind: 'webhook', url: 'https://hooks.example.com/…', secret: null, smtp_host: null, smtp_port: null, smtp_security: null,
      smtp_user: null, smtp_password: null, from: null, to: [], enabled: true, created_at: AT, updated_at: AT,
    } }));
    const mail = await call('POST', `${DESTINATIONS}.json`, { label: 'Billing mail', kind: 'email', smtp_host: 'mail.example.com', smtp_user: 'cmi', smtp_password: 'hunter2-password', from: 'cmi@example.com', to: 'billing@example.com, oncall@example.com' });
    assert.equal(mail.status, 201, mail.body);
    const xml = await call('GET', `${DESTINATIONS}/2.xml`);
    assert.equal(xml.status, 200);
    assert.equal(xml.headers['content-type'], XML_TYPE);
    assert.equal(xml.body, `${XML_DECLARATION}<alert_destination>
  <id type="integer">2</id>
  <label>Billing mail</label>
  <kind>email</kind>
  <url nil="true"/>
  <secret nil="true"/>
  <smtp_host>mail.example.com</smtp_host>
  <smtp_port type="integer">587</smtp_port>
  <smtp_security>starttls</smtp_security>
  <smtp_user>cmi</smtp_user>
  <smtp_password nil="true"/>
  <from>cmi@example.com</from>
  <to>["billing@example.com","oncall@example.com"]</to>
  <enabled type="boolean">true</enabled>
  <created_at type="datetime">${AT}</created_at>
  <updated_at type="datetime">${AT}</updated_at>
</alert_destination>
`);
    // No secret in any answer, nor in the list.
    const list = await call('GET', `${DESTINATIONS}.json`);
    assert.equal(list.headers['x-total'], '2');
    assert.ok(!list.body.includes(SECRET) && !list.body.includes('hunter2') && !list.body.includes('token=abc'), list.body);
    const stored = await t.database.db.selectFrom('alert_destinations').select(['secret', 'smtp_password', 'to_addresses']).orderBy('id').execute();
    assert.deepEqual(stored, [{ secret: SECRET, smtp_password: null, to_addresses: null }, { secret: null, smtp_password: 'hunter2-password', to_addresses: 'billing@example.com,oncall@example.com' }]);

    // An edit keeps what it leaves out; the URL as served, sent back, keeps the one stored.
    t.time.advance(60);
    const edited = await call('PUT', `${DESTINATIONS}/1.json`, { alert_destination: { label: 'Storage', url: 'https://hooks.example.com/…', enabled: false } });
    assert.equal(edited.status, 204, edited.body);
    const row = await t.database.db.selectFrom('alert_destinations').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    assert.deepEqual([row.label, row.url, row.secret, row.enabled, row.updated_at], ['Storage', 'https://hooks.example.com/storage/T0123?token=abc', SECRET, 0, '2026-11-20T10:01:00.000Z']);

    const refused = async (body: Json, expected: Json, url = `${DESTINATIONS}.json`, method: 'POST' | 'PUT' = 'POST') => {
      const res = await call(method, url, body);
      assert.equal(res.status, 422, res.body);
      assert.equal(res.body, JSON.stringify({ errors: expected }));
    };
    await refused({ label: 'x', kind: 'webhook', url: 'not a url', secret: SECRET }, { url: ['must be an http or https URL'] });
    await refused({ label: 'x', kind: 'webhook', url: 'ftp://files.example.com/x', secret: SECRET }, { url: ['must be an http or https URL'] });
    // A port fetch never sends to (the Fetch standard's bad ports): the destination could never be delivered to.
    await refused({ label: 'x', kind: 'webhook', url: 'http://irc.example.com:6667/hook', secret: SECRET }, { url: ['names port 6667, which webhooks are never sent to (a port fetch refuses)'] });
    await refused({ label: 'x', kind: 'slack', url: 'https://hooks.example.com:10080/services/x' }, { url: ['names port 10080, which webhooks are never sent to (a port fetch refuses)'] });
    await refused({ label: 'x', kind: 'pager' }, { kind: ['must be one of webhook, slack, email'] });
    await refused({ label: 'x', kind: 'webhook', url: 'https://a.example.com/' }, { secret: ["can't be blank for a webhook destination: its signing key, at least 16 characters (cmi alerts destinations add and edit read it from CMI_DESTINATION_SECRET)"] });
    await refused({ label: 'x', kind: 'slack' }, { url: ["can't be blank for a slack destination"] });
    await refused({ label: 'x', kind: 'email', smtp_host: 'bad host', smtp_port: 70000, smtp_security: 'ssl', from: 'nobody', to: ['ok@example.com', 'not-an-address'] }, {
      smtp_host: ['must be a host name or address'], smtp_port: ['must be an integer from 1 to 65535'], smtp_security: ['must be one of none, starttls, tls'],
      from: ['must be a mail address such as cmi@example.com'], to: ['must be a list of mail addresses such as storage@example.com'],
    });
    await refused({ label: 'x', kind: 'email' }, { smtp_host: ["can't be blank for an email destination"], from: ["can't be blank for an email destination"], to: ["can't be empty for an email destination"] });
    await refused({ url: 'mailto:x' }, { url: ['must be an http or https URL'] }, `${DESTINATIONS}/1.json`, 'PUT');
    // Fifty addresses, each valid, whose list is longer than its column holds: a 422 on both databases, never a 500.
    const long = Array.from({ length: 50 }, (_, i) => `${'a'.repeat(60)}${i}@${'b'.repeat(40)}.example.com`);
    await refused({ label: 'x', kind: 'email', smtp_host: 'mail.example.com', from: 'cmi@example.com', to: long }, { to: ['is too long (maximum is 4096 characters in all)'] });

    const forbidden = await call('GET', `${DESTINATIONS}.json`, undefined, t.aliceAuth);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body, forbiddenJson('alert_destinations.read'));
    assert.equal((await call('POST', `${DESTINATIONS}.json`, { label: 'x', kind: 'slack', url: 'https://a.example.com/' }, t.aliceAuth)).status, 403);
    assert.equal((await t.app.inject({ method: 'GET', url: `${DESTINATIONS}.json` })).statusCode, 401);
    assert.equal((await call('GET', `${DESTINATIONS}/99.json`)).status, 404);

    const removed = await call('DELETE', `${DESTINATIONS}/2.json`);
    assert.equal(removed.status, 204);
    assert.equal((await call('GET', `${DESTINATIONS}/2.json`)).status, 404);
  });

  it('an edit that points an email destination elsewhere, or sends it in the clear, must give its SMTP password again: a kept one is never sent to a new server', async () => {
    const t = await setUp();
    const { call, destination } = api(t);
    const id = await destination({
      label: 'Billing mail', kind: 'email', smtp_host: 'mail.example.com', smtp_security: 'starttls', smtp_user: 'cmi', smtp_password: 'hunter2-password', from: 'cmi@example.com', to: ['billing@example.com'],
    });
    const stored = () => t.database.db.selectFrom('alert_destinations').select(['smtp_host', 'smtp_port', 'smtp_security', 'smtp_password']).where('id', '=', id).executeTakeFirstOrThrow();
    const again = JSON.stringify({ errors: { smtp_password: ['must be given again when smtp_host, smtp_port or smtp_security changes'] } });
    // Nor by way of another kind: the server changed while a Slack destination, then made email again.
    for (const change of [{ smtp_host: 'attacker.example.net' }, { smtp_port: 2525 }, { smtp_security: 'none' }, { smtp_host: 'attacker.example.net', smtp_security: 'none', smtp_port: 25 }, { kind: 'slack', url: 'https://hooks.example.com/x', smtp_host: 'attacker.example.net' }]) {
      const res = await call('PUT', `${DESTINATIONS}/${id}.json`, { alert_destination: change });
      assert.equal(res.status, 422, JSON.stringify(change));
      assert.equal(res.body, again);
    }
    assert.deepEqual(await stored(), { smtp_host: 'mail.example.com', smtp_port: 587, smtp_security: 'starttls', smtp_password: 'hunter2-password' });
    // What leaves the server alone keeps the password; a new server with its password, or with none, is taken.
    assert.equal((await call('PUT', `${DESTINATIONS}/${id}.json`, { alert_destination: { label: 'Billing', smtp_host: 'mail.example.com', smtp_user: 'cmi2' } })).status, 204);
    assert.equal((await stored()).smtp_password, 'hunter2-password');
    assert.equal((await call('PUT', `${DESTINATIONS}/${id}.json`, { alert_destination: { smtp_host: 'mail2.example.com', smtp_password: 'other-password' } })).status, 204);
    assert.deepEqual(await stored(), { smtp_host: 'mail2.example.com', smtp_port: 587, smtp_security: 'starttls', smtp_password: 'other-password' });
    assert.equal((await call('PUT', `${DESTINATIONS}/${id}.json`, { alert_destination: { smtp_security: 'none', smtp_password: null } })).status, 204);
    assert.deepEqual(await stored(), { smtp_host: 'mail2.example.com', smtp_port: 587, smtp_security: 'none', smtp_password: null });
    // With no password kept, nothing is to be given again.
    assert.equal((await call('PUT', `${DESTINATIONS}/${id}.json`, { alert_destination: { smtp_host: 'mail3.example.com' } })).status, 204);
  });

  it('rules: created and read in JSON and XML; an unknown event, no destination or an unknown one is a 422 naming the field', async () => {
    const t = await setUp();
    const { call, destination } = api(t);
    const slack = await destination({ label: 'Storage Slack', kind: 'slack', url: 'https://hooks.slack.example/services/T/B/X' });
    const created = await call('POST', `${RULES}.json`, { alert_rule: { label: 'Storage', events: ['spike', 'new'], component: 'storage', destination_ids: [String(slack)] } });
    assert.equal(created.status, 201, created.body);
    assert.equal(created.headers.location, `${RULES}/1.json`);
    assert.equal(created.body, JSON.stringify({ alert_rule: {
      id: 1, label: 'Storage', events: ['new', 'spike'], component: 'storage', host: null, error_class: null, error_class_prefix: null,
      spike_threshold: null, spike_window: null, cooldown: null, silent_minutes: null, destination_ids: [slack], enabled: true, created_at: AT, updated_at: AT,
    } }));
    const xml = await call('GET', `${RULES}.xml`);
    assert.equal(xml.headers['content-type'], XML_TYPE);
    assert.equal(xml.body, `${XML_DECLARATION}<alert_rules type="array">
  <alert_rule>
    <id type="integer">1</id>
    <label>Storage</label>
    <events>["new","spike"]</events>
    <component>storage</component>
    <host nil="true"/>
    <error_class nil="true"/>
    <error_class_prefix nil="true"/>
    <spike_threshold nil="true"/>
    <spike_window nil="true"/>
    <cooldown nil="true"/>
    <silent_minutes nil="true"/>
    <destination_ids>[${slack}]</destination_ids>
    <enabled type="boolean">true</enabled>
    <created_at type="datetime">${AT}</created_at>
    <updated_at type="datetime">${AT}</updated_at>
  </alert_rule>
</alert_rules>
`);
    const refused = async (body: Json, expected: Json) => {
      const res = await call('POST', `${RULES}.json`, body);
      assert.equal(res.status, 422, res.body);
      assert.equal(res.body, JSON.stringify({ errors: expected }));
    };
    await refused({ label: 'x', events: ['new', 'deploy'], destination_ids: [slack] }, { events: ['must be a list of events: new, regression, spike, report, silent, back'] });
    await refused({ label: 'x', events: ['new'], destination_ids: [slack, 2147483648] }, { destination_ids: ['must be a list of ids'] });
    await refused({ label: 'x', events: ['new'] }, { destination_ids: ["can't be empty: a rule sends to at least one destination"] });
    await refused({ label: 'x', events: ['new'], destination_ids: [] }, { destination_ids: ["can't be empty: a rule sends to at least one destination"] });
    await refused({ label: 'x', events: ['new'], destination_ids: [slack, 77] }, { destination_ids: ['names no destination: 77'] });
    await refused({ label: 'x', events: ['spike'], spike_threshold: 0, destination_ids: [slack] }, { spike_threshold: ['must be an integer from 1 to 1000000000'] });
    const put = await call('PUT', `${RULES}/1.json`, { events: 'regression report', spike_threshold: 10 });
    assert.equal(put.status, 204, put.body);
    const got = await call('GET', `${RULES}/1.json`);
    assert.deepEqual([(got.json().alert_rule as Json).events, (got.json().alert_rule as Json).spike_threshold], [['regression', 'report'], 10]);
    assert.equal((await call('GET', `${RULES}.json`, undefined, t.aliceAuth)).status, 403);
    // A destination deleted leaves its rules; a rule left with none is disabled.
    assert.equal((await call('DELETE', `${DESTINATIONS}/${slack}.json`)).status, 204);
    const orphan = (await call('GET', `${RULES}/1.json`)).json().alert_rule as Json;
    assert.deepEqual([orphan.destination_ids, orphan.enabled], [[], false]);
    assert.equal((await call('DELETE', `${RULES}/1.json`)).status, 204);
    assert.equal((await call('GET', `${RULES}/1.json`)).status, 404);
  });

  it('routes one team\'s errors to its Slack and another\'s to its mail; an event several rules match reaches a destination once; each carries the console page', async () => {
    const t = await setUp();
    const receiver = await webhookReceiver(SECRET);
    const smtp = await smtpReceiver({ user: 'cmi', password: 'mail-password-1' });
    cleanups.push(async () => {
      await receiver.stop();
      await smtp.stop();
    });
    const { destination, rule, report } = api(t);
    const slack = await destination({ label: 'Storage Slack', kind: 'slack', url: `${receiver.url}/services/T/B/storage` });
    const hook = await destination({ label: 'Ops webhook', kind: 'webhook', url: `${receiver.url}/ops`, secret: SECRET });
    const mail = await destination({
      label: 'Billing mail', kind: 'email', smtp_host: '127.0.0.1', smtp_port: smtp.port, smtp_security: 'none',
      smtp_user: 'cmi', smtp_password: 'mail-password-1', from: 'cmi@example.com', to: ['billing@example.com'],
    });
    await rule({ label: 'Storage', events: ['new'], component: 'storage', destination_ids: [slack, hook] });
    await rule({ label: 'Billing', events: ['new'], error_class_prefix: 'Billing', destination_ids: [mail, hook] });
    await rule({ label: 'Nothing', events: ['new'], host: 'elsewhere', destination_ids: [slack] });

    const storage = await report({ error_class: 'IOError', message: 'disk <full> @channel', component: 'storage', host: 'hv-1' });
    const billing = await report({ error_class: 'BillingError', message: 'invoice failed', component: 'billing', host: 'hv-2' });
    const both = await report({ error_class: 'BillingStorageError', message: 'both', component: 'storage', host: 'hv-3' });
    await report({ error_class: 'Unrouted', message: 'no rule', component: 'network' });

    await eventually(() => assert.equal(receiver.received.length, 5));
    await eventually(() => assert.equal(smtp.received.length, 2));
    await settle(200);
    assert.equal(receiver.received.length, 5);
    const page = (id: number) => `${BASE}/console/errors/${id}`;
    const apiUrl = (id: number) => `${BASE}${ERRORS}/${id}.json`;
    const slackBodies = receiver.received.filter((r) => r.path === '/hooks/services/T/B/storage').map((r) => r.body);
    assert.deepEqual(slackBodies, [storage, both].map((id) => {
      const headline = id === storage ? `[cmi] New error #${id}: IOError: disk &lt;full&gt; @\u200bchannel` : `[cmi] New error #${id}: BillingStorageError: both`;
      return JSON.stringify({
        text: `${headline} ${page(id)}`,
        blocks: [
          { type: 'section', text: { type: 'mrkdwn', text: `${headline}\n<${page(id)}|Open error #${id} in the console>` } },
          { type: 'context', elements: [{ type: 'mrkdwn', text: `API: <${apiUrl(id)}|${apiUrl(id)}>` }] },
        ],
      });
    }));
    // The webhook destination: each error once (the third matched both rules), signed with its own secret.
    const hooks = receiver.received.filter((r) => r.path === '/hooks/ops');
    assert.deepEqual(hooks.map((r) => [r.json.event, (r.json.infrastructure_error as { id: number }).id, r.json.console_url, r.json.url, r.signatureValid]).sort((a, b) => Number(a[1]) - Number(b[1])),
      [storage, billing, both].map((id) => ['new', id, page(id), apiUrl(id), true]));

    const mails = smtp.received.map((m) => ({ ...m, decoded: decodeMail(m.raw) })).sort((a, b) => a.decoded.headers.subject!.localeCompare(b.decoded.headers.subject!));
    assert.deepEqual(mails.map((m) => [m.from, m.to, m.user, m.decoded.headers.subject, m.decoded.headers.from, m.decoded.headers.to]), [
      ['cmi@example.com', ['billing@example.com'], 'cmi', `[cmi] New error #${billing}: BillingError: invoice failed`, 'cmi@example.com', 'billing@example.com'],
      ['cmi@example.com', ['billing@example.com'], 'cmi', `[cmi] New error #${both}: BillingStorageError: both`, 'cmi@example.com', 'billing@example.com'],
    ]);
    assert.equal(mails[0]!.decoded.text, `[cmi] New error #${billing}: BillingError: invoice failed\n\nConsole: ${page(billing)}\nAPI: ${apiUrl(billing)}\n`);
    assert.equal(mails[0]!.decoded.html, `<p>[cmi] New error #${billing}: BillingError: invoice failed</p>\n<p><a href="${page(billing)}">Open error #${billing} in the console</a></p>\n<p>API: <a href="${apiUrl(billing)}">${apiUrl(billing)}</a></p>\n`);

    const rows = await deliveryRows(t);
    assert.deepEqual(rows.map((r) => [r.kind, Number(r.error_id), Number(r.destination_id), r.state, Number(r.attempts)]), [
      ['new', storage, slack, 'delivered', 1], ['new', storage, hook, 'delivered', 1],
      ['new', billing, hook, 'delivered', 1], ['new', billing, mail, 'delivered', 1],
      ['new', both, slack, 'delivered', 1], ['new', both, hook, 'delivered', 1], ['new', both, mail, 'delivered', 1],
    ]);
    assert.ok(rows.every((r) => r.sent_as === r.delivery_id), 'each was sent as itself');
    assert.deepEqual(rows.filter((r) => Number(r.destination_id) === mail).map((r) => Number(r.last_status)), [250, 250]);

    // Each destination lists its own deliveries, newest first.
    const listed = await api(t).call('GET', `${DESTINATIONS}/${mail}/deliveries.json`);
    assert.equal(listed.status, 200);
    assert.equal(listed.headers['content-type'], JSON_TYPE);
    assert.deepEqual((JSON.parse(listed.body) as Array<{ delivery: Json }>).map((d) => [d.delivery.error_id, d.delivery.url, d.delivery.state, d.delivery.destination_id, d.delivery.last_error]),
      [[both, 'smtp://127.0.0.1:' + String(smtp.port) + '/…', 'delivered', mail, null], [billing, `smtp://127.0.0.1:${smtp.port}/…`, 'delivered', mail, null]]);
  });

  it('a test sends a sample through the outbox and answers its delivery; an unreachable host or a hanging SMTP server is a failed try with its reason, retried, and blocks nothing', async () => {
    const t = await setUp({ CMI_WEBHOOK_RETRY_BASE: '60000' });
    const receiver = await webhookReceiver(SECRET);
    const closed = await webhookReceiver(SECRET);
    await closed.stop();
    const hanging = await silentServer();
    cleanups.push(async () => {
      await receiver.stop();
      await hanging.stop();
    });
    const { call, destination, rule, report } = api(t);
    const hook = await destination({ label: 'Ops', kind: 'webhook', url: `${receiver.url}/ops`, secret: SECRET });
    const tested = await call('POST', `${DESTINATIONS}/${hook}/test.json`);
    assert.equal(tested.status, 200, tested.body);
    const delivery = tested.json().delivery as Json;
    assert.deepEqual([delivery.kind, delivery.error_id, delivery.state, delivery.attempts, delivery.last_status, delivery.destination_id, delivery.last_error], ['test', 0, 'delivered', 1, 200, hook, null]);
    assert.equal(receiver.received.length, 1);
    assert.equal(receiver.received[0]!.signatureValid, true);
    assert.equal(receiver.received[0]!.json.event, 'test');
    assert.equal(receiver.received[0]!.json.text, `[cmi] Test alert: CmiTestAlert: This is a test alert from cmi: this destination works. http://localhost:80${ERRORS}/0.json`);

    const down = await destination({ label: 'Down', kind: 'slack', url: `${closed.url}/services/x` });
    const failed = await call('POST', `${DESTINATIONS}/${down}/test.json`);
    const failedDelivery = failed.json().delivery as Json;
    assert.deepEqual([failedDelivery.state, failedDelivery.attempts, failedDelivery.last_status, failedDelivery.last_error], ['pending', 1, null, 'ECONNREFUSED']);

    const stuck = await destination({ label: 'Hangs', kind: 'email', smtp_host: '127.0.0.1', smtp_port: hanging.port, smtp_security: 'none', from: 'cmi@example.com', to: ['x@example.com'] });
    await rule({ label: 'All', events: ['new'], destination_ids: [stuck, hook] });
    const id = await report({ error_class: 'E', message: 'm' });
    // The webhook's alert arrives while the mail server hangs.
    await eventually(() => assert.equal(receiver.received.length, 2));
    assert.equal((receiver.received[1]!.json.infrastructure_error as { id: number }).id, id);
    await eventually(async () => {
      const row = (await deliveryRows(t)).find((r) => Number(r.destination_id) === stuck);
      assert.deepEqual([row?.state, Number(row?.attempts), row?.last_error], ['pending', 1, 'no answer within 1000 ms']);
    }, 5000);
  });

  it('a receiver\'s answer is never kept, answered or shown, only its status and fixed words: one that echoes the URL it was sent to (Express: "Cannot POST /path") gives away none of it', async () => {
    const t = await setUp({ CMI_WEBHOOK_RETRY_BASE: '60000' });
    const path = '/services/T0123/B0456/XyZsecretPath789';
    const receiver = await webhookReceiver(SECRET, (received, index) => ({
      status: 404,
      // Whole, then cut by the 200 characters kept in the middle of the secret segment.
      body: index === 0 ? `Cannot POST ${received.path}` : `${'x'.repeat(160)}${received.path}`,
    }));
    cleanups.push(() => receiver.stop());
    const { call, destination } = api(t);
    const slack = await destination({ label: 'Storage Slack', kind: 'slack', url: `${receiver.url}${path}?token=querysecret42` });
    const first = await call('POST', `${DESTINATIONS}/${slack}/test.json`);
    assert.equal((first.json().delivery as Json).last_error, 'HTTP 404 Not Found');
    // A second destination (a failed test waits for its retry before the next test of its destination).
    const again = await destination({ label: 'Storage Slack again', kind: 'slack', url: `${receiver.url}${path}?token=querysecret42` });
    const second = await call('POST', `${DESTINATIONS}/${again}/test.json`);
    assert.equal((second.json().delivery as Json).last_error, 'HTTP 404 Not Found');
    assert.equal(receiver.received.length, 2);
    const shown = [first.body, second.body, (await call('GET', `${DESTINATIONS}/${slack}/deliveries.json`)).body, JSON.stringify(await deliveryRows(t))].join('\n');
    for (const secret of ['XyZsecret', 'querysecret42', 'B0456']) assert.ok(!shown.includes(secret), secret);
    // Nor does the outbox keep it beside each delivery (it sends to the destination's URL): deleting
    // the destination leaves no copy of its secret in the deliveries or their backups.
    const urls = await t.database.db.selectFrom('webhook_deliveries').select('url').orderBy('id').execute();
    assert.deepEqual(urls.map((row) => row.url), [`${new URL(receiver.url).origin}/…`, `${new URL(receiver.url).origin}/…`]);
  });

  it('a storm past the rate limit becomes one digest naming how many and the first ones; every alert in it is delivered once', async () => {
    const t = await setUp({ CMI_ALERT_RATE_LIMIT: '2' });
    const receiver = await webhookReceiver(SECRET);
    cleanups.push(() => receiver.stop());
    const { call, destination, rule, report } = api(t);
    const hook = await destination({ label: 'Ops', kind: 'webhook', url: `${receiver.url}/ops`, secret: SECRET });
    await rule({ label: 'All', events: ['new'], destination_ids: [hook] });
    // Two messages this minute (the limit): what comes next waits for the minute's end.
    for (let i = 0; i < 2; i++) assert.equal((await call('POST', `${DESTINATIONS}/${hook}/test.json`)).status, 200);
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push(await report({ error_class: 'StormError', message: `storm ${i}` }));
    await settle(300);
    assert.equal(receiver.received.length, 2);
    t.time.advance(61);
    await eventually(() => assert.equal(receiver.received.length, 3));
    await settle(300);
    assert.equal(receiver.received.length, 3);
    const digest = receiver.received[2]!;
    assert.equal(digest.signatureValid, true);
    assert.deepEqual(digest.json, {
      event: 'digest',
      text: `[cmi] 12 alerts in the last minute ${BASE}/console/errors`,
      count: 12,
      alerts: ids.slice(0, 10).map((id, i) => `[cmi] New error #${id}: StormError: storm ${i} ${BASE}${ERRORS}/${id}.json`),
      console_url: `${BASE}/console/errors`,
    });
    const rows = (await deliveryRows(t)).filter((r) => r.kind === 'new');
    assert.equal(rows.length, 12);
    assert.ok(rows.every((r) => r.state === 'delivered' && r.sent_as === digest.headers['x-cmi-delivery']), 'all delivered by the digest');
  });

  it('a rule\'s own spike threshold, window and cooldown; regressions; an error reported; a disabled destination or rule sends nothing', async () => {
    const t = await setUp();
    const receiver = await webhookReceiver(SECRET);
    cleanups.push(() => receiver.stop());
    const { call, destination, rule, report } = api(t);
    const hook = await destination({ label: 'Ops', kind: 'webhook', url: `${receiver.url}/ops`, secret: SECRET });
    const quiet = await destination({ label: 'Quiet', kind: 'webhook', url: `${receiver.url}/quiet`, secret: SECRET, enabled: false });
    await rule({ label: 'Spikes', events: ['spike', 'regression', 'report'], host: 'hv-9', spike_threshold: 3, spike_window: 30, cooldown: 600, destination_ids: [hook, quiet] });
    await rule({ label: 'Off', events: ['new', 'spike'], enabled: false, destination_ids: [hook] });
    const events = () => receiver.received.map((r) => `${r.path}:${String(r.json.event)}:${(r.json.infrastructure_error as { id: number }).id}`);
    let id = 0;
    for (let i = 0; i < 4; i++) id = await report({ error_class: 'Hot', message: 'hot', host: 'hv-9' });
    await eventually(() => assert.deepEqual(events(), [`/hooks/ops:spike:${id}`]));
    assert.deepEqual(receiver.received[0]!.json.spike, { occurrences: 4, window_seconds: 30, threshold: 3 });
    // Another host: not this rule's; a new window within the cooldown: nothing.
    for (let i = 0; i < 5; i++) await report({ error_class: 'Hot', message: 'hot', host: 'hv-1' });
    t.time.advance(31);
    for (let i = 0; i < 4; i++) await report({ error_class: 'Hot', message: 'hot', host: 'hv-9' });
    await settle(200);
    assert.equal(receiver.received.length, 1);
    t.time.advance(600);
    for (let i = 0; i < 4; i++) await report({ error_class: 'Hot', message: 'hot', host: 'hv-9' });
    await eventually(() => assert.equal(receiver.received.length, 2));

    const resolved = await call('PUT', `${ERRORS}/${id}/triage.json`, { triage: { status: 'resolved' } });
    assert.equal(resolved.status, 200, resolved.body);
    await report({ error_class: 'Hot', message: 'hot', host: 'hv-9' });
    await eventually(() => assert.deepEqual(events().slice(2), [`/hooks/ops:regression:${id}`]));
    const reported = await call('POST', `${ERRORS}/${id}/report.json`);
    assert.equal(reported.status, 200, reported.body);
    await eventually(() => assert.deepEqual(events().slice(3), [`/hooks/ops:report:${id}`]));
    assert.equal(receiver.received[3]!.json.console_url, `${BASE}/console/errors/${id}`);
    await settle(200);
    assert.equal(receiver.received.length, 4);
    assert.deepEqual((await deliveryRows(t)).map((r) => [r.kind, Number(r.destination_id)]), [['spike', hook], ['spike', hook], ['regression', hook], ['report', hook]]);
  });

  it('a rule added, disabled or enabled again, or its destination disabled, routes the next batch of this process at once and of another once it has seen the change (migration 029)', async () => {
    const t = await setUp();
    const receiver = await webhookReceiver(SECRET);
    const second = await t.secondProcess();
    cleanups.push(async () => {
      await second.close();
      await receiver.stop();
    });
    const here = api(t);
    const there = api(t, second.app);
    // The other process's alerts version (its rules are kept in memory while it holds): defined once it listens.
    const version = () => second.database.dataVersions.alerts();
    await eventually(() => assert.notEqual(version(), undefined, 'the other process has an alerts version'));
    /** A change made here, and the other process having seen it (its version moved). */
    const changed = async (change: () => Promise<unknown>) => {
      const before = version();
      await change();
      await eventually(() => assert.notEqual(version(), before, 'the other process saw the change'));
    };
    // A batch routed with no rule: the other process keeps none.
    await there.report({ error_class: 'Before', message: 'before' });
    let hook = 0;
    let rule = 0;
    const ruleFields = () => ({ label: 'New ones', events: ['new'], destination_ids: [hook] });
    await changed(async () => {
      hook = await here.destination({ label: 'Ops', kind: 'webhook', url: `${receiver.url}/ops`, secret: SECRET });
      rule = await here.rule(ruleFields());
    });
    const added = await there.report({ error_class: 'Added', message: 'added' });
    const addedHere = await here.report({ error_class: 'AddedHere', message: 'added here' });
    await changed(async () => assert.equal((await here.call('PUT', `${RULES}/${rule}.json`, { alert_rule: { ...ruleFields(), enabled: false } })).status, 204));
    await there.report({ error_class: 'RuleOff', message: 'rule off' });
    await here.report({ error_class: 'RuleOffHere', message: 'rule off here' });
    await changed(async () => assert.equal((await here.call('PUT', `${RULES}/${rule}.json`, { alert_rule: { ...ruleFields(), enabled: true } })).status, 204));
    const again = await there.report({ error_class: 'Again', message: 'again' });
    await changed(async () => assert.equal((await here.call('PUT', `${DESTINATIONS}/${hook}.json`, { alert_destination: { enabled: false } })).status, 204));
    await there.report({ error_class: 'DestinationOff', message: 'destination off' });
    assert.deepEqual((await deliveryRows(t)).map((r) => [r.kind, Number(r.error_id), Number(r.destination_id)]), [['new', added, hook], ['new', addedHere, hook], ['new', again, hook]]);
  });

  it('two processes deliver each routed alert exactly once', async () => {
    const t = await setUp();
    const receiver = await webhookReceiver(SECRET);
    const second = await t.secondProcess();
    cleanups.push(async () => {
      await second.close();
      await receiver.stop();
    });
    const { destination, rule } = api(t);
    const hook = await destination({ label: 'Ops', kind: 'webhook', url: `${receiver.url}/ops`, secret: SECRET });
    const slack = await destination({ label: 'Chat', kind: 'slack', url: `${receiver.url}/chat` });
    await rule({ label: 'All', events: ['new'], destination_ids: [hook, slack] });
    await rule({ label: 'All again', events: ['new'], destination_ids: [slack] });
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await api(t, i % 2 === 0 ? t.app : second.app).report({ error_class: 'Twice', message: `twice ${i}` }));
    }
    await eventually(() => assert.equal(receiver.received.length, 8));
    await settle(300);
    assert.equal(receiver.received.length, 8);
    const seen = receiver.received.map((r) => `${r.path}:${r.path === '/hooks/ops' ? (r.json.infrastructure_error as { id: number }).id : String(r.json.text).split('#')[1]!.split(':')[0]!}`).sort();
    assert.deepEqual(seen, [...ids.map((id) => `/hooks/chat:${id}`), ...ids.map((id) => `/hooks/ops:${id}`)].sort());
  });
});

describe('alert routing across a kill -9', { timeout: 600_000 }, () => {
  it('routed alerts pending when a process is killed arrive once each from the next process', async () => {
    const receiver = await webhookReceiver(SECRET);
    await receiver.stop();
    const fresh = await freshDatabase();
    const env = { DATABASE_URL: fresh.url, CMI_ADMIN_PASSWORD: 'admin-password', ...ENV, CMI_WEBHOOK_RETRY_BASE: '200', CMI_WEBHOOK_LEASE_MARGIN: '1000', CMI_ALERT_ALLOWED_HOSTS: '127.0.0.1' };
    const auth = `Basic ${Buffer.from('admin:admin-password').toString('base64')}`;
    const servers: Array<Awaited<ReturnType<typeof startServer>>> = [];
    try {
      const first = await startServer(env);
      servers.push(first);
      const post = async (path: string, body: unknown) => {
        const res = await fetch(`${first.baseUrl}${path}`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        const text = await res.text();
        assert.equal(res.status, 201, text);
        return JSON.parse(text) as Record<string, { id: number }>;
      };
      const hook = (await post(`${DESTINATIONS}.json`, { label: 'Ops', kind: 'webhook', url: `${receiver.url}/ops`, secret: SECRET })).alert_destination!.id;
      const chat = (await post(`${DESTINATIONS}.json`, { label: 'Chat', kind: 'slack', url: `${receiver.url}/chat` })).alert_destination!.id;
      await post(`${RULES}.json`, { label: 'All', events: ['new'], destination_ids: [hook, chat] });
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push((await post(`${ERRORS}.json`, { error_class: `Killed${'x'.repeat(i)}`, message: `killed ${i}`, backtrace: `k.ts:in 'killed${i}'` })).infrastructure_error!.id);
      first.child.kill('SIGKILL');
      await new Promise((resolve) => first.child.once('exit', resolve));
      await receiver.start();
      servers.push(await startServer(env));
      // A try in flight at the kill holds its lease until it expires (CMI_WEBHOOK_TIMEOUT + CMI_WEBHOOK_LEASE_MARGIN).
      await eventually(() => assert.equal(receiver.received.length, 6), 60_000, 100);
      await settle(500);
      assert.equal(receiver.received.length, 6);
      const seen = receiver.received.map((r) => (r.path === '/hooks/ops' ? `ops:${(r.json.infrastructure_error as { id: number }).id}` : `chat:${String(r.json.text).split('#')[1]!.split(':')[0]!}`)).sort();
      assert.deepEqual(seen, [...ids.map((id) => `chat:${id}`), ...ids.map((id) => `ops:${id}`)].sort());
    } finally {
      for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
      await receiver.stop();
      await fresh.drop();
    }
  });
});

describe('alert routing from the client, cmi alerts and the console', { timeout: 600_000 }, () => {
  it('the client and cmi alerts manage destinations and rules and send a test; secrets never printed', async () => {
    const t = await createTestApp(ENV);
    const receiver = await webhookReceiver(SECRET);
    const home = mkdtempSync(join(tmpdir(), 'cmi-cli-alerts-'));
    try {
      const url = `http://127.0.0.1:${await listenLocally(t.app)}`;
      const client = new CmiClient({ baseUrl: url, login: ADMIN.login, password: ADMIN.password });
      const made = await client.alertDestinations.create({ label: 'Ops', kind: 'webhook', url: `${receiver.url}/ops`, secret: SECRET });
      assert.deepEqual([made.id, made.kind, made.url, made.secret, made.to], [1, 'webhook', `${receiver.url.split('/hooks')[0]!}/…`, null, []]);
      const rule = await client.alertRules.create({ label: 'All', events: ['new', 'spike'], destination_ids: [made.id] });
      assert.deepEqual([rule.events, rule.destination_ids], [['new', 'spike'], [1]]);
      const tested = await client.alertDestinations.test(made.id);
      assert.deepEqual([tested.kind, tested.state, tested.last_status], ['test', 'delivered', 200]);
      assert.deepEqual((await client.alertDestinations.deliveries(made.id)).map((d) => d.id), [tested.id]);

      const env = { XDG_CONFIG_HOME: join(home, 'config'), CMI_URL: url, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password, CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '' };
      const cmi = (args: string[]) => runCmi(args, env);
      // Secrets come from the environment, never from options (the process list shows those).
      const refused = await cmi(['alerts', 'destinations', 'add', 'Billing mail', 'email', '--smtp-password', 'mail-password-9']);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /^error: unknown option '--smtp-password'\n/);
      // A webhook without its signing key: the answer names where the command reads it from.
      const keyless = await cmi(['alerts', 'destinations', 'add', 'Keyless', 'webhook', '--hook-url', `${receiver.url}/keyless`]);
      assert.deepEqual([keyless.code, keyless.stdout, keyless.stderr], [1, '', "cmi: secret can't be blank for a webhook destination: its signing key, at least 16 characters (cmi alerts destinations add and edit read it from CMI_DESTINATION_SECRET)\n"]);
      const added = await runCmi(['alerts', 'destinations', 'add', 'Billing mail', 'email', '--smtp-host', 'smtp.example.com', '--from', 'cmi@example.com', '--to', 'billing@example.com,oncall@example.com'], { ...env, CMI_DESTINATION_SMTP_PASSWORD: 'mail-password-9' });
      assert.deepEqual([added.stderr, added.code, added.stdout], ['', 0, 'Created alert destination 2 "Billing mail" (email); try it: cmi alerts test 2\n']);
      const stored = await t.database.db.selectFrom('alert_destinations').select(['smtp_password']).where('id', '=', 2).executeTakeFirstOrThrow();
      assert.equal(stored.smtp_password, 'mail-password-9');
      const both = await runCmi(['alerts', 'destinations', 'edit', '1', '--hook-url', `${receiver.url}/ops`], { ...env, CMI_DESTINATION_URL: `${receiver.url}/ops` });
      assert.deepEqual([both.code, both.stderr], [2, 'cmi: give the URL as --hook-url or in CMI_DESTINATION_URL, not both\n']);
      const ruleAdded = await cmi(['alerts', 'rules', 'add', 'Billing', '--events', 'new,report', '--error-class-prefix', 'Billing', '--destinations', '2']);
      assert.deepEqual([ruleAdded.stderr, ruleAdded.code, ruleAdded.stdout], ['', 0, 'Created alert rule 2 "Billing"\n']);
      const listed = await cmi(['alerts', 'destinations', 'ls']);
      assert.equal(listed.code, 0, listed.stderr);
      assert.ok(!listed.stdout.includes('mail-password-9') && !listed.stdout.includes(SECRET), listed.stdout);
      assert.match(listed.stdout, /^ID\s+LABEL\s+KIND\s+ENABLED\s+WHERE\n1\s+Ops\s+webhook\s+yes\s+http:\/\/127\.0\.0\.1:\d+\/…\n2\s+Billing mail\s+email\s+yes\s+billing@example\.com, oncall@example\.com via smtp\.example\.com:587\n2 alert destinations\n$/);
      const json = await cmi(['alerts', 'rules', 'ls', '--json']);
      const api = await t.app.inject({ method: 'GET', url: `${RULES}.json`, headers: { authorization: t.adminAuth } });
      assert.equal(json.stdout, `${api.body}\n`);
      const bad = await cmi(['alerts', 'rules', 'add', 'x', '--events', 'deploy', '--destinations', '1']);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /events must be a list of events: new, regression, spike, report/);
      const test = await cmi(['alerts', 'test', '1']);
      assert.deepEqual([test.stderr, test.code], ['', 0]);
      assert.match(test.stdout, /^Test alert delivered to destination 1 \(status 200, delivery \d+\)\n$/);
      assert.equal(receiver.received.length, 2);
      assert.equal((await cmi(['alerts', 'rules', 'rm', '2'])).stdout, 'Deleted alert rule 2\n');
    } finally {
      await t.close();
      await receiver.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('the console lists destinations and rules, adds them with CSRF, sends a test, never shows a secret; a user without the permissions gets neither link nor page', async () => {
    const t = await createTestApp(ENV);
    const receiver = await webhookReceiver(SECRET);
    try {
      const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
      const signIn = async (login: string, password: string) => {
        const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: new URLSearchParams({ login, password }).toString() });
        assert.equal(res.statusCode, 303, res.body);
        return `_cmi_console=${/^_cmi_console=([^;\s]+);/.exec(String(res.headers['set-cookie']))![1]!}`;
      };
      const cookie = await signIn(ADMIN.login, ADMIN.password);
      const page = await t.app.inject({ method: 'GET', url: '/console/alerts', headers: { cookie } });
      assert.equal(page.statusCode, 200);
      assert.ok(page.body.includes('<a href="/console/alerts">Alerts</a>'), 'the nav link');
      assert.ok(page.body.includes('<p class="empty">No destinations yet.</p>'), 'no destinations');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
      const post = (url: string, fields: Record<string, string>, extra: Array<[string, string]> = []) => t.app.inject({
        method: 'POST', url, headers: { ...FORM, cookie }, payload: new URLSearchParams([...Object.entries(fields), ...extra]).toString(),
      });
      const refused = await post('/console/alerts/destinations', { _csrf: csrf, label: 'Ops', kind: 'webhook', url: 'not a url', secret: SECRET, smtp_security: 'starttls' });
      assert.equal(refused.statusCode, 422);
      assert.ok(refused.body.includes('<span class="field-error" id="destination-url-error">url must be an http or https URL</span>'), 'the field named');
      assert.ok(!refused.body.includes(SECRET), 'the secret not written back');
      // Nor a chat's URL, whose path is its secret, when another field is refused.
      const slackUrl = 'https://hooks.slack.com/services/T0123/B0456/XyZsecretPath789';
      const blank = await post('/console/alerts/destinations', { _csrf: csrf, label: ' ', kind: 'slack', url: slackUrl, smtp_security: 'starttls' });
      assert.equal(blank.statusCode, 422);
      assert.ok(blank.body.includes('<span class="field-error" id="destination-label-error">label can&#39;t be blank</span>'), 'the field named');
      assert.ok(!blank.body.includes('XyZsecretPath789'), 'the URL\'s path not written back');
      assert.ok(blank.body.includes('<input id="destination-url" name="url" maxlength="2048" value="">'), 'the URL field empty');
      const added = await post('/console/alerts/destinations', { _csrf: csrf, label: 'Ops <hook>', kind: 'webhook', url: `${receiver.url}/ops`, secret: SECRET, smtp_security: 'starttls' });
      assert.deepEqual([added.statusCode, added.headers.location], [303, '/console/alerts/destinations/1?notice=destination-added']);
      const tested = await post('/console/alerts/destinations/1/test', { _csrf: csrf });
      assert.equal(tested.statusCode, 200);
      assert.ok(tested.body.includes('<p class="notice" role="status">Test alert delivered.</p>'), 'the notice');
      assert.ok(tested.body.includes('<h1>Ops &lt;hook&gt;</h1>'), 'the label escaped');
      assert.ok(tested.body.includes('<tr><td>test</td><td>-</td><td>delivered</td><td>1</td>'), 'the delivery listed');
      assert.equal(receiver.received.length, 1);
      const rule = await post('/console/alerts/rules', { _csrf: csrf, label: 'Storage', component: 'storage' }, [['events', 'new'], ['events', 'spike'], ['destination_ids', '1']]);
      assert.deepEqual([rule.statusCode, rule.headers.location], [303, '/console/alerts?notice=rule-added']);
      const noDestination = await post('/console/alerts/rules', { _csrf: csrf, label: 'None' }, [['events', 'new']]);
      assert.equal(noDestination.statusCode, 422);
      assert.ok(noDestination.body.includes('destination_ids can&#39;t be empty: a rule sends to at least one destination'), 'the field named');
      const listed = await t.app.inject({ method: 'GET', url: '/console/alerts', headers: { cookie } });
      assert.ok(listed.body.includes('<tr><td>Storage</td><td>new, spike</td><td>component storage</td>\n<td>Ops &lt;hook&gt;</td><td>yes</td>'), 'the rule listed');
      assert.ok(!listed.body.includes(SECRET), 'no secret');
      const forged = await post('/console/alerts/rules', { label: 'x' }, [['events', 'new'], ['destination_ids', '1']]);
      assert.equal(forged.statusCode, 403);
      assert.equal((await t.database.db.selectFrom('alert_rules').select('id').execute()).length, 1);

      const alice = await signIn(ALICE.login, ALICE.password);
      const users = await t.app.inject({ method: 'GET', url: '/console/users', headers: { cookie: alice } });
      assert.ok(!users.body.includes('/console/alerts'), 'no link');
      assert.equal((await t.app.inject({ method: 'GET', url: '/console/alerts', headers: { cookie: alice } })).statusCode, 403);
    } finally {
      await t.close();
      await receiver.stop();
    }
  });
});
