import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { cliEnv } from '../common/io.js';

/** One installation `cmi login` saved: where it is, who, and an API key; never a password (docs/cli.md#profiles). */
export interface Profile {
  url: string;
  login: string;
  api_key: string;
}

interface ProfileFile {
  /** The profile used when no --profile is given. */
  default?: string;
  profiles: Record<string, Profile>;
}

/** `$XDG_CONFIG_HOME/cmi/config.json`, else `~/.config/cmi/config.json`. */
export function profilePath(env: NodeJS.ProcessEnv = cliEnv()): string {
  const base = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir(), '.config');
  return join(base, 'cmi', 'config.json');
}

function readFile(path: string): ProfileFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw error;
  }
  const parsed = JSON.parse(text) as Partial<ProfileFile>;
  return { default: parsed.default, profiles: parsed.profiles ?? {} };
}

/** The named profile, or the default one; undefined when none is saved. */
export function readProfile(name: string | undefined, env: NodeJS.ProcessEnv = cliEnv()): Profile | undefined {
  const file = readFile(profilePath(env));
  const chosen = name ?? file.default;
  return chosen === undefined ? undefined : file.profiles[chosen];
}

/** Saves a profile (and makes it the default when it is the first); the file is 0600 in a 0700 directory. */
export function saveProfile(name: string, profile: Profile, env: NodeJS.ProcessEnv = cliEnv()): string {
  const path = profilePath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // mkdir's mode applies only to a directory it makes: one already there (0777, 0755) is closed too, so
  // nobody else can list it or plant a file (a symlink under the temporary name) in it.
  chmodSync(dirname(path), 0o700);
  const file = readFile(path);
  file.profiles[name] = profile;
  file.default ??= name;
  // Written whole under another name, then renamed: never a half-written file, never readable by others.
  // 'wx' (O_CREAT|O_EXCL) never follows a symlink left under that name; a stale one is removed first.
  const temporary = `${path}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
  return path;
}
