import type { Kysely, KyselyPlugin, QueryResult } from 'kysely';

export interface Pause {
  /** Settles once a statement matched and the next statement is held, before it takes a connection. */
  reached: Promise<void>;
  /** Lets the held statement go on. */
  release(): void;
}

/**
 * Holds one statement back so a test decides what runs in between, on the real database: `pauseAfter`
 * watches the statements run through `attach`'s Kysely; after the first whose result `matches`, the
 * next one waits, before it takes a connection (so other requests, on SQLite's one connection too,
 * run meanwhile) until `release()`.
 */
export function statementGate() {
  let pending: { matches: (result: QueryResult<unknown>) => boolean; armed: boolean; reached: () => void; released: Promise<void> } | undefined;
  const watch: KyselyPlugin = {
    transformQuery: ({ node }) => node,
    transformResult({ result }) {
      if (pending && !pending.armed && pending.matches(result)) pending.armed = true;
      return Promise.resolve(result);
    },
  };
  return {
    /** The same database through the gate. */
    attach<DB>(db: Kysely<DB>): Kysely<DB> {
      const gated = db.withPlugin(watch);
      const executor = gated.getExecutor();
      const provide = executor.provideConnection.bind(executor);
      executor.provideConnection = async (consumer) => {
        const held = pending;
        if (held?.armed) {
          pending = undefined;
          held.reached();
          await held.released;
        }
        return provide(consumer);
      };
      return gated;
    },

    pauseAfter(matches: (result: QueryResult<unknown>) => boolean): Pause {
      let reached!: () => void;
      let release!: () => void;
      const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      pending = { matches, armed: false, reached, released };
      return { reached: reachedPromise, release };
    },
  };
}

export type StatementGate = ReturnType<typeof statementGate>;
