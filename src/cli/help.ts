import type { Command } from 'commander';
import { RemoteUsageError } from './remote/connection.js';

/** `cmi help <command> [<subcommand>]`: the help of any command, however deep (`cmi help users ls`). */
export function addHelpCommand(program: Command): void {
  program.helpCommand(false);
  program
    .command('help [command...]')
    .description('show the help of a command, e.g. cmi help users ls')
    .action((names: string[]) => {
      let target = program;
      for (const name of names) {
        const next = target.commands.find((command) => command.name() === name || command.aliases().includes(name));
        if (next === undefined) throw new RemoteUsageError(`no command "${names.join(' ')}" (cmi help lists them)`);
        target = next;
      }
      target.outputHelp();
    });
}
