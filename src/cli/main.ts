import cluster from 'node:cluster';
import { processIo } from './common/output.js';
import { runCliEnded } from './run.js';

// The `cmi` command: run.ts's runCli on the process's own arguments, environment, input and output
// (docs/cli.md#running-in-process). A code the command chose or a failure's becomes the process's; a
// run that ends with 0 leaves process.exitCode as it is (`cmi serve` sets it as its workers exit).
const ended = await runCliEnded(process.argv.slice(2), processIo());
if (ended.code !== 0 || ended.failed) process.exitCode = ended.code;
// A worker's IPC channel would keep it alive; its primary learns of the failure from the exit.
if (ended.failed && cluster.isWorker) process.exit(1);
