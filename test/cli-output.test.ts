import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { human, render, table, visible } from '../src/cli/common/output.js';
import { ADMIN, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { type Finished, runCmi } from './support/cli.js';

/**
 * What `cmi` prints for people goes through one writer (src/cli/common/output.ts, docs/cli.md#output): a
 * control character a user or reporter chose is shown escaped, never written raw; `--json` stays the API's
 * exact bytes. The escaping is fuzzed; each command family then prints hostile values from a real server
 * and from the database.
 */

/** Every character the writer must never write raw (besides the newline ending each line). */
const RAW_UNSAFE = /[\p{Cc}\p{Cs}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

/** Reads escaped text back, independently of the writer: `\\`, `\xHH`, `\uHHHH`. */
const readBack = (text: string) =>
  text.replace(/\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4})/g, (_, escape: string) => (escape === '\\' ? '\\' : String.fromCharCode(parseInt(escape.slice(1), 16))));

/** Text rich in what a terminal obeys: escape sequences, C1 controls, bidi controls, backslashes and lone surrogates. */
const hostileText = fc
  .array(
    fc.oneof(
      fc.constantFrom('\x1b', '\x07', '\x00', '\r', '\n', '\t', '\x7f', '\x80', '\x85', '\x9b', '\x9f', '\u202a', '\u202e', '\u2066', '\u2069', '\u200f', '\u2028',
        '\\', 'x1b', '\\x1b', 'u202e', '\ud800', '\udfff', '[31m', ']52;c;', 'é', '漢', '😀'),
      fc.string({ unit: 'binary', maxLength: 8 }),
    ),
    { maxLength: 24 },
  )
  .map((parts) => parts.join(''));

const ESC = '\u001b';
const FUZZ = { seed: 0x25, numRuns: 3000 };

describe('the escaping of what cmi prints for people (fuzzed)', () => {
  it('visible(): no unsafe character raw, and the text reads back exactly, so distinct texts print distinctly', () => {
    fc.assert(fc.property(hostileText, (text) => {
      const shown = visible(text);
      assert.doesNotMatch(shown, RAW_UNSAFE);
      assert.equal(readBack(shown), text);
    }), FUZZ);
    fc.assert(fc.property(hostileText, hostileText, (a, b) => {
      if (a !== b) assert.notEqual(visible(a), visible(b));
    }), FUZZ);
  });

  it('visible(text, "\\n") keeps only the newlines raw, and reads back exactly', () => {
    fc.assert(fc.property(hostileText, (text) => {
      const shown = visible(text, '\n');
      assert.doesNotMatch(shown.replace(/\n/g, ''), RAW_UNSAFE);
      assert.equal(shown.split('\n').length, text.split('\n').length);
      assert.equal(readBack(shown), text);
    }), FUZZ);
  });

  it('the writer: one raw newline a line, nothing else raw; coloured, only its own SGR codes besides', () => {
    fc.assert(fc.property(fc.array(fc.array(hostileText, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }), (rows) => {
      const lines = [...table(rows.map((row) => [...row, ...Array<string>(4 - row.length).fill('-')])), ...rows.flat()];
      for (const colour of [false, true]) {
        const bytes = render(human(...lines), colour);
        assert.equal(bytes.split('\n').length - 1, lines.length);
        assert.doesNotMatch(['1', '2', '31', '32', '33', '0'].reduce((rest, code) => rest.replaceAll(`${ESC}[${code}m`, ''), bytes.replace(/\n/g, '')), RAW_UNSAFE);
      }
    }), { ...FUZZ, numRuns: 500 });
  });

  it('pins the forms: ESC, BEL, DEL, C1, bidi, a backslash, a lone surrogate', () => {
    assert.equal(visible('a\x1b]0;t\x07b\x7f\x9b\u202e\\\ud800z'), 'a\\x1b]0;t\\x07b\\x7f\\x9b\\u202e\\\\\\ud800z');
    assert.equal(visible('l1\nl2\tx', '\n'), 'l1\nl2\\x09x');
    assert.equal(render(human('a\nb', ['x', { text: '\x1b', style: 'bold' }])), 'a\\x0ab\nx\\x1b\n');
    assert.equal(render(human(['x', { text: '\x1b', style: 'bold' }]), true), 'x\x1b[1m\\x1b\x1b[0m\n');
  });
});

describe('one writer', () => {
  it('no file of src/cli/ but common/output.ts writes to the console, stdout or stderr', () => {
    const root = new URL('../src/cli/', import.meta.url);
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts')).sort();
    assert.ok(files.length > 15, files.join());
    const writing = files.filter((file) => file !== join('common', 'output.ts') && /\bconsole\.|process\.(stdout|stderr)\b/.test(readFileSync(new URL(file, root), 'utf8')));
    assert.deepEqual(writing, []);
  });
});

describe('cmi prints hostile values escaped, --json exact', () => {
  let t: TestApp;
  let url: string;
  let home: string;
  let env: Record<string, string>;
  /** The server and the database the local commands open are the same. */
  const AS_ADMIN = () => ({ ...env, CMI_URL: url, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password });

  // OSC 52 (write the clipboard), OSC 0 (the window title), CSI via ESC and via C1 (U+009B), a right-to-left override, DEL.
  const EVIL_EMAIL = 'mallory\x1b]52;c;chduzwq=\x07\x1b]0;owned\x07\u202e@evil.example';
  const EVIL_EMAIL_SHOWN = 'mallory\\x1b]52;c;chduzwq=\\x07\\x1b]0;owned\\x07\\u202e@evil.example';
  const EVIL_NAME = 'Eve\x1b[2J\x9b31m\x7f\u2066x\u2069';
  const EVIL_NAME_SHOWN = 'Eve\\x1b[2J\\x9b31m\\x7f\\u2066x\\u2069';
  const EVIL_CLASS = 'Evil\x1b]0;owned\x07';
  const EVIL_CLASS_SHOWN = 'Evil\\x1b]0;owned\\x07';
  const EVIL_MESSAGE = 'clip\x1b]52;c;cHduZWQ=\x07 board\u202e\x9b2J\nhide\x1b[8m me';
  const EVIL_MESSAGE_FIRST_SHOWN = 'clip\\x1b]52;c;cHduZWQ=\\x07 board\\u202e\\x9b2J';
  const EVIL_HOST = 'hv\x1b[31m-01';
  const EVIL_HOST_SHOWN = 'hv\\x1b[31m-01';
  let mallory: number;
  let errorId: number;

  before(async () => {
    t = await createTestApp({ CMI_AUTH_CACHE_TTL: '0' });
    url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-output-'));
    env = { XDG_CONFIG_HOME: join(home, 'config'), CMI_URL: '', CMI_USER: '', CMI_PASSWORD: '', CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '', DATABASE_URL: t.config.databaseUrl };
    const created = await t.app.inject({
      method: 'POST', url: '/users.json', headers: { authorization: t.adminAuth },
      payload: { user: { login: 'mallory', email: EVIL_EMAIL, password: 'mallory-password', first_name: EVIL_NAME, last_name: EVIL_NAME } },
    });
    assert.equal(created.statusCode, 201, created.body);
    mallory = created.json<{ user: { id: number } }>().user.id;
    const posted = await t.app.inject({
      method: 'POST', url: '/sysadmin_tools/infrastructure/errors.json', headers: { authorization: t.adminAuth },
      payload: { error_class: EVIL_CLASS, message: EVIL_MESSAGE, host: EVIL_HOST, component: 'storage', backtrace: 'a.ts:1\x1b[2J\nb.ts:2' },
    });
    assert.equal(posted.statusCode, 201, posted.body);
    errorId = posted.json<{ infrastructure_error: { id: number } }>().infrastructure_error.id;
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  const cmi = (args: string[]) => runCmi(args, AS_ADMIN());

  /** Exit 0, nothing on stderr, and no unsafe character raw on stdout. */
  function printedSafely(res: Finished): string {
    assert.deepEqual([res.code, res.stderr], [0, ''], res.stderr);
    assert.doesNotMatch(res.stdout.replace(/\n/g, ''), RAW_UNSAFE);
    return res.stdout;
  }

  /** The API's body for `path`, as --json prints it (one newline at the end). */
  const apiBody = async (path: string) => `${(await t.app.inject({ url: path, headers: { authorization: t.adminAuth } })).body.replace(/\n$/, '')}\n`;

  it('cmi users show: each field escaped; --json the API\'s exact bytes', async () => {
    const [shown, json] = await Promise.all([cmi(['users', 'show', String(mallory)]), cmi(['users', 'show', String(mallory), '--json'])]);
    const lines = printedSafely(shown).split('\n');
    assert.ok(lines.includes(`email:               ${EVIL_EMAIL_SHOWN}`), shown.stdout);
    assert.ok(lines.includes(`first_name:          ${EVIL_NAME_SHOWN}`), shown.stdout);
    assert.ok(lines.includes(`last_name:           ${EVIL_NAME_SHOWN}`), shown.stdout);
    assert.deepEqual([json.code, json.stderr], [0, '']);
    assert.equal(json.stdout, await apiBody(`/users/${mallory}.json`));
    assert.ok(json.stdout.includes(JSON.stringify(EVIL_EMAIL).slice(1, -1)));
  });

  it('cmi users suspend and activate: the line names the user escaped', async () => {
    assert.equal(printedSafely(await cmi(['users', 'suspend', String(mallory)])), `Suspended user ${mallory} "mallory" <${EVIL_EMAIL_SHOWN}>\n`);
    assert.equal(printedSafely(await cmi(['users', 'activate', String(mallory)])), `Activated user ${mallory} "mallory" <${EVIL_EMAIL_SHOWN}>\n`);
  });

  it('cmi local users ls, suspend and activate: the table aligned on the escaped text', async () => {
    const w = EVIL_EMAIL_SHOWN.length;
    const row = (id: string, login: string, email: string, role: string, status: string) => `${id.padEnd(2)}  ${login.padEnd(7)}  ${email.padEnd(w)}  ${role.padEnd(5)}  ${status}`.trimEnd();
    assert.equal(printedSafely(await cmi(['local', 'users', 'ls'])), [
      row('ID', 'LOGIN', 'EMAIL', 'ROLE', 'STATUS'),
      row('1', 'admin', 'admin@example.com', 'admin', 'active'),
      row('2', 'alice', 'alice@example.com', 'user', 'active'),
      row(String(mallory), 'mallory', EVIL_EMAIL_SHOWN, 'user', 'active'),
      '3 of 3 users (page 1)', '',
    ].join('\n'));
    assert.equal(printedSafely(await cmi(['local', 'users', 'suspend', 'mallory'])), `Suspended user ${mallory} "mallory" <${EVIL_EMAIL_SHOWN}>\n`);
    assert.equal(printedSafely(await cmi(['local', 'users', 'activate', 'mallory'])), `Activated user ${mallory} "mallory" <${EVIL_EMAIL_SHOWN}>\n`);
  });

  it('cmi errors ls and show, and cmi local errors ls and show: class, message, backtrace and host escaped; --json exact', async () => {
    const [list, shown, localList, localShown, json, localJson, localShowJson] = await Promise.all([
      cmi(['errors', 'ls']), cmi(['errors', 'show', String(errorId)]), cmi(['local', 'errors', 'ls']), cmi(['local', 'errors', 'show', String(errorId)]),
      cmi(['errors', 'ls', '--json']), cmi(['local', 'errors', 'ls', '--json']), cmi(['local', 'errors', 'show', String(errorId), '--json']),
    ]);
    const header = (classWidth: number, triage = '') => `ID  COUNT  LAST SEEN                  ${triage}REPORTED  ${'CLASS'.padEnd(classWidth)}  MESSAGE`;
    // The first line of the message (30 characters, under the column's 60).
    const entry = (triage = '') => `${String(errorId).padEnd(2)}  1      2026-11-20T10:00:00+00:00  ${triage}no        ${EVIL_CLASS_SHOWN}  ${EVIL_MESSAGE_FIRST_SHOWN}`;
    // The server's list shows each error's triage too (docs/cli.md#infrastructure-errors).
    assert.equal(printedSafely(list), `${header(EVIL_CLASS_SHOWN.length, 'STATUS      ASSIGNEE  ')}\n${entry('unresolved  -         ')}\n1 of 1 errors (page 1 of 1)\n`);
    assert.equal(printedSafely(localList), `${header(EVIL_CLASS_SHOWN.length)}\n${entry()}\n1 of 1 errors (page 1)\n`);
    for (const res of [shown, localShown]) {
      const out = printedSafely(res);
      assert.ok(out.includes('\nbacktrace:\n    a.ts:1\\x1b[2J\n    b.ts:2\n'), out);
      assert.ok(out.includes(`\nerror_class: ${EVIL_CLASS_SHOWN}\n`), out);
      assert.ok(out.includes(`\nmessage: ${EVIL_MESSAGE_FIRST_SHOWN}\n    hide\\x1b[8m me\n`), out);
      assert.match(out, new RegExp(`\\n {2}HOST {${EVIL_HOST_SHOWN.length - 2}}COUNT\\n {2}${EVIL_HOST_SHOWN.replace(/[\\[]/g, '\\$&')} {2}1\\n(\\n|$)`));
    }
    const body = await apiBody('/sysadmin_tools/infrastructure/errors.json');
    for (const res of [json, localJson]) {
      assert.deepEqual([res.code, res.stderr], [0, '']);
      assert.equal(res.stdout, body);
    }
    assert.equal(localShowJson.stdout, await apiBody(`/sysadmin_tools/infrastructure/errors/${errorId}.json`));
    assert.ok(body.includes('\\u001b]0;owned\\u0007'), 'JSON escapes ESC as JSON does, nothing more');
  });

  it('a refusal naming a hostile value is escaped on stderr', async () => {
    const res = await cmi(['local', 'users', 'suspend', 'x\x1b]0;owned\x07']);
    assert.deepEqual([res.code, res.stdout], [1, '']);
    // The service's message quotes the value as JSON (\u001b); the writer then shows that backslash as \\.
    assert.equal(res.stderr, 'cmi: no user with id, login or email "x\\\\u001b]0;owned\\\\u0007"\n');
    const remote = await cmi(['users', 'show', 'x\x1b]0;owned\x07']);
    assert.deepEqual([remote.code, remote.stdout, remote.stderr], [2, '', 'cmi: no user "x\\x1b]0;owned\\x07" (give an id, a login or an email)\n']);
  });
});
