import { CmiClient } from '../../client/index.js';
import { UsageError } from '../common/usage-error.js';
import { readProfile } from './profiles.js';
import { complain } from '../common/output.js';
import { beQuiet, cliEnv, readStdin } from '../common/io.js';

/** The options every remote command takes (before or after the command's name; docs/cli.md#connecting). */
export interface GlobalOptions {
  url?: string;
  user?: string;
  passwordStdin?: boolean;
  profile?: string;
  timeout?: string;
  xml?: boolean;
  quiet?: boolean;
}

/** Exit codes of the remote commands (docs/cli.md#exit-codes). */
export const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3 } as const;

/** A usage mistake of a remote command: exit code 2, as every UsageError. */
export class RemoteUsageError extends UsageError {}

const nonEmpty = (value: string | undefined): value is string => value !== undefined && value !== '';

/** Whether credentials sent to `url` stay off the network's reach: https, or http to this machine's loopback. */
function sentEncrypted(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'https:' || hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

export interface Connection {
  client: CmiClient;
  url: string;
  login: string;
}

/**
 * A client for the server the options name. The secret comes from --password-stdin, CMI_PASSWORD,
 * CMI_API_KEY or the profile's API key, in that order; flags win over the environment, which wins over
 * the profile. With `credentials: 'none'` (a call that is public, as unlock_account), only the server
 * is read and nothing is sent as a credential.
 */
export async function connect(options: GlobalOptions, env: NodeJS.ProcessEnv = cliEnv(), profiles: 'read' | 'ignore' = 'read', credentials: 'required' | 'none' = 'required'): Promise<Connection> {
  if (options.quiet) beQuiet();
  const profileName = options.profile ?? (nonEmpty(env.CMI_PROFILE) ? env.CMI_PROFILE : undefined);
  const profile = profiles === 'read' ? readProfile(profileName, env) : undefined;
  if (profiles === 'read' && profileName !== undefined && profile === undefined) throw new RemoteUsageError(`no profile "${profileName}": save one with cmi login --profile ${profileName}`);
  const url = options.url ?? (nonEmpty(env.CMI_URL) ? env.CMI_URL : undefined) ?? profile?.url;
  if (url === undefined) throw new RemoteUsageError('no server: give --url URL (or CMI_URL), --profile NAME, or save one with cmi login');
  // Not echoed: it holds a password, which would land in the terminal's scrollback and the profile file.
  if (/^https?:\/\/[^/?#]*@/.test(url)) throw new RemoteUsageError('--url must not hold credentials (user:password@host): give --user, and the password with --password-stdin or CMI_PASSWORD');
  if (!/^https?:\/\/[^/]/.test(url)) throw new RemoteUsageError(`--url must be an http:// or https:// URL (got "${url}")`);
  if (credentials === 'none') return { client: new CmiClient({ baseUrl: url, format: options.xml ? 'xml' : 'json', timeout: timeoutMs(options.timeout) }), url, login: '' };
  if (!sentEncrypted(url)) complain(`cmi: warning: ${new URL(url).host} is reached over plain http: the password or API key crosses the network readable; use https://`);
  const login = options.user ?? (nonEmpty(env.CMI_USER) ? env.CMI_USER : undefined) ?? profile?.login;
  if (login === undefined) throw new RemoteUsageError('no login: give --user LOGIN (or CMI_USER)');
  let secret: { password: string } | { apiKey: string } | undefined;
  if (options.passwordStdin) secret = { password: await readStdin() };
  else if (nonEmpty(env.CMI_PASSWORD)) secret = { password: env.CMI_PASSWORD };
  else if (nonEmpty(env.CMI_API_KEY)) secret = { apiKey: env.CMI_API_KEY };
  else if (profile !== undefined && profile.login === login) secret = { apiKey: profile.api_key };
  if (secret === undefined) throw new RemoteUsageError('no password: give --password-stdin, CMI_PASSWORD or CMI_API_KEY, or save a profile with cmi login');
  const client = new CmiClient({ baseUrl: url, login, ...secret, format: options.xml ? 'xml' : 'json', timeout: timeoutMs(options.timeout) });
  return { client, url, login };
}

/** --timeout (seconds) in milliseconds; 30 s when not given. */
function timeoutMs(option: string | undefined): number {
  if (option === undefined) return 30_000;
  const timeout = Number(option);
  if (!Number.isFinite(timeout) || timeout <= 0 || timeout > 3600) throw new RemoteUsageError(`--timeout must be seconds from 0 to 3600 (got "${option}")`);
  return timeout * 1000;
}
