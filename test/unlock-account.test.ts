import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CmiApiError, CmiClient } from '../src/client/index.js';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';
import { runCmi } from './support/cli.js';
import { eventually } from './support/eventually.js';
import { smtpReceiver } from './support/smtp-receiver.js';

// Unlocking by mail (docs/security.md#unlocking-by-mail): when a known account's name locks, cmi mails
// an unlock link (through CMI_SMTP_URL, from CMI_MAIL_FROM) once per lock window; POST
// /users/:id/unlock_account with the PHP wrapper's {"tmp_holder": {"unlock_token": "..."}} ends the
// lock, once. A real SMTP server on a socket.

/** The body of a one-part mail as sent, its quoted-printable decoded. */
function bodyOf(raw: string): string {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const body = rest.join('\r\n\r\n');
  const decoded = /content-transfer-encoding: quoted-printable/i.test(head)
    ? body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : body;
  return decoded.replace(/\r\n/g, '\n');
}

const LOCKED = (name: string, until: string, byMail: boolean) =>
  `{"errors":{"base":["Too many failed logins for \\"${name}\\": it is locked until ${until}${byMail ? ', or until the unlock link mailed to the account\'s address is followed (POST /users/:id/unlock_account with its unlock_token)' : ''}, or until an administrator runs: cmi local users unlock ${name}"]}}`;

describe('unlocking an account by the mailed token', () => {
  let t: TestApp;
  let base: string;
  let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
  before(async () => {
    smtp = await smtpReceiver();
    t = await createTestApp({ CMI_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, CMI_MAIL_FROM: 'cmi@example.com', CMI_LOCKOUT_MAX_FAILURES: '2', CMI_PUBLIC_URL: 'https://cmi.example.com' });
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
  });
  after(async () => {
    await t?.close();
    await smtp?.stop();
  });

  const version = async (authorization: string) => {
    const res = await fetch(`${base}/version.json`, { headers: { authorization } });
    return { status: res.status, body: await res.text() };
  };
  const unlock = async (userId: number, body: string, contentType = 'application/json') => {
    const res = await fetch(`${base}/users/${userId}/unlock_account.json`, { method: 'POST', headers: { accept: 'application/json', 'content-type': contentType }, body });
    return { status: res.status, body: await res.text() };
  };
  const until = '2026-11-20T10:15:00Z';

  it('mails the link once when the name locks, and the 429 says so; the token unlocks once', async () => {
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await version(t.basic('alice', `wrong-password-${i}`)));
    assert.deepEqual(answers.map((a) => a.status), [401, 401, 429, 429, 429]);
    assert.equal(answers[2]?.body, LOCKED('alice', until, true));
    // The right password is refused while the name is locked.
    assert.equal((await version(t.aliceAuth)).status, 429);

    const mail = await eventually(() => {
      assert.equal(smtp.received.length, 1, 'the unlock mail arrived');
      return smtp.received[0]!;
    });
    assert.equal(mail.from, 'cmi@example.com');
    assert.deepEqual(mail.to, ['alice@example.com']);
    const text = bodyOf(mail.raw);
    const token = new RegExp(`https://cmi\\.example\\.com/console/unlock\\?user=${t.alice.id}&token=([A-Za-z0-9_-]{43})\\n`).exec(text)?.[1];
    assert.ok(token, text);
    assert.ok(!mail.raw.includes('alice-password'));
    assert.match(mail.raw, /Subject: Your cmi account is locked/);

    // Stored hashed, never as sent.
    const rows = await t.database.db.selectFrom('account_unlock_tokens').select(['user_id', 'token_hash']).execute();
    assert.deepEqual(rows.map((row) => [Number(row.user_id), row.token_hash]), [[t.alice.id, createHash('sha256').update(token).digest('hex')]]);

    const refused = '{"errors":{"unlock_token":["is invalid or has expired"]}}';
    assert.deepEqual(await unlock(t.alice.id, '{"tmp_holder":{"unlock_token":"not-the-token"}}'), { status: 422, body: refused });
    assert.deepEqual(await unlock(t.admin.id, JSON.stringify({ tmp_holder: { unlock_token: token } })), { status: 422, body: refused });
    assert.deepEqual(await unlock(t.alice.id, '{"tmp_holder":{}}'), { status: 422, body: '{"errors":{"unlock_token":["can\'t be blank"]}}' });
    assert.equal((await version(t.aliceAuth)).status, 429);

    // As the PHP wrapper's unlock_account sends it.
    assert.deepEqual(await unlock(t.alice.id, JSON.stringify({ tmp_holder: { unlock_token: token } })), { status: 204, body: '' });
    assert.equal((await version(t.aliceAuth)).status, 200);
    assert.deepEqual(await unlock(t.alice.id, JSON.stringify({ tmp_holder: { unlock_token: token } })), { status: 422, body: refused });
    assert.equal(smtp.received.length, 1);

    const audit = await t.database.db.selectFrom('audit_events').select(['actor_id', 'actor_login', 'action', 'target_id', 'changes']).where('action', '=', 'user.unlock').execute();
    assert.deepEqual(audit, [{ actor_id: t.alice.id, actor_login: 'alice', action: 'user.unlock', target_id: t.alice.id, changes: '{"by":"unlock_token"}' }]);
    assert.ok(!JSON.stringify(await t.database.db.selectFrom('audit_events').selectAll().execute()).includes(token));
  });

  it('an unknown name locks alike and mails nothing; the 429 reads the same', async () => {
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await version(t.basic('nobody', `wrong-password-${i}`)));
    assert.deepEqual(answers.map((a) => a.status), [401, 401, 429]);
    assert.equal(answers[2]?.body, LOCKED('nobody', until, true));
    assert.equal(smtp.received.length, 1);
  });

  it('client.users.unlockAccount and cmi users unlock-account unlock with the token alone, no credentials', async () => {
    const lockAlice = async () => {
      t.time.advance(20 * 60); // past the last lock's window: the name locks anew and a new mail goes out
      const sent = smtp.received.length;
      for (let i = 0; i < 3; i++) await version(t.basic('alice', `wrong-password-${i}`));
      assert.equal((await version(t.aliceAuth)).status, 429);
      const mail = await eventually(() => {
        assert.equal(smtp.received.length, sent + 1, 'the unlock mail arrived');
        return smtp.received[sent]!;
      });
      return /[?&]token=([A-Za-z0-9_-]{43})\n/.exec(bodyOf(mail.raw))?.[1] as string;
    };
    const refused = { unlock_token: ['is invalid or has expired'] };

    const client = new CmiClient({ baseUrl: base });
    const first = await lockAlice();
    assert.equal(await client.users.unlockAccount(t.alice.id, first), undefined);
    assert.equal((await version(t.aliceAuth)).status, 200);
    await assert.rejects(client.users.unlockAccount(t.alice.id, first), (error) => error instanceof CmiApiError && error.status === 422 && assert.deepEqual(error.errors, refused) === undefined);

    const home = mkdtempSync(join(tmpdir(), 'cmi-unlock-cli-'));
    try {
      const env = { XDG_CONFIG_HOME: home, CMI_URL: base, CMI_USER: '', CMI_PASSWORD: '', CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '' };
      const second = await lockAlice();
      assert.deepEqual(await runCmi(['users', 'unlock-account', String(t.alice.id), second], env), { code: 0, stdout: `Unlocked user ${t.alice.id}: its password works again\n`, stderr: '' });
      assert.equal((await version(t.aliceAuth)).status, 200);
      assert.deepEqual(await runCmi(['users', 'unlock-account', String(t.alice.id), second], env), { code: 1, stdout: '', stderr: 'cmi: unlock_token is invalid or has expired\n' });
      assert.deepEqual(await runCmi(['users', 'unlock-account', 'alice', second], env), { code: 2, stdout: '', stderr: 'cmi: the user is named by its id, a positive integer (got "alice")\n' });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('the console\'s unlock page', () => {
  let t: TestApp;
  let base: string;
  let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
  before(async () => {
    smtp = await smtpReceiver();
    t = await createTestApp({ CMI_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, CMI_MAIL_FROM: 'cmi@example.com', CMI_LOCKOUT_MAX_FAILURES: '2' });
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
  });
  after(async () => {
    await t?.close();
    await smtp?.stop();
  });

  it('the mailed link shows a button that unlocks once; the GET alone unlocks nothing', async () => {
    for (let i = 0; i < 3; i++) await fetch(`${base}/version.json`, { headers: { authorization: t.basic('alice', `wrong-password-${i}`) } });
    const mail = await eventually(() => {
      assert.equal(smtp.received.length, 1, 'the unlock mail arrived');
      return smtp.received[0]!;
    });
    const link = /(http:\/\/\S+\/console\/unlock\?user=\d+&token=[A-Za-z0-9_-]{43})\n/.exec(bodyOf(mail.raw))?.[1];
    assert.ok(link, bodyOf(mail.raw));
    const path = link.slice(link.indexOf('/console/'));
    const token = new URL(link).searchParams.get('token') as string;
    const shown = await fetch(`${base}${path}`);
    assert.equal(shown.status, 200);
    const page = await shown.text();
    assert.ok(page.includes(`<input type="hidden" name="token" value="${token}">`), page);
    assert.equal((await fetch(`${base}/version.json`, { headers: { authorization: t.aliceAuth } })).status, 429);

    const post = () => fetch(`${base}/console/unlock`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ user: String(t.alice.id), token }).toString() });
    const unlocked = await post();
    assert.equal(unlocked.status, 200);
    assert.match(await unlocked.text(), /The account is unlocked/);
    assert.equal((await fetch(`${base}/version.json`, { headers: { authorization: t.aliceAuth } })).status, 200);
    const again = await post();
    assert.equal(again.status, 422);
    assert.match(await again.text(), /This unlock link is invalid, used or expired/);
  });
});

describe('without account mail', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '2' });
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
  });
  after(() => t.close());

  it('no token is made, the 429 names only the administrator\'s command, and any token is refused', async () => {
    const statuses = [];
    let body = '';
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${base}/version.json`, { headers: { authorization: t.basic('alice', `wrong-password-${i}`) } });
      statuses.push(res.status);
      body = await res.text();
    }
    assert.deepEqual(statuses, [401, 401, 429]);
    assert.equal(body, LOCKED('alice', '2026-11-20T10:15:00Z', false));
    assert.deepEqual(await t.database.db.selectFrom('account_unlock_tokens').selectAll().execute(), []);
    const res = await fetch(`${base}/users/${t.alice.id}/unlock_account.xml`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<tmp_holder><unlock_token>anything</unlock_token></tmp_holder>' });
    assert.equal(res.status, 422);
    assert.equal(await res.text(), '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Unlock token is invalid or has expired</error>\n</errors>\n');
  });
});
