import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readProfile, saveProfile } from '../src/cli/remote/profiles.js';

/** The profile file of `cmi login` (docs/cli.md#profiles) on a real file system, where others may have been first. */
describe('cmi profile file', () => {
  const home = mkdtempSync(join(tmpdir(), 'cmi-profiles-'));
  after(() => rmSync(home, { recursive: true, force: true }));
  const profile = { url: 'https://cmi.example.com', login: 'admin', api_key: 'k'.repeat(40) };

  it('closes a directory that was already there with loose modes, and replaces a loose file with a 0600 one', () => {
    const env = { XDG_CONFIG_HOME: join(home, 'loose') };
    mkdirSync(join(home, 'loose', 'cmi'), { recursive: true });
    chmodSync(join(home, 'loose', 'cmi'), 0o777);
    writeFileSync(join(home, 'loose', 'cmi', 'config.json'), '{"profiles":{}}\n', { mode: 0o644 });
    chmodSync(join(home, 'loose', 'cmi', 'config.json'), 0o644);
    const path = saveProfile('main', profile, env);
    assert.equal(statSync(join(home, 'loose', 'cmi')).mode & 0o777, 0o700);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(readProfile(undefined, env), profile);
  });

  it('never writes the API key through a symlink planted under the temporary name', () => {
    const env = { XDG_CONFIG_HOME: join(home, 'planted') };
    const directory = join(home, 'planted', 'cmi');
    mkdirSync(directory, { recursive: true });
    const stolen = join(home, 'stolen.json');
    symlinkSync(stolen, join(directory, `config.json.${process.pid}.tmp`));
    const path = saveProfile('main', profile, env);
    assert.equal(existsSync(stolen), false);
    assert.equal(lstatSync(path).isFile(), true);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal((JSON.parse(readFileSync(path, 'utf8')) as { profiles: { main: { api_key: string } } }).profiles.main.api_key, profile.api_key);
  });
});
