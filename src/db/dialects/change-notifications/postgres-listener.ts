import type pg from 'pg';
import type { CachedData } from './write-counter.js';

/** The channel each kind of cached data's changes are notified on (migrations 003 and 011). */
export const CHANGE_CHANNELS: Record<CachedData, string> = { users: 'cmi_data_changed', tracker: 'cmi_tracker_changed' };

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
export function changeListener(connectionString: string, driver: typeof pg) {
  const changes: Record<CachedData, number> = { users: 0, tracker: 0 };
  let listening = false;
  let closed = false;
  let client: pg.Client | undefined;
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
    try {
      await next.connect();
      const { rows } = await next.query<{ schema: string }>('select current_schema() as schema');
      const schema = rows[0]?.schema;
      next.on('notification', (message) => {
        if (message.payload !== schema) return;
        if (message.channel === CHANGE_CHANNELS.users) changes.users += 1;
        else if (message.channel === CHANGE_CHANNELS.tracker) changes.tracker += 1;
      });
      await next.query(`LISTEN ${CHANGE_CHANNELS.users}; LISTEN ${CHANGE_CHANNELS.tracker}`);
      if (gaveUp) return;
      changes.users += 1;
      changes.tracker += 1;
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

  return {
    version: (data: CachedData): number | undefined => (listening ? changes[data] : undefined),
    async close(): Promise<void> {
      closed = true;
      listening = false;
      clearInterval(ping);
      const last = client;
      last?.removeAllListeners();
      last?.on('error', () => {});
      await last?.end().catch(() => {});
    },
  };
}
