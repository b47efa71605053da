import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCmi, runProgram, startServer } from './support/cli.js';

// deploy/cmi.service as an operator installs it (docs/operations.md#production): systemd accepts it,
// it carries the hardening the docs promise, and what it starts, with the environment it sets, serves
// and stops cleanly on its KillSignal (bin/cmi.js, which ExecStart names, is test/built-command.test.ts's).

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const UNIT = join(ROOT, 'deploy', 'cmi.service');
const hasSystemdAnalyze = existsSync('/usr/bin/systemd-analyze');

/** The unit's settings: each key with every value it is given, in order (comments and sections dropped). */
function settings(text: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (match) found.set(match[1] as string, [...(found.get(match[1] as string) ?? []), match[2] as string]);
  }
  return found;
}

describe('deploy/cmi.service', () => {
  const unit = settings(readFileSync(UNIT, 'utf8'));
  const one = (key: string) => unit.get(key)?.join('\n');

  it('passes systemd-analyze verify', { skip: !hasSystemdAnalyze && 'systemd-analyze is not installed' }, async () => {
    const result = await runProgram('/usr/bin/systemd-analyze', ['verify', UNIT]);
    assert.deepEqual([result.code, result.stderr], [0, '']);
  });

  it('runs as the dedicated user, restarts on failure, stops gracefully, and is hardened', () => {
    assert.deepEqual([one('User'), one('Group'), one('Restart'), one('KillSignal'), one('StateDirectory')], ['cmi', 'cmi', 'on-failure', 'SIGTERM', 'cmi']);
    assert.equal(one('ExecStart'), '/usr/bin/node /opt/cmi/bin/cmi.js serve');
    assert.equal(one('EnvironmentFile'), '-/etc/cmi/cmi.env');
    for (const [key, value] of <Array<[string, string]>>[['NoNewPrivileges', 'yes'], ['ProtectSystem', 'strict'], ['ProtectHome', 'yes'], ['PrivateTmp', 'yes'], ['PrivateDevices', 'yes'], ['CapabilityBoundingSet', ''], ['RestrictAddressFamilies', 'AF_INET AF_INET6 AF_UNIX']]) {
      assert.equal(one(key), value, key);
    }
    // With ProtectSystem=strict only the state directory is writable: everything cmi writes is there.
    assert.deepEqual(unit.get('Environment'), ['NODE_ENV=production', 'DATABASE_URL=sqlite:/var/lib/cmi/cmi.sqlite3', 'CMI_SPOOL_DIR=/var/lib/cmi/spool', 'CMI_LOG_FORMAT=json']);
    assert.deepEqual(readFileSync(join(ROOT, 'deploy', 'cmi.sysusers.conf'), 'utf8').split('\n').filter((line) => line && !line.startsWith('#')), ['u cmi - "cmi API server" /var/lib/cmi']);
  });

  it('starts cmi with the environment it sets, its database in the state directory, and stops on SIGTERM with 0', async () => {
    const state = mkdtempSync(join(tmpdir(), 'cmi-state-'));
    try {
      const env = Object.fromEntries((unit.get('Environment') ?? []).map((assignment) => {
        const at = assignment.indexOf('=');
        return [assignment.slice(0, at), assignment.slice(at + 1).replaceAll('/var/lib/cmi', state)];
      }));
      const server = await startServer({ ...env, CMI_ADMIN_PASSWORD: 'service-password' });
      const started = JSON.parse(server.output.split('\n')[0] as string) as { level: string };
      assert.equal(started.level, 'info');
      const res = await fetch(`${server.baseUrl}/version.json`, { headers: { authorization: `Basic ${Buffer.from('admin:service-password').toString('base64')}` } });
      assert.deepEqual([res.status, await res.text()], [200, '{"version":"6.7"}']);
      assert.equal(await server.stop(), 0);
      assert.equal(existsSync(join(state, 'cmi.sqlite3')), true);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});

// deploy/cmi-backup.service and .timer (docs/operations.md#backup-schedule): systemd accepts them, the
// backup reads the database cmi.service serves, and what it runs writes a backup a restore drill
// loads, then removes the backups older than 14 days.
describe('deploy/cmi-backup.service and cmi-backup.timer', () => {
  const BACKUP = join(ROOT, 'deploy', 'cmi-backup.service');
  const TIMER = join(ROOT, 'deploy', 'cmi-backup.timer');
  const backup = settings(readFileSync(BACKUP, 'utf8'));
  const timer = settings(readFileSync(TIMER, 'utf8'));
  const service = settings(readFileSync(UNIT, 'utf8'));
  const one = (unit: Map<string, string[]>, key: string) => unit.get(key)?.join('\n');

  it('pass systemd-analyze verify', { skip: !hasSystemdAnalyze && 'systemd-analyze is not installed' }, async () => {
    const result = await runProgram('/usr/bin/systemd-analyze', ['verify', BACKUP, TIMER]);
    assert.deepEqual([result.code, result.stderr], [0, '']);
  });

  it('back up the database cmi.service serves, as its user, nightly, catching up a missed night', () => {
    assert.deepEqual([one(backup, 'Type'), one(backup, 'User'), one(backup, 'Group'), one(backup, 'StateDirectory'), one(backup, 'UMask')], ['oneshot', 'cmi', 'cmi', 'cmi cmi/backups', '0077']);
    assert.equal(one(backup, 'EnvironmentFile'), one(service, 'EnvironmentFile'));
    const databaseUrl = (unit: Map<string, string[]>) => unit.get('Environment')?.find((line) => line.startsWith('DATABASE_URL='));
    assert.equal(databaseUrl(backup), databaseUrl(service));
    assert.deepEqual([one(timer, 'OnCalendar'), one(timer, 'Persistent'), one(timer, 'Unit'), one(timer, 'WantedBy')], ['*-*-* 03:15:00', 'true', 'cmi-backup.service', 'timers.target']);
    for (const key of ['NoNewPrivileges', 'ProtectSystem', 'ProtectHome', 'PrivateTmp', 'CapabilityBoundingSet', 'RestrictAddressFamilies']) assert.equal(one(backup, key), one(service, key), key);
  });

  it('runs a backup a restore drill loads, and removes only backups older than 14 days', async () => {
    const state = mkdtempSync(join(tmpdir(), 'cmi-backup-state-'));
    try {
      const here = (text: string) => text.replaceAll('/var/lib/cmi', state);
      const env = Object.fromEntries((backup.get('Environment') ?? []).map((assignment) => {
        const at = assignment.indexOf('=');
        return [assignment.slice(0, at), here(assignment.slice(at + 1))];
      }));
      assert.equal((await runCmi(['migrate'], env)).code, 0);
      assert.equal((await runCmi(['local', 'users', 'add', '--login', 'drill', '--email', 'drill@example.com', '--password', 'drill-password'], env)).code, 0);
      // What systemd starts: `%%` is systemd's escape of `%`; the sources stand in for /opt/cmi's build.
      mkdirSync(join(state, 'backups'));
      const old = join(state, 'backups', 'cmi-2000-01-01.backup');
      writeFileSync(old, 'an old backup');
      utimesSync(old, new Date('2000-01-01'), new Date('2000-01-01'));
      const cmi = `${process.execPath} --import ${import.meta.resolve('tsx')} ${join(ROOT, 'src', 'cli', 'main.ts')}`;
      const start = here(one(backup, 'ExecStart') as string).replaceAll('%%', '%').replace('/usr/bin/node /opt/cmi/bin/cmi.js', cmi);
      const [shell, flag, script] = [start.slice(0, start.indexOf(' ')), '-c', start.slice(start.indexOf("'") + 1, start.lastIndexOf("'"))];
      const ran = await runProgram(shell, [flag, script], { env: { ...process.env, ...env } });
      assert.equal(ran.code, 0, ran.stderr);
      const today = new Date().toISOString().slice(0, 10);
      const file = join(state, 'backups', `cmi-${today}.backup`);
      assert.equal((JSON.parse(ran.stdout) as { file: string }).file, file);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const post = here(one(backup, 'ExecStartPost') as string).split(' ');
      const pruned = await runProgram(post[0] as string, post.slice(1));
      assert.equal(pruned.code, 0, pruned.stderr);
      assert.deepEqual(readdirSync(join(state, 'backups')), [`cmi-${today}.backup`]);
      // The restore drill: last night's file into a scratch database, which then holds the user.
      const drill = { DATABASE_URL: `sqlite:${join(state, 'drill.sqlite3')}` };
      const restored = await runCmi(['restore', file], drill);
      assert.equal(restored.code, 0, restored.stderr);
      const users = await runCmi(['local', 'users', 'ls'], drill);
      assert.match(users.stdout, / drill +drill@example.com /);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});
