import type pg from 'pg';
import { loadPg } from './pg-module.js';

export const CHANGE_CHANNEL = 'cmi_data_changed';

/** How often an idle listening connection proves it is still alive, in milliseconds. */
const PING_EVERY_MS = 30_000;

/**
 * Listens on PostgreSQL's `cmi_data_changed` channel (see migration 003) and counts the changes to
 * this installation's schema. `version()` is undefined while not listening, so nothing is cached
 * on a guess; a reconnect counts as a change, since notifications may have been missed. TCP
 * keep-alive and a periodic query find a connection that died without a word (NAT, failover).
 */
export function changeListener(connectionString: string) {
  let changes = 0;
  let listening = false;
  let closed = false;
  let client: pg.Client | undefined;
  let ping: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    if (closed) return;
    const next = new (loadPg().Client)({ connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
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
        if (message.channel === CHANGE_CHANNEL && message.payload === schema) changes += 1;
      });
      await next.query(`LISTEN ${CHANGE_CHANNEL}`);
      if (gaveUp) return;
      changes += 1;
      listening = true;
      ping = setInterval(() => void next.query('select 1').catch(retry), PING_EVERY_MS);
      ping.unref();
    } catch {
      retry();
    }
  }
  void connect();

  return {
    version: (): number | undefined => (listening ? changes : undefined),
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
