/**
 * What the tracker's stores share (docs/architecture.md#tracker-stores): an error's row as its
 * record, the list's filters as SQL, the id lists of bulk changes, and the tracker's transactions.
 */

import { type Expression, type ExpressionBuilder, type RawBuilder, type Selectable, sql, type SqlBool, type Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import { retryingConflicts } from '../db/conflicts.js';
import type { Dialect, PerDatabase } from '../db/dialects/dialect.js';
import { likeContaining } from '../db/dialects/text/text.js';
import { BACKTRACE_SEARCHED } from '../db/migrations/043_error_search_backtrace.js';
import type { InfrastructureErrorsTable, Schema } from '../db/schema.js';
import type { ErrorFilters, InfrastructureError, SearchCondition } from './infrastructure-error.js';

export function toRecord(row: Selectable<InfrastructureErrorsTable>): InfrastructureError {
  return {
    id: Number(row.id),
    backtrace: row.backtrace,
    counter: Number(row.counter),
    created_at: new Date(row.created_at),
    error_class: row.error_class,
    fingerprint: row.fingerprint,
    message: row.message,
    reported: Number(row.reported) === 1,
    updated_at: new Date(row.updated_at),
  };
}

const containsPattern = (text: string) => likeContaining(text.toLowerCase());

/**
 * A query of the ids of the errors whose folded class, message or backtrace's first BACKTRACE_SEARCHED characters
 * (`dialect.text.lowerFunction`) hold
 * `folded` (already lower-cased), answered from the text index of migrations 008 and 009, for
 * `id in (...)`. Undefined where the caller should compare each error's own folded text instead: where
 * the index cannot answer this text, or when `few` is false (many matches, so the list is walked in
 * order) and the database's planner would read every match rather than walk (docs/architecture.md#the-page).
 */
export const errorIdsContaining: PerDatabase<(folded: string, few: boolean) => RawBuilder<{ id: number }> | undefined> = {
  // A trigram index answers texts of 3 characters or more, as a phrase: the trigrams in a row.
  // SQLite's planner cannot tell how many that is, so many matches are left to the walk.
  sqlite: (folded, few) =>
    (!few || [...folded].length < 3 ? undefined : sql<{ id: number }>`select rowid as id from error_search where error_search match ${`"${folded.replaceAll('"', '""')}"`}`),

  // Any text, few matches or many: error_search's statistics tell the planner how many match, and
  // it walks the list or reads the matches as they say. (Trigrams find a text of 3 characters or
  // more; a shorter one reads the narrow table whole, still less than the errors.)
  postgres: (folded) => {
    const pattern = likeContaining(folded);
    return sql<{ id: number }>`select id from error_search where error_class like ${pattern} escape '\\' or message like ${pattern} escape '\\' or backtrace like ${pattern} escape '\\'`;
  },
};

/** The ids of the errors whose triage the filters `status` and `assignee` select. */
export function triagedAs(eb: ExpressionBuilder<Schema, 'infrastructure_errors'>, filters: ErrorFilters) {
  let triaged = eb.selectFrom('error_triage').select('error_triage.error_id');
  if (filters.status !== undefined) triaged = triaged.where('error_triage.triage_status', '=', filters.status);
  if (filters.assignee === 'none') triaged = triaged.where('error_triage.assignee_id', 'is', null);
  else if (filters.assignee !== undefined) triaged = triaged.where('error_triage.assignee_id', '=', filters.assignee);
  return triaged;
}

/** Whether the only filters are the triage's (`status`, `assignee`). */
export const onlyTriageFilters = (filters: ErrorFilters): boolean =>
  (filters.status !== undefined || filters.assignee !== undefined)
  && Object.entries(filters).every(([name, value]) => name === 'status' || name === 'assignee' || value === undefined);

/**
 * Which filters a list reads from their own index (`id in (...)`), the others tested on each error of
 * the walk or the driving filter's rows: `true` all of them, `false` none, or those named.
 */
export type ReadFromIndex = boolean | ReadonlySet<'status' | 'q' | 'host' | 'component' | 'errorClass'>;

/**
 * `searchKey`: the part of `q` (folded) that the text index is asked for, when the store chose one
 * (searchKeyOf); each error the index gives is then tested for the whole of `q`.
 */
export function filtered(eb: ExpressionBuilder<Schema, 'infrastructure_errors'>, filters: ErrorFilters, dialect: Dialect, fromIndex: ReadFromIndex = true, searchKey?: string) {
  const reads = (name: 'status' | 'q' | 'host' | 'component' | 'errorClass') => (typeof fromIndex === 'boolean' ? fromIndex : fromIndex.has(name));
  // Tested on each error of the walk, as chosen. PostgreSQL would otherwise join the `exists` as a
  // semi-join and, by statistics that lag an incident's new errors (a host it never saw estimated at
  // one error), read all of the value's errors and sort them, a cost growing with the incident.
  // `offset 0` keeps the subquery a test per row (docs/architecture.md#the-page).
  const perError = dialect.choose({ sqlite: false, postgres: true });
  const eachError = <Q extends { offset(offset: number): Q }>(subquery: Q): Q => (perError ? subquery.offset(0) : subquery);
  const conditions = [];
  if (filters.status !== undefined || filters.assignee !== undefined) {
    // Every error has one triage row (migration 023). Few match: read their ids from the status or
    // assignee index (`id in`). Many: test the errors in the list's order, each by its triage row.
    const triaged = triagedAs(eb, filters);
    conditions.push(reads('status') ? eb('id', 'in', triaged) : eb.exists(eachError(triaged.whereRef('error_triage.error_id', '=', 'infrastructure_errors.id'))));
  }
  if (filters.reported !== undefined) conditions.push(eb('reported', '=', filters.reported ? 1 : 0));
  if (filters.errorClass !== undefined) {
    // Named apart from the others (a list's choice, ReadFromIndex), the class is tested on each error
    // of the walk: SQLite, with no statistics, would otherwise read all of the class's errors from
    // its index and sort them (`+` keeps a column's index out of SQLite's plan; PostgreSQL chooses by its statistics).
    const walked = typeof fromIndex !== 'boolean' && !fromIndex.has('errorClass') && dialect.choose({ sqlite: true, postgres: false });
    conditions.push(walked ? sql<SqlBool>`+error_class = ${filters.errorClass}` : eb('error_class', '=', filters.errorClass));
  }
  if (filters.since !== undefined) conditions.push(eb('updated_at', '>=', filters.since.toISOString()));
  if (filters.until !== undefined) conditions.push(eb('updated_at', '<=', filters.until.toISOString()));
  if (filters.q !== undefined) {
    // The ids of the matches from the text index, when few match or the database's planner can tell
    // how many do. Otherwise test the errors in the list's order and stop at the page's end.
    const folded = filters.q.toLowerCase();
    const key = searchKey ?? folded;
    const indexed = dialect.choose(errorIdsContaining)(key, reads('q'));
    const lower = sql.raw(dialect.text.lowerFunction);
    const pattern = containsPattern(filters.q);
    const tested = eb.or([
      sql<boolean>`${lower}(error_class) like ${pattern} escape '\\'`,
      sql<boolean>`${lower}(message) like ${pattern} escape '\\'`,
      sql<boolean>`${lower}(substr(backtrace, 1, ${sql.lit(BACKTRACE_SEARCHED)})) like ${pattern} escape '\\'`,
    ]);
    const found = indexed && sql<boolean>`${sql.ref('infrastructure_errors.id')} in (${indexed})`;
    conditions.push(!found ? tested : key === folded ? found : eb.and([found, tested]));
  }
  for (const dimension of ['host', 'component'] as const) {
    const value = filters[dimension];
    if (value === undefined) continue;
    const seen = eb.selectFrom('error_breakdown').select('error_breakdown.error_id')
      .where('error_breakdown.dimension', '=', dimension)
      .where('error_breakdown.value', '=', value);
    // Few errors seen there: read them from the (dimension, value, error_id) index (`id in`). Many:
    // test the errors in the list's order, each by its breakdown key, and stop at the page's end.
    conditions.push(reads(dimension) ? eb('id', 'in', seen) : eb.exists(eachError(seen.whereRef('error_breakdown.error_id', '=', 'infrastructure_errors.id'))));
  }
  if (filters.search !== undefined) conditions.push(searched(eb, filters.search, dialect));
  return eb.and(conditions);
}

/**
 * `value` against `column` exactly, or as a glob where it holds `*` (any run of characters), case
 * sensitive on both databases: SQLite's GLOB (its `?` and `[` taken literally), PostgreSQL's LIKE.
 */
const matchesValue: PerDatabase<(column: Expression<unknown>, value: string) => Expression<SqlBool>> = {
  sqlite: (column, value) => (value.includes('*')
    ? sql<SqlBool>`${column} glob ${value.replace(/[[?]/g, (c) => `[${c}]`)}`
    : sql<SqlBool>`${column} = ${value}`),
  postgres: (column, value) => (value.includes('*')
    ? sql<SqlBool>`${column} like ${value.replace(/[\\%_]/g, (c) => `\\${c}`).replaceAll('*', '%')} escape '\\'`
    : sql<SqlBool>`${column} = ${value}`),
};

/** The search language's conditions that are not the list's own filters (tracker/search-plan.ts, docs/search.md), all holding. */
export function searched(eb: ExpressionBuilder<Schema, 'infrastructure_errors'>, search: readonly SearchCondition[], dialect: Dialect): Expression<SqlBool> {
  const any = (column: Expression<unknown>, values: readonly string[]) => eb.or(values.map((value) => dialect.choose(matchesValue)(column, value)));
  const seenIn = (dimension: string) => eb.selectFrom('error_breakdown as seen').select('seen.error_id')
    .whereRef('seen.error_id', '=', 'infrastructure_errors.id').where('seen.dimension', '=', dimension as 'host');
  const triage = () => eb.selectFrom('error_triage as t').select('t.error_id').whereRef('t.error_id', '=', 'infrastructure_errors.id');
  const one = (condition: SearchCondition): Expression<SqlBool> => {
    const maybeNot = (negated: boolean, e: Expression<SqlBool>) => (negated ? eb.not(e) : e);
    switch (condition.kind) {
      case 'column':
        return maybeNot(condition.negated, any(sql.ref(`infrastructure_errors.${condition.column}`), condition.values));
      case 'seen':
        // A breakdown row of no host or component holds '' (tracker-batch.store.ts).
        return maybeNot(condition.negated, eb.exists(seenIn(condition.dimension).where((inner) => inner.and([
          inner('seen.value', '<>', ''), any(sql.ref('seen.value'), condition.values)]))));
      case 'has':
        return maybeNot(condition.negated, eb.exists(seenIn(condition.dimension).where('seen.value', '<>', '')));
      case 'status':
        return maybeNot(condition.negated, eb.exists(triage().where('t.triage_status', 'in', condition.statuses)));
      case 'assigned': {
        const whom = eb.or([
          ...(condition.none ? [sql<SqlBool>`t.assignee_id is null`] : []),
          ...(condition.ids.length > 0 ? [sql<SqlBool>`t.assignee_id in (${sql.join(condition.ids)})`] : []),
          ...(condition.logins.length > 0 ? [sql<SqlBool>`t.assignee_id in (select u.id from users as u where lower(u.login) in (${sql.join(condition.logins)}))`] : []),
        ]);
        return maybeNot(condition.negated, eb.exists(triage().where(() => whom)));
      }
      case 'reported':
        return eb('infrastructure_errors.reported', '=', condition.value ? 1 : 0);
      case 'counter':
        return eb('infrastructure_errors.counter', condition.operator, condition.value);
      case 'time':
        return eb(`infrastructure_errors.${condition.column}`, condition.operator, condition.at.toISOString());
      case 'not':
        return eb.not(eb.and(condition.conditions.map(one)));
    }
  };
  return eb.and(search.map(one));
}

/** `column` is one of `ids`, given as one parameter, so 100 000 ids are one statement on either database. */
export const idIn: PerDatabase<(column: string, ids: readonly number[]) => Expression<SqlBool>> = {
  sqlite: (column, ids) => sql<SqlBool>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(ids)}))`,
  // An array the planner knows the length of: a hashed `= any` over a scan, or index probes for a few.
  postgres: (column, ids) => sql<SqlBool>`${sql.ref(column)} = any(${`{${ids.join(',')}}`}::integer[])`,
};

/**
 * Transactions writing the tracker: each run again when PostgreSQL rolls it back for a deadlock with
 * another (db/conflicts.ts), and its end moves the tracker's version (Database.transactionEnded), so
 * cached pages of the list go at once (docs/architecture.md#how-cached-pages-stay-right).
 */
export const trackerTransactions = (database: Database) => <T>(work: (trx: Transaction<Schema>) => Promise<T>): Promise<T> =>
  retryingConflicts(() => database.db.transaction().execute(work)).finally(() => database.transactionEnded('tracker'));
