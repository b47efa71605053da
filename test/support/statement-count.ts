import type { KyselyPlugin } from 'kysely';

/**
 * A plugin that changes nothing and calls `counted` once a statement run through its Kysely: as the
 * result arrives, since a statement compiled once (a record's) never passes transformQuery.
 */
export const countingStatements = (counted: () => void): KyselyPlugin => ({
  transformQuery: ({ node }) => node,
  transformResult: ({ result }) => {
    counted();
    return Promise.resolve(result);
  },
});
