import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../src/cli/run.js';
import { rate } from '../src/cli/common/output.js';
import { ADMIN, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { adminCliEnv, type Finished, runCmi } from './support/cli.js';

const AT = '2026-11-20T10:00:00+00:00';
const ERRORS = '/sysadmin_tools/infrastructure/errors';

/**
 * Names where people type them and printed where people read them (docs/cli.md#names), the error
 * tracker's triage in `errors ls` and `errors show`, `errors send`, and the progress bar's rate and
 * --quiet (docs/cli.md#progress), against a real cmi on a random port; the tests build on each other in order.
 */
describe('cmi: names in and out, errors ls/show/send, progress', () => {
  let t: TestApp;
  let url: string;
  let home: string;
  let env: Record<string, string>;
  const ids: number[] = [];
  let tomId = 0;

  before(async () => {
    t = await createTestApp({ CMI_AUTH_CACHE_TTL: '0' });
    url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-names-'));
    env = adminCliEnv(home, url, ADMIN);
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  const cmi = (...args: string[]) => runCmi(args, env);
  const api = async (method: 'GET' | 'POST', path: string, body?: unknown) =>
    t.app.inject({ method, url: path, headers: { authorization: t.adminAuth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });

  function succeeded(res: Finished, stdout: string | RegExp): void {
    assert.deepEqual([res.code, res.stderr], [0, ''], res.stdout);
    if (typeof stdout === 'string') assert.equal(res.stdout, stdout);
    else assert.match(res.stdout, stdout);
  }
  function failed(res: Finished, code: number, stderr: string | RegExp): void {
    assert.deepEqual([res.code, res.stdout], [code, ''], res.stderr);
    if (typeof stderr === 'string') assert.equal(res.stderr, stderr);
    else assert.match(res.stderr, stderr);
  }

  it('errors send records a report from a script: new, then counted; its backtrace from a file; what the server then holds', async () => {
    const trace = join(home, 'job.trace');
    writeFileSync(trace, 'backup.sh:12\ncron:1\n');
    succeeded(await cmi('errors', 'send', '--class', 'Backup::Failed', '--message', 'nightly dump exited 2', '--host', 'db-01', '--component', 'backup', '--backtrace-file', trace),
      /^Recorded new infrastructure error (\d+) \(Backup::Failed: nightly dump exited 2\), 1 occurrence\n$/);
    succeeded(await cmi('errors', 'send', '--class', 'Backup::Failed', '--message', 'nightly dump exited 2', '--host', 'db-02', '--component', 'backup', '--backtrace-file', trace),
      /^Counted on infrastructure error \d+ \(Backup::Failed: nightly dump exited 2\), 2 occurrences\n$/);
    succeeded(await cmi('errors', 'send', '--class', 'Cron::Late', '--message', 'job ran 40 min late'), /^Recorded new infrastructure error \d+ \(Cron::Late: job ran 40 min late\), 1 occurrence\n$/);
    const listed = (await api('GET', `${ERRORS}.json?sort=created_at&direction=asc`)).json<Array<{ infrastructure_error: { id: number; error_class: string; counter: number; backtrace: string } }>>();
    assert.deepEqual(listed.map(({ infrastructure_error: e }) => [e.error_class, e.counter, e.backtrace]), [['Backup::Failed', 2, 'backup.sh:12\ncron:1'], ['Cron::Late', 1, '']]);
    ids.push(...listed.map(({ infrastructure_error: e }) => e.id));
    const hosts = (await api('GET', `${ERRORS}/${ids[0]}/breakdown.json?by=host`)).json<unknown[]>();
    assert.equal(hosts.length, 2);
    failed(await cmi('errors', 'send', '--message', 'no class'), 2, /^error: required option '--class <class>' not specified\n/);
    failed(await cmi('errors', 'send', '--class', 'X', '--backtrace-file', join(home, 'missing')), 2, `cmi: --backtrace-file: cannot read ${join(home, 'missing')} (ENOENT)\n`);
  });

  it('errors assign --to takes a login, an email, me or none; a name that matches nothing is a usage error naming it', async () => {
    const [a, b] = ids as [number, number];
    succeeded(await cmi('users', 'add', '--login', 'tom', '--email', 'tom@example.com', '--password', 'tom-password-1', '--admin'), 'Created administrator 3 "tom" <tom@example.com>\n');
    tomId = (await api('GET', '/users.json')).json<Array<{ user: { id: number; login: string } }>>().find(({ user }) => user.login === 'tom')!.user.id;
    succeeded(await cmi('errors', 'assign', String(a), '--to', 'tom'), `Infrastructure error ${a} assigned: unresolved, assigned to tom\n`);
    assert.equal((await api('GET', `${ERRORS}/${a}/triage.json`)).json<{ triage: { assignee_id: number } }>().triage.assignee_id, tomId);
    succeeded(await cmi('errors', 'assign', String(b), '--to', 'me'), `Infrastructure error ${b} assigned: unresolved, assigned to admin\n`);
    succeeded(await cmi('errors', 'assign', String(b), '--to', 'TOM@example.com'), `Infrastructure error ${b} assigned: unresolved, assigned to tom\n`);
    succeeded(await cmi('errors', 'assign', String(b), '--to', 'none'), `Infrastructure error ${b} unassigned: unresolved\n`);
    failed(await cmi('errors', 'assign', String(b), '--to', 'nobody'), 2, 'cmi: no user "nobody" (give an id, a login or an email)\n');
    failed(await cmi('errors', 'ls', '--assignee', 'nobody'), 2, 'cmi: no user "nobody" (give an id, a login or an email)\n');
    // Alice, an ordinary user, may not read the tracker: the server refuses her, by login too.
    failed(await cmi('errors', 'assign', String(b), '--to', 'alice'), 1, 'cmi: assignee_id must be a user who may read infrastructure errors\n');
    assert.equal((await api('GET', `${ERRORS}/${b}/triage.json`)).json<{ triage: { assignee_id: number | null } }>().triage.assignee_id, null);
  });

  it('errors ls shows STATUS and ASSIGNEE by login, filters by --assignee LOGIN; --json is the API\'s body, unchanged', async () => {
    const [a, b] = ids as [number, number];
    succeeded(await cmi('errors', 'snooze', String(b), '--occurrences', '10'), `Infrastructure error ${b} snoozed: snoozed\n`);
    succeeded(await cmi('errors', 'ls', '--status', 'all', '--sort', 'created_at', '--direction', 'asc'),
      'ID  COUNT  LAST SEEN                  STATUS      ASSIGNEE  REPORTED  CLASS           MESSAGE\n' +
      `${a}   2      ${AT}  unresolved  tom       no        Backup::Failed  nightly dump exited 2\n` +
      `${b}   1      ${AT}  snoozed     -         no        Cron::Late      job ran 40 min late\n` +
      '2 of 2 errors (page 1 of 1)\n');
    succeeded(await cmi('errors', 'ls', '--assignee', 'tom'), new RegExp(`^ID .*\\n${a} .* tom .*\\n1 of 1 errors \\(page 1 of 1\\)\\n$`));
    succeeded(await cmi('errors', 'ls', '--json', '--assignee', 'tom'), `${(await api('GET', `${ERRORS}.json?status=unresolved&assignee=${tomId}`)).body}\n`);
  });

  it('errors ls QUERY searches (docs/search.md); a search naming a status lifts the unresolved default; a refusal names the position', async () => {
    const [a, b] = ids as [number, number];
    succeeded(await cmi('errors', 'ls', 'component:backup', '"dump exited"'), new RegExp(`^ID .*\\n${a} .*Backup::Failed .*\\n1 of 1 errors \\(page 1 of 1\\)\\n$`));
    succeeded(await cmi('errors', 'ls', 'is:snoozed'), new RegExp(`^ID .*\\n${b} .*Cron::Late .*\\n1 of 1 errors \\(page 1 of 1\\)\\n$`));
    succeeded(await cmi('errors', 'ls', '--json', 'assigned:tom', 'counter:>1'), `${(await api('GET', `${ERRORS}.json?status=unresolved&q=${encodeURIComponent('assigned:tom counter:>1')}`)).body}\n`);
    failed(await cmi('errors', 'ls', 'colour:red'), 1, /^cmi: q colour: is not a key of the search \(keys: .*\) at position 1\n$/);
  });

  it('notes and activity print their author and actor by login; errors show shows the triage, the latest notes and both breakdowns', async () => {
    const [a, b] = ids as [number, number];
    for (const text of ['one', 'two', 'three', 'four', 'five', 'six', 'seven']) succeeded(await cmi('errors', 'note', String(a), text), /^Note \d+ added to infrastructure error \d+\n$/);
    succeeded(await cmi('errors', 'notes', String(a)), /^ID {2}AT {25}AUTHOR {2}NOTE\n1 {3}2026-11-20T10:00:00\+00:00 {2}admin {3}one\n[^]*7 of 7 notes\n$/);
    succeeded(await cmi('errors', 'activity', String(a)), new RegExp(`^AT {25}ACTOR {2}ACTION +DETAILS\\n${AT.replace('+', '\\+')}  - +first_seen[^]*\\n${AT.replace('+', '\\+')}  admin  assign +\\{"from":null,"to":${tomId}\\}\\n`));
    const shown = await cmi('errors', 'show', String(a));
    succeeded(shown, /\n\nTriage:\n {2}status: unresolved\n {2}assignee: tom\n\n/);
    assert.ok(shown.stdout.includes(
      '\nLatest notes (5 of 7):\n  AT                         AUTHOR  NOTE\n' +
      ['three', 'four', 'five', 'six', 'seven'].map((note) => `  ${AT}  admin   ${note}\n`).join('') +
      '\nBy host (2 of 2):\n  HOST   COUNT\n  db-01  1\n  db-02  1\n\nBy component (1 of 1):\n  COMPONENT  COUNT\n  backup     2\n'), shown.stdout);
    succeeded(await cmi('errors', 'show', String(b)), /\nTriage:\n {2}status: snoozed\n {2}snooze_occurrences: 10\n {2}assignee: -\n\nLatest notes \(0 of 0\):\n\nBy host \(1 of 1\):\n {2}HOST {2}COUNT\n {2}- {5}1\n/);
    succeeded(await cmi('errors', 'show', String(a), '--json'), `${(await api('GET', `${ERRORS}/${a}.json`)).body}\n`);
  });

  it('groups take roles and a bucket by name and print the bucket by label; users ls --role by name; an ambiguous label says so', async () => {
    succeeded(await cmi('buckets', 'add', '--label', 'Gold'), 'Created bucket 1 "Gold"\n');
    succeeded(await cmi('groups', 'add', '--label', 'Ops', '--roles', 'user,Administrator', '--bucket', 'gold'), 'Created user group 1 "Ops" (ops)\n');
    const group = (await api('GET', '/user_groups/1.json')).json<{ user_group: { bucket_id: number; roles: Array<{ role: { identifier: string } }> } }>().user_group;
    assert.deepEqual([group.bucket_id, group.roles.map(({ role }) => role.identifier).sort()], [1, ['admin', 'user']]);
    succeeded(await cmi('groups', 'ls'), 'ID  LABEL  IDENTIFIER  ROLES        BUCKET\n1   Ops    ops         admin, user  Gold\n1 of 1 user groups (page 1 of 1)\n');
    succeeded(await cmi('groups', 'show', 'Ops'), /\nbucket: {5}Gold\n/);
    succeeded(await cmi('groups', 'edit', 'ops', '--bucket', 'none'), 'Updated user group 1 "Ops" (ops)\n');
    failed(await cmi('groups', 'edit', 'ops', '--bucket', 'Platinum'), 2, 'cmi: no bucket "Platinum" (give an id or a label)\n');
    succeeded(await cmi('users', 'ls', '--role', 'user'), /^ID {2}LOGIN .*\n2 {3}alice .*\n1 of 1 users/);
    succeeded(await cmi('users', 'ls', '--role', 'admin'), /^ID {2}LOGIN .*\n1 {3}admin .*\n3 {3}tom .*\n2 of 2 users/);
    succeeded(await cmi('roles', 'add', '--label', 'Readers', '--identifier', 'readers_a'), /^Created role/);
    succeeded(await cmi('roles', 'add', '--label', 'Readers', '--identifier', 'readers_b'), /^Created role/);
    failed(await cmi('groups', 'edit', 'ops', '--roles', 'Readers'), 2, 'cmi: 2 roles are labelled "Readers" (ids 3, 4): give the id or the identifier\n');
  });

  it('a bulk change on a terminal draws a bar with its rate, cleared after; --quiet and a pipe draw none', async () => {
    const run = async (...args: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await runCli(args, {
        env: { ...process.env, ...env }, cwd: home, stdin: '',
        stdout: { isTTY: false, write: (text: string) => (stdout += text) },
        stderr: { isTTY: true, write: (text: string) => (stderr += text) },
      });
      return { code, stdout, stderr };
    };
    const drawn = await run('errors', 'resolve', ...ids.map(String));
    assert.deepEqual([drawn.code, drawn.stdout], [0, '2 infrastructure errors resolved\n']);
    // ESC written out as a mark, so the pattern holds no control character.
    assert.match(drawn.stderr.replaceAll('\u001b', '<ESC>'), /^\rresolved \[-{30}\] 0\/2 0\.0\/s<ESC>\[K\rresolved \[#{30}\] 2\/2 \d+(\.\d)?\/s<ESC>\[K\r<ESC>\[2K$/);
    const quiet = await run('errors', 'reopen', '--quiet', ...ids.map(String));
    assert.deepEqual([quiet.code, quiet.stdout, quiet.stderr], [0, '2 infrastructure errors reopened\n', '']);
    succeeded(await cmi('errors', 'ignore', ...ids.map(String)), '2 infrastructure errors ignored\n');
    assert.deepEqual([rate(0, 0), rate(3, 10), rate(12, 1), rate(34_000, 10)], ['0.0/s', '0.3/s', '12/s', '3400/s']);
  });
});
