import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer } from './support/cli.js';
import { freshDatabase } from './support/database.js';
import { eventually } from './support/eventually.js';
import { smtpReceiver } from './support/smtp-receiver.js';

// docs/alert-routing.md#email: `tls` and `starttls` encrypt and check the server's certificate; a
// private CA is trusted through NODE_EXTRA_CA_CERTS. Real TLS: certificates made by openssl, a real
// SMTP server, a real `cmi serve`.
const DESTINATIONS = '/sysadmin_tools/alert_destinations';
const AUTH = `Basic ${Buffer.from('admin:admin-password').toString('base64')}`;

/** A self-signed certificate for 127.0.0.1 and localhost (or the names `san` gives), made by openssl in `dir`. */
function certificate(dir: string, name: string, san = 'IP:127.0.0.1,DNS:localhost'): { key: string; cert: string; certFile: string } {
  const keyFile = join(dir, `${name}.key`);
  const certFile = join(dir, `${name}.pem`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2',
    '-subj', `/CN=${name}`, '-addext', `subjectAltName=${san}`], { stdio: 'ignore' });
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

interface Delivery { state: string; attempts: number; last_error: string | null }

describe('mail alerts over TLS and STARTTLS', { timeout: 600_000 }, () => {
  let dir: string;
  let trusted: ReturnType<typeof certificate>;
  let stranger: ReturnType<typeof certificate>;
  let namedOnly: ReturnType<typeof certificate>;
  let server: Awaited<ReturnType<typeof startServer>>;
  const receivers: Array<Awaited<ReturnType<typeof smtpReceiver>>> = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cmi-smtp-tls-'));
    trusted = certificate(dir, 'trusted');
    stranger = certificate(dir, 'stranger');
    // Valid for the name only: a mail server reached by its address must still be checked by its name.
    namedOnly = certificate(dir, 'named-only', 'DNS:localhost');
    const bundle = join(dir, 'ca-bundle.pem');
    writeFileSync(bundle, `${readFileSync(trusted.certFile, 'utf8')}${readFileSync(namedOnly.certFile, 'utf8')}`);
    const fresh = await freshDatabase();
    server = await startServer({
      DATABASE_URL: fresh.url, CMI_ADMIN_PASSWORD: 'admin-password', CMI_WEBHOOK_POLL_INTERVAL: '20', CMI_WEBHOOK_TIMEOUT: '3000',
      NODE_EXTRA_CA_CERTS: bundle, CMI_ALERT_ALLOWED_HOSTS: '127.0.0.1',
    });
  });
  after(async () => {
    await server?.stop();
    for (const receiver of receivers) await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Sends the destination's test mail and answers its delivery as `POST .../test` does. */
  async function testMail(port: number, security: 'tls' | 'starttls', host = '127.0.0.1'): Promise<Delivery> {
    const call = async (path: string, body?: unknown) => {
      const res = await fetch(`${server.baseUrl}${path}`, { method: 'POST', headers: { authorization: AUTH, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await res.text();
      assert.ok(res.status === 200 || res.status === 201, `${path}: ${res.status} ${text}`);
      return JSON.parse(text) as Record<string, Record<string, unknown>>;
    };
    const created = await call(`${DESTINATIONS}.json`, {
      alert_destination: { label: `Mail ${security} ${port}`, kind: 'email', smtp_host: host, smtp_port: port, smtp_security: security, from: 'cmi@example.com', to: ['ops@example.com'] },
    });
    return (await call(`${DESTINATIONS}/${String(created.alert_destination!.id)}/test.json`)).delivery as unknown as Delivery;
  }

  it('tls: a server whose certificate the CA list holds takes the mail, encrypted from the first byte', async () => {
    const receiver = await smtpReceiver({ tls: { key: trusted.key, cert: trusted.cert, implicit: true } });
    receivers.push(receiver);
    const delivery = await testMail(receiver.port, 'tls');
    assert.equal(delivery.state, 'delivered', JSON.stringify(delivery));
    await eventually(() => assert.equal(receiver.received.length, 1));
    assert.deepEqual([receiver.received[0]!.to, receiver.received[0]!.secure], [['ops@example.com'], true]);
  });

  it('starttls: the connection is upgraded before the mail is sent', async () => {
    const receiver = await smtpReceiver({ tls: { key: trusted.key, cert: trusted.cert, implicit: false } });
    receivers.push(receiver);
    const delivery = await testMail(receiver.port, 'starttls');
    assert.equal(delivery.state, 'delivered', JSON.stringify(delivery));
    await eventually(() => assert.equal(receiver.received.length, 1));
    assert.equal(receiver.received[0]!.secure, true);
  });

  it('a server given by name is connected to at the address its name resolved to (and was checked), its certificate checked against the name', async () => {
    const receiver = await smtpReceiver({ tls: { key: namedOnly.key, cert: namedOnly.cert, implicit: true } });
    receivers.push(receiver);
    const delivery = await testMail(receiver.port, 'tls', 'localhost');
    assert.equal(delivery.state, 'delivered', JSON.stringify(delivery));
    await eventually(() => assert.equal(receiver.received.length, 1));
    // The same certificate, the server given by its address: no name it is valid for.
    const byAddress = await testMail(receiver.port, 'tls');
    assert.equal(byAddress.state, 'pending');
    assert.match(byAddress.last_error ?? '', /IP: 127\.0\.0\.1 is not in the cert's list/);
    assert.equal(receiver.received.length, 1);
  });

  it('a certificate no CA vouches for is refused: the delivery fails with the reason, no mail is sent', async () => {
    const receiver = await smtpReceiver({ tls: { key: stranger.key, cert: stranger.cert, implicit: true } });
    receivers.push(receiver);
    const delivery = await testMail(receiver.port, 'tls');
    assert.equal(delivery.state, 'pending');
    assert.equal(delivery.attempts, 1);
    assert.match(delivery.last_error ?? '', /self[- ]signed certificate/);
    assert.equal(receiver.received.length, 0);
  });

  it('starttls against a server that offers no STARTTLS sends nothing in the clear', async () => {
    const receiver = await smtpReceiver();
    receivers.push(receiver);
    const delivery = await testMail(receiver.port, 'starttls');
    assert.equal(delivery.state, 'pending');
    assert.equal(delivery.attempts, 1);
    assert.match(delivery.last_error ?? '', /STARTTLS/);
    assert.equal(receiver.received.length, 0);
  });
});
