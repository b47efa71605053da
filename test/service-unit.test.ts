import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runProgram, startServer } from './support/cli.js';

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
