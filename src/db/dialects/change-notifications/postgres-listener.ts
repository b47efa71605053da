import type pg from 'pg';
import type { CachedData } from './write-counter.js';

/** The channel each kind of cached data's changes are notified on (migrations 003, 011 and 029). */
export const CHANGE_CHANNELS: Record<CachedData, string> = { users: 'cmi_data_changed', tracker: 'cmi_tracker_changed', alerts: 'cmi_alerts_changed' };

/** How often an idle listening connection proves it is still alive, in milliseconds. */
const PING_EVERY_MS = 30_000;
/** How long that proof may take before the connection counts as dead and is replaced, in milliseconds. */
const PING_DEADLINE_MS = 5_000;

/**
 * Listens on PostgreSQL's change channels (CHANGE_CHANNELS) and counts the changes to this
 * installation's schema on each. `version()` is undefined while not listening, so nothing is cached
 * on a guess; a reconnect counts as a change to everything, since notifications may have been missed. TCP
 * keep-alive and a periodic query find a connection that died without a word (NAT, failover).
 * `driver` is the pg module, as the connection loaded it (connection/pg-module.ts).
 */
export function changeListener(
  connectionString: string,
  driver: typeof pg,
  options: { statementTimeoutMs: number; ownBackends: ReadonlySet<number> } = { statementTimeoutMs: PING_DEADLINE_MS, ownBackends: new Set() },
) {
  const changes: Record<CachedData, number> = { users: 0, tracker: 0, alerts: 0 };
  // The users channel's notifications sent by other processes' connections (not by `ownBackends`, this
  // process's pool): what the credential cache follows, since this process drops its own changes itself.
  let othersCredentialChanges = 0;
  const barrierDeadlineMs = options.statementTimeoutMs;
  let listening = false;
  let closed = false;
  let client: pg.Client | undefined;
  /** Gives up the current connection and connects anew (the `retry` of the connection in use). */
  let dropConnection: (() => void) | undefined;
  let ping: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    if (closed) return;
    const next = new driver.Client({ connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    client = next;
    let gaveUp = false;
    // Runs once per connection, however many ways it fails (an error event and a rejected query).
    const retry = () => {
      if (gaveUp) return;
      gaveUp = true;
      listening = false;
      clearInterval(ping);
      next.removeAllListeners();
      next.on('error', () => {});
      next.end().catch(() => {});
      if (!closed) setTimeout(() => void connect(), 1000).unref();
    };
    next.on('error', retry);
    next.on('end', retry);
    dropConnection = retry;
    try {
      await next.connect();
      const { rows } = await next.query<{ schema: string }>('select current_schema() as schema');
      const schema = rows[0]?.schema;
      next.on('notification', (message) => {
        if (message.payload !== schema) return;
        if (message.channel === CHANGE_CHANNELS.users) {
          changes.users += 1;
          if (!options.ownBackends.has(message.processId)) othersCredentialChanges += 1;
        }
        // The tracker's notifications sent by this process's own pool are its own writes, which it has
        // counted already (or told as partial changes: WriteCounter.withheld): every write it makes to the
        // tracker's tables is counted in-process, kysely's as they complete, its raw statements' as their
        // transaction ends (tracker-sql.ts trackerTransactions, triage.store.ts). Heard again, they would empty its whole
        // cache for nothing. Any other connection's (another process, `cmi local`, psql) counts
        // (docs/architecture.md#how-cached-pages-stay-right).
        else if (message.channel === CHANGE_CHANNELS.tracker && !options.ownBackends.has(message.processId)) changes.tracker += 1;
        else if (message.channel === CHANGE_CHANNELS.alerts) changes.alerts += 1;
      });
      await next.query(`LISTEN ${CHANGE_CHANNELS.users}; LISTEN ${CHANGE_CHANNELS.tracker}; LISTEN ${CHANGE_CHANNELS.alerts}`);
      if (gaveUp) return;
      changes.users += 1;
      changes.tracker += 1;
      changes.alerts += 1;
      othersCredentialChanges += 1;
      listening = true;
      ping = setInterval(() => {
        // A connection that died without a word (half-open TCP) may not fail a query for many minutes,
        // while notifications are lost: no answer within PING_DEADLINE_MS counts as dead.
        const deadline = setTimeout(retry, PING_DEADLINE_MS);
        next.query('select 1').then(() => clearTimeout(deadline), () => {
          clearTimeout(deadline);
          retry();
        });
      }, PING_EVERY_MS);
      ping.unref();
    } catch {
      retry();
    }
  }
  void connect();

  // The barrier: PostgreSQL signals every listening session as a notifying transaction commits, before
  // the committer hears its COMMIT answered, and a session hands over the notifications it was signalled
  // before it reads its next query. So once a query sent now on the listening connection is answered,
  // every notification committed before it was sent has been counted (pg emits them as it reads them,
  // before the query's answer). Callers within one turn of the event loop share one query; those who
  // come while it is out wait for the next (docs/security.md#suspend-now-means-now).
  let waiting: { promise: Promise<void>; resolve: () => void } | undefined;
  let queryOut = false;
  function sendBarrier(): void {
    const batch = waiting;
    if (batch === undefined) return;
    waiting = undefined;
    const connection = client;
    if (!listening || connection === undefined) return batch.resolve();
    queryOut = true;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      queryOut = false;
      batch.resolve();
      if (waiting !== undefined) sendBarrier();
    };
    // No answer in time: the connection cannot be trusted to have counted what it should; listening
    // ends (versions undefined) until a new connection listens, which counts as a change to everything.
    const deadline = setTimeout(() => {
      if (client === connection) dropConnection?.();
      finish();
    }, barrierDeadlineMs);
    connection.query('select 1').then(finish, () => {
      if (client === connection) dropConnection?.();
      finish();
    });
  }

  return {
    version: (data: CachedData): number | undefined => (listening ? changes[data] : undefined),
    /** Changes to users and revoked sessions notified by other processes (and each reconnect); undefined while not listening. */
    othersCredentialChanges: (): number | undefined => (listening ? othersCredentialChanges : undefined),
    /**
     * Settles once every notification committed before this call has been counted; undefined when not
     * listening (nothing to wait for: versions are undefined).
     */
    heard(): Promise<void> | undefined {
      if (!listening) return undefined;
      if (waiting === undefined) {
        let resolve = () => {};
        const promise = new Promise<void>((settle) => (resolve = settle));
        waiting = { promise, resolve };
        if (!queryOut) queueMicrotask(sendBarrier);
      }
      return waiting.promise;
    },
    async close(): Promise<void> {
      closed = true;
      listening = false;
      waiting?.resolve();
      waiting = undefined;
      clearInterval(ping);
      const last = client;
      last?.removeAllListeners();
      last?.on('error', () => {});
      await last?.end().catch(() => {});
    },
  };
}
