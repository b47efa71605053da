import { type Command, Option } from 'commander';
import { CmiApiError, CmiConnectionError, CmiError } from '../../client/index.js';
import { UsageError } from '../common/usage-error.js';
import { connect, EXIT, type GlobalOptions, RemoteUsageError } from './connection.js';
import type { RawFormat } from './records-output.js';
import { type Output, write } from '../common/output.js';
import { cliEnv } from '../common/io.js';

/**
 * How a remote command of `cmi` (docs/cli.md) is declared and run: it talks to a cmi (or OnApp) server
 * over HTTP with the client of src/client/, where the commands of `cmi local ...` act on the configured
 * database. Each group declares its own (users.ts, errors.ts, deliveries.ts, login.ts).
 */

import { connectionOptions } from './connection-options.js';

export { connectionOptions };

/** The connection options given to the program and to the command, the command's winning. */
export function globals(command: Command): GlobalOptions {
  const own = command.opts<GlobalOptions>();
  const program = (command.parent?.parent ?? command.parent)?.opts<GlobalOptions>() ?? {};
  return { ...program, ...Object.fromEntries(Object.entries(own).filter(([, v]) => v !== undefined)) };
}

export function rawOptions(command: Command): Command {
  return command
    .addOption(new Option('--json', 'print the JSON body instead of a table').conflicts('xml'))
    .option('--xml', 'talk XML to the server and print the XML body');
}

export const rawFormat = (options: { json?: boolean; xml?: boolean }): RawFormat => (options.json ? 'json' : options.xml ? 'xml' : undefined);

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}`;

export function remote(command: Command, description: string, ...example: string[]): Command {
  return connectionOptions(command.description(description)).addHelpText('after', examples(...example));
}

/**
 * Runs a remote command: connects with the options (with `credentials: 'none'`, for a public call, to the
 * server alone), prints what `run` answers through the one writer (common/output.ts).
 */
export async function run(command: Command, xml: boolean | undefined, body: (connection: Awaited<ReturnType<typeof connect>>) => Promise<Output>, credentials: 'required' | 'none' = 'required'): Promise<void> {
  const connection = await connect({ ...globals(command), xml }, cliEnv(), 'read', credentials);
  write(await body(connection));
}

/** What the program's catch prints for an error of a remote command, and the exit code; undefined for others. */
export function remoteFailure(error: unknown): { lines: string[]; code: number } | undefined {
  if (error instanceof RemoteUsageError) return { lines: [`cmi: ${error.message}`], code: EXIT.usage };
  if (error instanceof CmiApiError) {
    const lines = Object.entries(error.errors).flatMap(([field, list]) => list.map((m) => `cmi: ${field === 'base' ? '' : `${field} `}${m}`));
    if (lines.length === 0) lines.push(`cmi: the server answered ${error.status}`);
    if (error.status >= 500 && error.requestId !== undefined && !lines.some((line) => line.includes(error.requestId!))) lines.push(`cmi: request id ${error.requestId}`);
    if (error.retryAfter !== undefined) lines.push(`cmi: try again in ${error.retryAfter} s`);
    return { lines, code: EXIT.refused };
  }
  if (error instanceof CmiConnectionError) return { lines: [`cmi: ${error.message}`], code: EXIT.unreachable };
  if (error instanceof CmiError) return { lines: [`cmi: ${error.message}`], code: EXIT.refused };
  if (error instanceof UsageError && 'exitCode' in error) return { lines: [`cmi: ${error.message}`], code: EXIT.usage };
  return undefined;
}

