import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from './support/app.js';
import { webhookReceiver } from './support/webhook-receiver.js';
import { smtpReceiver } from './support/smtp-receiver.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { alertRoutingRepository } from '../src/alerts/alert-routing.store.js';
import type { DestinationFields } from '../src/alerts/alert-routing.js';

// docs/alert-routing.md#internal-addresses: a destination that is, or resolves to, a loopback,
// private, link-local, unique-local or unspecified address is refused where it is given (422) and
// again at each try, against the address connected to, unless CMI_ALERT_ALLOWED_HOSTS allows it; a
// test send shows the status and fixed words, never the receiver's answer. Real receivers on
// 127.0.0.1 stand for the internal services.

const DESTINATIONS = '/sysadmin_tools/alert_destinations';
const SECRET = 'internal-hook-secret-01';
// A try's timeout with room: a test send waits for one try at most (a loaded machine loads nodemailer slowly).
const ENV = { CMI_WEBHOOK_POLL_INTERVAL: '20', CMI_WEBHOOK_TIMEOUT: '5000', CMI_WEBHOOK_RETRY_BASE: '60000' };
const REFUSED = 'is or resolves to an internal address (loopback, private, link-local, unique-local or unspecified), which alerts are not sent to unless CMI_ALERT_ALLOWED_HOSTS allows it';
const NOT_SENT = 'not sent: the destination is an internal address (loopback, private or link-local); CMI_ALERT_ALLOWED_HOSTS allows such hosts';

type Json = Record<string, unknown>;

function api(t: TestApp) {
  return async (method: 'POST' | 'PUT', url: string, body?: unknown) => {
    const res = await t.app.inject({
      method, url, headers: { authorization: t.adminAuth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: res.body, json: () => JSON.parse(res.body) as Json };
  };
}

describe('alert destinations at internal addresses', { timeout: 120_000 }, () => {
  let refusing: TestApp;
  let receiver: Awaited<ReturnType<typeof webhookReceiver>>;
  let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
  before(async () => {
    // An internal service that answers what it should not: its status and body must not come back.
    receiver = await webhookReceiver(SECRET, () => ({ status: 500, body: 'internal error: db_password=hunter2-db' }));
    smtp = await smtpReceiver();
    refusing = await createTestApp({ ...ENV, CMI_ALERT_ALLOWED_HOSTS: '' });
  });
  after(async () => {
    await refusing?.close();
    await receiver?.stop();
    await smtp?.stop();
  });

  it('a URL or SMTP host that is or resolves to an internal address, in any spelling, is refused with a 422 naming the field; nothing is stored', async () => {
    const call = api(refusing);
    const port = receiver.port;
    const hosts = [
      `127.0.0.1:${port}`, `127.1:${port}`, '2130706433', '0x7f.0.0.1', '017700000001', `localhost:${port}`, 'LOCALHOST.',
      '[::1]', '[::]', '0.0.0.0', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[0:0:0:0:0:ffff:a00:1]',
      '10.1.2.3', '172.16.0.1', '172.31.255.254', '192.168.1.1', '169.254.169.254', '100.64.0.1', '[fd00::1]', '[fe80::1]', '[64:ff9b::a9fe:a9fe]',
    ];
    for (const host of hosts) {
      for (const fields of [{ kind: 'webhook', secret: SECRET }, { kind: 'slack' }]) {
        const res = await call('POST', `${DESTINATIONS}.json`, { alert_destination: { label: 'Internal', url: `http://${host}/hook`, ...fields } });
        assert.deepEqual([res.status, res.body], [422, JSON.stringify({ errors: { url: [REFUSED] } })], `${fields.kind} ${host}`);
      }
    }
    for (const host of ['127.0.0.1', '127.1', '2130706433', 'localhost', '10.0.0.25', '192.168.0.1', '[::1]', '[::ffff:127.0.0.1]']) {
      const res = await call('POST', `${DESTINATIONS}.json`, { alert_destination: { label: 'Mail', kind: 'email', smtp_host: host, smtp_port: smtp.port, smtp_security: 'none', from: 'cmi@example.com', to: ['ops@example.com'] } });
      assert.deepEqual([res.status, res.body], [422, JSON.stringify({ errors: { smtp_host: [REFUSED] } })], `email ${host}`);
    }
    // A public address is taken, and an edit pointing it inward refused like a new one.
    const made = await call('POST', `${DESTINATIONS}.json`, { alert_destination: { label: 'Public', kind: 'webhook', url: 'https://203.0.113.10/hook', secret: SECRET } });
    assert.equal(made.status, 201, made.body);
    const id = (made.json().alert_destination as { id: number }).id;
    const edited = await call('PUT', `${DESTINATIONS}/${id}.json`, { alert_destination: { url: `http://127.0.0.1:${port}/hook` } });
    assert.deepEqual([edited.status, edited.body], [422, JSON.stringify({ errors: { url: [REFUSED] } })]);
    const rows = await refusing.database.db.selectFrom('alert_destinations').select(['id', 'url']).execute();
    assert.deepEqual(rows.map((row) => [Number(row.id), row.url]), [[id, 'https://203.0.113.10/hook']]);
    assert.equal(receiver.received.length, 0);
  });

  it('a destination stored at an internal address is refused at each try, by the address it is or the one its name resolves to: nothing reaches it, and the reason is fixed words', async () => {
    // Stored as a version without the check stored it (or while CMI_ALERT_ALLOWED_HOSTS allowed it).
    const store = alertRoutingRepository(refusing.database);
    const blank: DestinationFields = {
      label: '', kind: 'webhook', url: null, secret: null, smtp_host: null, smtp_port: null, smtp_security: null,
      smtp_user: null, smtp_password: null, from: null, to: [], enabled: true,
    };
    const now = refusing.time.clock();
    const stored = [
      await store.createDestination({ ...blank, label: 'Literal', url: `http://127.0.0.1:${receiver.port}/hook`, secret: SECRET }, now),
      await store.createDestination({ ...blank, label: 'Odd spelling', kind: 'slack', url: `http://2130706433:${receiver.port}/hook` }, now),
      // A name: checked against what it resolves to when connecting (what a rebinding DNS answers then).
      await store.createDestination({ ...blank, label: 'Named', kind: 'slack', url: `http://localhost:${receiver.port}/hook` }, now),
      await store.createDestination({ ...blank, label: 'Mail', kind: 'email', smtp_host: 'localhost', smtp_port: smtp.port, smtp_security: 'none', from: 'cmi@example.com', to: ['ops@example.com'] }, now),
    ];
    const call = api(refusing);
    for (const destination of stored) {
      const tested = await call('POST', `${DESTINATIONS}/${destination.id}/test.json`);
      assert.equal(tested.status, 200, tested.body);
      const delivery = tested.json().delivery as Json;
      assert.deepEqual([delivery.state, delivery.attempts, delivery.last_status, delivery.last_error], ['pending', 1, null, NOT_SENT], destination.label);
    }
    assert.deepEqual([receiver.received.length, smtp.received.length], [0, 0]);
  });

  it('CMI_ALERT_ALLOWED_HOSTS lets named hosts and ranges through; a test send then shows the status and fixed words, never the answer', async () => {
    const named = await createTestApp({ ...ENV, CMI_ALERT_ALLOWED_HOSTS: 'localhost' });
    const ranged = await createTestApp({ ...ENV, CMI_ALERT_ALLOWED_HOSTS: '10.0.0.0/8, 127.0.0.0/8' });
    const [hooksBefore, mailsBefore] = [receiver.received.length, smtp.received.length];
    try {
      const byName = api(named);
      // The name is allowed, not the address it resolves to.
      const literal = await byName('POST', `${DESTINATIONS}.json`, { alert_destination: { label: 'Literal', kind: 'webhook', url: `http://127.0.0.1:${receiver.port}/hook`, secret: SECRET } });
      assert.deepEqual([literal.status, literal.body], [422, JSON.stringify({ errors: { url: [REFUSED] } })]);
      const made = await byName('POST', `${DESTINATIONS}.json`, { alert_destination: { label: 'Named', kind: 'webhook', url: `http://localhost:${receiver.port}/hook`, secret: SECRET } });
      assert.equal(made.status, 201, made.body);
      const tested = await byName('POST', `${DESTINATIONS}/${(made.json().alert_destination as { id: number }).id}/test.json`);
      const delivery = tested.json().delivery as Json;
      assert.deepEqual([delivery.state, delivery.attempts, delivery.last_status, delivery.last_error], ['pending', 1, 500, 'HTTP 500 Internal Server Error']);
      assert.ok(!tested.body.includes('db_password'), tested.body);

      const byRange = api(ranged);
      const inRange = await byRange('POST', `${DESTINATIONS}.json`, { alert_destination: { label: 'Ranged', kind: 'slack', url: `http://127.1:${receiver.port}/hook` } });
      assert.equal(inRange.status, 201, inRange.body);
      const outside = await byRange('POST', `${DESTINATIONS}.json`, { alert_destination: { label: 'Outside', kind: 'slack', url: 'http://192.168.1.1/hook' } });
      assert.deepEqual([outside.status, outside.body], [422, JSON.stringify({ errors: { url: [REFUSED] } })]);
      const mail = await byRange('POST', `${DESTINATIONS}.json`, { alert_destination: { label: 'Mail', kind: 'email', smtp_host: 'localhost', smtp_port: smtp.port, smtp_security: 'none', from: 'cmi@example.com', to: ['ops@example.com'] } });
      assert.equal(mail.status, 201, mail.body);
      const mailed = await byRange('POST', `${DESTINATIONS}/${(mail.json().alert_destination as { id: number }).id}/test.json`);
      assert.deepEqual([(mailed.json().delivery as Json).state, (mailed.json().delivery as Json).last_error], ['delivered', null]);
      assert.equal(smtp.received.length, mailsBefore + 1);
      const rows = await ranged.database.db.selectFrom('webhook_deliveries').select('last_error').execute();
      assert.ok(rows.every((row) => !String(row.last_error).includes('db_password')));
      assert.equal(receiver.received.length, hooksBefore + 1);
    } finally {
      await named.close();
      await ranged.close();
    }
  });

  it('CMI_ALERT_ALLOWED_HOSTS takes host names, addresses and CIDR ranges; anything else stops the start with a line naming it', () => {
    assert.throws(() => loadConfig({ CMI_ALERT_ALLOWED_HOSTS: '10.0.0.0/8, 10.0.0.0/33' }), new ConfigError('CMI_ALERT_ALLOWED_HOSTS must list host names, IP addresses or CIDR ranges separated by commas (got "10.0.0.0/33")'));
    assert.throws(() => loadConfig({ CMI_ALERT_ALLOWED_HOSTS: 'mail.internal/8' }), new ConfigError('CMI_ALERT_ALLOWED_HOSTS must list host names, IP addresses or CIDR ranges separated by commas (got "mail.internal/8")'));
    const allowed = loadConfig({ CMI_ALERT_ALLOWED_HOSTS: 'Mail.Internal 127.1 fd00::/8' }).webhooks.allowedHosts;
    assert.deepEqual([[...allowed.names], allowed.ranges.check('127.0.0.1'), allowed.ranges.check('fd12::1', 'ipv6'), allowed.ranges.check('127.0.0.2')], [['mail.internal'], true, true, false]);
  });
});
