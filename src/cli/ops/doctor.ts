import type { Command } from 'commander';
import { exact, human, type Line, styled, write } from '../common/output.js';
import { type CheckResult, runChecks } from './doctor-checks.js';
import { chooseExitCode, cliEnv } from '../common/io.js';

const STYLE = { ok: 'green', warn: 'yellow', fail: 'red' } as const;

function lineOf(result: CheckResult): Line {
  const text = `${result.check}: ${result.message}${result.fix === null ? '' : `; fix: ${result.fix}`}`;
  return [styled(STYLE[result.state], result.state.padEnd(5)), { text }];
}

/**
 * `cmi doctor`: checks what a running cmi needs, one line a check, and exits 1 when any fails
 * (docs/operations.md#cmi-doctor). Warnings do not fail it.
 */
export function addDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check the configuration, the database (reachable, its schema, its disk, its clock), the webhook destinations and the enabled identity providers, and say what to fix')
    .option('--json', 'print the checks as JSON')
    .action(async (options: { json?: boolean }) => {
      const results = await runChecks(cliEnv());
      const failed = results.some((result) => result.state === 'fail');
      write(options.json ? exact(JSON.stringify({ ok: !failed, checks: results })) : human(...results.map(lineOf)));
      if (failed) chooseExitCode(1);
    });
}
