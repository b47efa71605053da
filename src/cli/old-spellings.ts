import type { Command } from 'commander';
import { globals } from './remote/command.js';
import { readProfile } from './remote/profiles.js';
import { UsageError } from './common/usage-error.js';
import { cliEnv } from './common/io.js';

/**
 * The spellings retired when each verb got one spelling (docs/cli.md#old-spellings). For one release each answers a usage error
 * (exit 2) naming its new spelling instead of acting; in the next, this file and its call in main.ts go.
 *
 * - `server`: the same action on a server, named in the message too.
 * - `withoutServer`: the verb lives on as a server command; only its old local meaning, which it had
 *   when no server was named, is refused.
 * - `note`: an option that changed with it.
 */
export const OLD_SPELLINGS: ReadonlyArray<{ old: string; now: string; server?: string; withoutServer?: true; note?: string }> = [
  { old: 'users list', now: 'local users ls', server: 'users ls' },
  { old: 'users create', now: 'local users add', server: 'users add' },
  { old: 'users update', now: 'local users edit', server: 'users edit', note: '--user is now --ordinary' },
  { old: 'users delete', now: 'local users rm', server: 'users rm' },
  { old: 'users unlock', now: 'local users unlock' },
  { old: 'users reset-password', now: 'local users reset-password' },
  { old: 'users suspend', now: 'local users suspend', withoutServer: true },
  { old: 'users activate', now: 'local users activate', withoutServer: true },
  { old: 'users api-key', now: 'local users api-key', withoutServer: true },
  { old: 'local users list', now: 'local users ls' },
  { old: 'local users create', now: 'local users add' },
  { old: 'local users update', now: 'local users edit', note: '--user is now --ordinary' },
  { old: 'local users delete', now: 'local users rm' },
  { old: 'errors list', now: 'local errors ls', server: 'errors ls' },
  { old: 'errors delete', now: 'local errors rm', server: 'errors rm' },
  { old: 'errors prune', now: 'local errors prune' },
  { old: 'errors show', now: 'local errors show', withoutServer: true },
  { old: 'errors report', now: 'local errors report', withoutServer: true },
  { old: 'local errors list', now: 'local errors ls' },
  { old: 'local errors delete', now: 'local errors rm' },
  { old: 'deliveries list', now: 'local deliveries ls', server: 'deliveries ls' },
  { old: 'deliveries retry', now: 'local deliveries retry' },
  { old: 'local deliveries list', now: 'local deliveries ls' },
  { old: 'ingest-keys create', now: 'ingest-keys add', note: 'the label is --label LABEL' },
];

/** A usage mistake: exit 2, as the remote commands' (docs/cli.md#exit-codes). */
class OldSpelling extends UsageError {}

const named = (value: string | undefined) => value !== undefined && value !== '';

/** Whether a server is named: --url, --profile, CMI_URL, CMI_PROFILE, or a profile saved by cmi login. */
function serverNamed(command: Command, env: NodeJS.ProcessEnv = cliEnv()): boolean {
  const options = globals(command);
  if (options.url !== undefined || options.profile !== undefined || named(env.CMI_URL) || named(env.CMI_PROFILE)) return true;
  return readProfile(undefined, env) !== undefined;
}

function child(parent: Command, name: string): Command {
  const found = parent.commands.find((command) => command.name() === name);
  if (found === undefined) throw new Error(`old-spellings.ts: no command "${name}" under "${parent.name()}"`);
  return found;
}

/** Registers every old spelling on `program`, after the commands that replace them. */
export function addOldSpellings(program: Command): void {
  for (const { old, now, server, withoutServer, note } of OLD_SPELLINGS) {
    const path = old.split(' ');
    const verb = path.pop()!;
    const group = path.reduce(child, program);
    if (withoutServer) {
      child(group, verb).hook('preAction', (_command, action) => {
        if (!serverNamed(action)) {
          throw new OldSpelling(`"cmi ${old}" with no server named is now "cmi ${now}" (a server: give --url URL or CMI_URL, --profile NAME, or save one with cmi login)`);
        }
      });
      continue;
    }
    const message = `"cmi ${old}" is now "cmi ${now}"${server === undefined ? '' : ` (or "cmi ${server}" on a server)`}${note === undefined ? '' : `; ${note}`}`;
    group
      .command(verb, { hidden: true })
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .argument('[arguments...]')
      .action(() => {
        throw new OldSpelling(message);
      });
  }
}
