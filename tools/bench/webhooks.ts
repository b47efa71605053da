/**
 * Reports and alerts (docs/reporting-and-alerts.md; docs/benchmarks.md#webhooks): counts, not timings.
 *  F. A storm of 50,000 occurrences of one new error within 10 s, through two `cmi serve` processes on
 *     one database: exactly 1 new-error alert and at most 1 spike alert reach the receiver.
 *  G. A receiver down for the first 30 s of a run that raises 200 distinct new errors, two processes:
 *     all 200 alerts arrive once it is back, and any duplicate carries the same delivery id.
 * Part of `npm run bench` (`--only webhooks`); SQLite, and PostgreSQL with `--postgres URL`. A count
 * that is not as required goes into `failures` (the suite then exits non-zero).
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningServer, startServer } from '../shared/server-process.js';
import { loadClient } from '../shared/report-load.js';
import { BASIC, type DatabaseKind, DATABASE_NAMES, freshDatabase, seedUsers, withDatabase } from './datasets.js';
import { provenance, type RunInfo } from './document.js';
import { fmt } from './support.js';

export interface WebhooksOptions {
  info: RunInfo;
  kinds: DatabaseKind[];
  postgres?: string;
  quick: boolean;
  failures: string[];
}

const PORTS = [3351, 3352];
const RECEIVER_PORT = 3353;
const SECRET = 'bench-webhook-secret-0123456789';
const BASE = '/sysadmin_tools/infrastructure/errors';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Arrival {
  event: string;
  errorId: number;
  deliveryId: string;
  signed: boolean;
}

/** A receiver on RECEIVER_PORT that counts what arrives and checks each signature; it can be down and come back. */
function receiver() {
  const arrivals: Arrival[] = [];
  let server: http.Server | undefined;
  return {
    arrivals,
    async start() {
      server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const parsed = JSON.parse(body) as { event: string; infrastructure_error: { id: number } };
          const expected = `sha256=${createHmac('sha256', SECRET).update(`${String(req.headers['x-cmi-timestamp'])}.${body}`).digest('hex')}`;
          arrivals.push({ event: parsed.event, errorId: parsed.infrastructure_error.id, deliveryId: String(req.headers['x-cmi-delivery']), signed: req.headers['x-cmi-signature'] === expected });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => server!.listen(RECEIVER_PORT, '127.0.0.1', resolve));
    },
    async stop() {
      if (!server) return;
      server.closeAllConnections();
      await new Promise((resolve) => server!.close(resolve));
      server = undefined;
    },
  };
}

/** Two `cmi serve` processes (dist/, as `npm start` runs) on `url`, one per core, sending alerts to the receiver. */
async function serveTwo(url: string, spool: string): Promise<RunningServer[]> {
  const env = {
    DATABASE_URL: url,
    CMI_SPOOL_DIR: spool,
    CMI_ERRORS_RATE_LIMIT: '1000000',
    CMI_ALERT_WEBHOOK_URL: `http://127.0.0.1:${RECEIVER_PORT}/alerts`,
    CMI_WEBHOOK_SECRET: SECRET,
  };
  return [
    await startServer(env, [], { port: PORTS[0], cores: '0', program: 'built' }),
    await startServer(env, [], { port: PORTS[1], cores: '1', program: 'built' }),
  ];
}

const pendingOf = (url: string) => withDatabase(url, async ({ db }) =>
  Number((await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number | string>().as('n')).where('state', '=', 'pending').executeTakeFirstOrThrow()).n));

/** Waits until the outbox holds nothing pending and the receiver has had `atLeast` arrivals, or `limitMs` passed. */
async function drained(url: string, arrivals: Arrival[], atLeast: number, limitMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    if (arrivals.length >= atLeast && (await pendingOf(url)) === 0) break;
    await sleep(250);
  }
  return (performance.now() - started) / 1000;
}

const report = (tag: string) => ({ error_class: 'BenchStormError', message: `disk full on ${tag}`, backtrace: `src/storage/volume.ts:12:in 'write${tag}'`, host: 'hv-01' });

/** F: 50,000 reports of one new error, paced over 10 s, half to each process. */
async function storm(kind: DatabaseKind, postgres: string | undefined, total: number, spool: string): Promise<{ row: string; ok: boolean }> {
  const database = await freshDatabase(kind, postgres);
  const hook = receiver();
  await hook.start();
  let servers: RunningServer[] = [];
  try {
    await seedUsers(database.url, 1);
    servers = await serveTwo(database.url, spool);
    const clients = servers.map((server) => loadClient(server.baseUrl, BASIC, 16));
    const started = performance.now();
    const ticks = 100;
    let acknowledged = 0;
    const sent: Array<Promise<void>> = [];
    // Sent on schedule whatever the answers (the clients queue what their sockets cannot take yet).
    for (let tick = 0; tick < ticks; tick++) {
      const due = started + tick * 100;
      if (performance.now() < due) await sleep(due - performance.now());
      for (let k = 0; k < total / ticks; k++) {
        sent.push(clients[k % 2]!.post(`${BASE}.json`, report('storm')).then((answer) => {
          if (answer.status === 200 || answer.status === 201) acknowledged += 1;
        }));
      }
    }
    await Promise.all(sent);
    const seconds = (performance.now() - started) / 1000;
    for (const client of clients) client.close();
    await drained(database.url, hook.arrivals, 1, 30_000);
    await sleep(3000); // anything late would arrive within the poll interval
    const newAlerts = hook.arrivals.filter((a) => a.event === 'new').length;
    const spikes = hook.arrivals.filter((a) => a.event === 'spike').length;
    const signed = hook.arrivals.every((a) => a.signed);
    const ok = newAlerts === 1 && spikes <= 1 && signed && acknowledged === total;
    return { ok, row: `| ${DATABASE_NAMES[kind]} | ${fmt(total)} | ${fmt(acknowledged)} | ${seconds.toFixed(1)} | ${newAlerts} | ${spikes} | ${signed ? 'yes' : 'no'} |` };
  } finally {
    for (const server of servers) await server.stop();
    await hook.stop();
    await database.drop();
  }
}

/** G: 200 distinct new errors over the first 30 s, the receiver down meanwhile, then back. */
async function outage(kind: DatabaseKind, postgres: string | undefined, errors: number, downSeconds: number, spool: string): Promise<{ row: string; ok: boolean }> {
  const database = await freshDatabase(kind, postgres);
  const hook = receiver();
  let servers: RunningServer[] = [];
  try {
    await seedUsers(database.url, 1);
    servers = await serveTwo(database.url, spool);
    const clients = servers.map((server) => loadClient(server.baseUrl, BASIC, 4));
    const started = performance.now();
    let acknowledged = 0;
    for (let k = 0; k < errors; k++) {
      const due = started + (k * downSeconds * 1000) / errors;
      if (performance.now() < due) await sleep(due - performance.now());
      const answer = await clients[k % 2]!.post(`${BASE}.json`, report(`outage-${k}`));
      if (answer.status === 201) acknowledged += 1;
    }
    for (const client of clients) client.close();
    const rest = started + downSeconds * 1000 - performance.now();
    if (rest > 0) await sleep(rest);
    await hook.start();
    const waited = await drained(database.url, hook.arrivals, errors, 300_000);
    await sleep(2000);
    const distinctErrors = new Set(hook.arrivals.map((a) => a.errorId)).size;
    const byDelivery = new Map<string, number>();
    for (const a of hook.arrivals) byDelivery.set(a.deliveryId, a.errorId);
    // A duplicate with a new id would be two delivery ids for one error.
    const idsPerError = new Map<number, Set<string>>();
    for (const a of hook.arrivals) (idsPerError.get(a.errorId) ?? idsPerError.set(a.errorId, new Set()).get(a.errorId)!).add(a.deliveryId);
    const newIdDuplicates = [...idsPerError.values()].filter((ids) => ids.size > 1).length;
    const duplicates = hook.arrivals.length - byDelivery.size;
    const signed = hook.arrivals.every((a) => a.signed && a.event === 'new');
    const ok = acknowledged === errors && distinctErrors === errors && newIdDuplicates === 0 && signed;
    return {
      ok,
      row: `| ${DATABASE_NAMES[kind]} | ${errors} | ${acknowledged} | ${downSeconds} | ${hook.arrivals.length} | ${distinctErrors} | ${duplicates} | ${newIdDuplicates} | ${waited.toFixed(1)} |`,
    };
  } finally {
    for (const server of servers) await server.stop();
    await hook.stop();
    await database.drop();
  }
}

export async function webhooksSection(options: WebhooksOptions): Promise<string> {
  const total = options.quick ? 10_000 : 50_000;
  const errors = options.quick ? 40 : 200;
  const downSeconds = options.quick ? 6 : 30;
  const spool = mkdtempSync(join(tmpdir(), 'cmi-bench-webhooks-'));
  const storms: string[] = [];
  const outages: string[] = [];
  const started = performance.now();
  try {
    for (const kind of options.kinds) {
      console.log(`webhooks F on ${kind}`);
      const f = await storm(kind, options.postgres, total, spool);
      storms.push(f.row);
      if (!f.ok) options.failures.push(`webhooks F on ${kind}: ${f.row}`);
      console.log(f.row);
      console.log(`webhooks G on ${kind}`);
      const g = await outage(kind, options.postgres, errors, downSeconds, spool);
      outages.push(g.row);
      if (!g.ok) options.failures.push(`webhooks G on ${kind}: ${g.row}`);
      console.log(g.row);
    }
  } finally {
    rmSync(spool, { recursive: true, force: true });
  }
  return `
## Webhooks

${provenance(options.info)} ${((performance.now() - started) / 1000).toFixed(0)} s in all. Counts, not timings
(docs/reporting-and-alerts.md). Two \`cmi serve\` processes (dist/, as \`npm start\` runs) on one database,
pinned to core 0 and core 1, every setting at its default but \`CMI_ALERT_WEBHOOK_URL\` (a receiver of the
bench's own on 127.0.0.1, answering 204 and checking every signature) and \`CMI_WEBHOOK_SECRET\`: a spike
is more than 100 occurrences within 60 s, the cooldown an hour, the outbox read each second, retries from
1 s doubling.

F: ${fmt(total)} reports of one new error, sent on a schedule of 10 s (${fmt(total / 100)} every 100 ms, half to each process,
16 keep-alive connections each, queued when all are busy); "seconds": until the last was answered (on this
shared 2-core machine the servers may take longer than the schedule); then the outbox drained. Required: exactly 1 new-error alert, at most 1 spike alert.

| database | reports | 2xx | seconds | new-error alerts | spike alerts | all signed |
|---|---|---|---|---|---|---|
${storms.join('\n')}

G: ${errors} distinct new errors, one every ${((downSeconds * 1000) / errors).toFixed(0)} ms over the first ${downSeconds} s, alternating between
the processes, while nothing listens on the receiver's port (each try refused); then the receiver starts.
Required: an alert for every error; a duplicate only with the delivery id of the first.
"seconds until all arrived" counts from the receiver's start (the backoff of each alert then was up to 32 s).

| database | errors | 201 | receiver down (s) | alerts received | distinct errors | duplicates (same id) | duplicates with a new id | seconds until all arrived |
|---|---|---|---|---|---|---|---|---|
${outages.join('\n')}
`;
}
