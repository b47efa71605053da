import pg from 'pg';

export const CHANGE_CHANNEL = 'cmi_data_changed';

/**
 * Listens on PostgreSQL's `cmi_data_changed` channel (see migration 003) and counts the changes to
 * this installation's schema. `version()` is undefined while not listening, so nothing is cached
 * on a guess; a reconnect counts as a change, since notifications may have been missed.
 */
export function changeListener(connectionString: string) {
  let changes = 0;
  let listening = false;
  let closed = false;
  let client: pg.Client | undefined;

  async function connect(): Promise<void> {
    if (closed) return;
    const next = new pg.Client({ connectionString });
    client = next;
    const retry = () => {
      listening = false;
      next.removeAllListeners();
      next.end().catch(() => {});
      if (!closed) setTimeout(() => void connect(), 1000).unref();
    };
    next.on('error', retry);
    try {
      await next.connect();
      const { rows } = await next.query<{ schema: string }>('select current_schema() as schema');
      const schema = rows[0]?.schema;
      next.on('notification', (message) => {
        if (message.channel === CHANGE_CHANNEL && message.payload === schema) changes += 1;
      });
      await next.query(`LISTEN ${CHANGE_CHANNEL}`);
      changes += 1;
      listening = true;
      next.on('end', retry);
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
      await client?.end().catch(() => {});
    },
  };
}
