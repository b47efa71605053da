import type { Command } from 'commander';

/** --url, --user, --password-stdin, --profile, --timeout: on the program (before the command) and on each remote command. */
export function connectionOptions(command: Command): Command {
  return command
    .option('--url <url>', 'the server, e.g. https://cmi.example.com (env CMI_URL)')
    .option('--user <login>', 'log in as this login or email (env CMI_USER)')
    .option('--password-stdin', 'read the password from standard input (else env CMI_PASSWORD or CMI_API_KEY, or the profile)')
    .option('--profile <name>', 'a profile saved by cmi login (env CMI_PROFILE; default: the first saved)')
    .option('--timeout <seconds>', 'give up on a request after this long (default 30)')
    .option('-q, --quiet', 'no progress bar on a terminal');
}
