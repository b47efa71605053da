import { type ExpressionBuilder, type Kysely, type Selectable, type SelectQueryBuilder, sql, type SqlBool } from 'kysely';
import type { Database } from '../db/database.js';
import type { Dialect, PerDatabase } from '../db/dialects/dialect.js';
import type { ErrorCountDimension, InfrastructureErrorsTable, Schema } from '../db/schema.js';
import type { BreakdownDimension, Direction, ErrorFilters, ErrorSort, InfrastructureError } from './infrastructure-error.js';
import { errorIdsContaining, filtered, onlyTriageFilters, type ReadFromIndex, toRecord, triagedAs } from './tracker-sql.js';
import { TRIAGE_STATUSES } from './triage.js';

/**
 * A page is read either by walking the list's order and testing each error, which takes about
 * `all / matches` errors per row wanted, or by reading the matches' ids from the index of their
 * filter and sorting them, about one row a match, each a third of a walked row's cost. Whichever
 * reads less: the matches first when `matches² <= WALKED_ROW_COST * wanted * all`.
 */
const WALKED_ROW_COST = 3;

/** searchKeyOf counts each word's matches up to this many. */
const SEARCH_PROBE = 1_000;

/** A count driven by a host's or component's errors tests the other filters on each when they are at most this many. */
const PROBED_ROWS = 50_000;

/**
 * The `error_counts` row that holds how many errors `filters` select, when one does: none or one
 * equality filter (migration 007), or `reported` and one of class, host and component (migration 028).
 */
function countedBy(filters: ErrorFilters): { dimension: ErrorCountDimension; value: string } | undefined {
  const given = Object.entries(filters).filter(([, value]) => value !== undefined);
  if (given.length === 0) return { dimension: 'all', value: '' };
  const reported = filters.reported === undefined ? undefined : filters.reported ? '1' : '0';
  if (given.length > (reported === undefined ? 1 : 2)) return undefined;
  const paired = (dimension: 'error_class' | 'host' | 'component', value: string) =>
    ({ dimension: reported === undefined ? dimension : `${dimension}.${reported}` as const, value });
  if (filters.errorClass !== undefined) return paired('error_class', filters.errorClass);
  if (filters.host !== undefined) return paired('host', filters.host);
  if (filters.component !== undefined) return paired('component', filters.component);
  if (reported !== undefined && given.length === 1) return { dimension: 'reported', value: reported };
  return undefined;
}

/**
 * The filters tested on an error's own row (not its sort index's entry, its breakdown or its triage;
 * the class has an index of its own, `(error_class, updated_at, id)`, which the walk keeps).
 */
const ROW_FILTERS = ['reported', 'q', 'search'] as const;

/**
 * `walkBound`: a walk reads at most about this many errors of the list's order, those whose sort value
 * is at least (descending; at most, ascending) that of the error this many into the order (read from
 * the sort's index by the same statement; on PostgreSQL the walk's own limit instead, readPage): a
 * prefix of the order, so a full page from it is the page.
 * `'never'`: the matches are read from the indexes and sorted, never the order walked (PostgreSQL's
 * planner, taking them as spread evenly, would otherwise walk it after the bounded walk found too few).
 */
type PageReader = (db: Kysely<Schema>, filters: ErrorFilters, dialect: Dialect, fromIndex: ReadFromIndex, searchKey: string | undefined,
  sort: ErrorSort, direction: Direction, limit: number, offset: number, walkBound?: number | 'never') => Promise<Array<Selectable<InfrastructureErrorsTable>>>;

/** The walk's bound (PageReader's `walkBound`) as a condition on the walked errors. */
function withinWalk(eb: ExpressionBuilder<Schema, 'infrastructure_errors'>, sort: ErrorSort, direction: Direction, walkBound: number | 'never' | undefined) {
  if (typeof walkBound !== 'number') return eb.and([]);
  const order = sql.raw(direction === 'desc' ? 'desc' : 'asc');
  const last = sql`(select ${sql.ref(`bounded.${sort}`)} from infrastructure_errors as bounded order by ${sql.ref(`bounded.${sort}`)} ${order}, ${sql.ref('bounded.id')} ${order} limit 1 offset ${walkBound})`;
  return sql<SqlBool>`${sql.ref(`infrastructure_errors.${sort}`)} ${sql.raw(direction === 'desc' ? '>=' : '<=')} ${last}`;
}

const plainPage: PageReader = (db, filters, dialect, fromIndex, searchKey, sort, direction, limit, offset, walkBound) => db.selectFrom('infrastructure_errors').selectAll()
  .where((eb) => eb.and([filtered(eb, filters, dialect, fromIndex, searchKey), withinWalk(eb, sort, direction, walkBound)]))
  .orderBy(sort, direction).orderBy('id', direction)
  .limit(limit).offset(offset)
  .execute();

/**
 * One page of the list, in `sort` order (ties by id the same way). SQLite reads an index's entry and
 * seeks the error's row only for a column the entry lacks. PostgreSQL's walk of an index fetches
 * each error's row before its breakdown or triage is tested, so a walk past 10,000 errors of
 * another component read 10,000 rows for 25 (docs/benchmarks.md#error-list-queries-first-visits): it
 * walks the index's entries alone (`(updated_at, id)`, `(counter, id)`, ...) for the page's ids, the
 * row filters tested by key only on the errors the others let through, then reads those 25 rows.
 */
const readPage: PerDatabase<PageReader> = {
  sqlite: plainPage,
  postgres(db, filters, dialect, fromIndex, searchKey, sort, direction, limit, offset, walkBound) {
    // Only a walk: where any filter's matches are read from their index (few match), the planner,
    // shown an index-only walk, walked 50,000 entries for a host's 2,000 errors instead of sorting those.
    const reads = (name: 'status' | 'host' | 'component') => (typeof fromIndex === 'boolean' ? fromIndex : fromIndex.has(name));
    const given = (['host', 'component', 'status'] as const).filter((name) => (name === 'status' ? filters.status !== undefined || filters.assignee !== undefined : filters[name] !== undefined));
    const walked = given.length > 0 && given.every((name) => !reads(name));
    if (walkBound === 'never') {
      // An order no index gives (the same values: `|| ''` on text, `+ 0` on the counter).
      const unindexed = sql`${sql.ref(`infrastructure_errors.${sort}`)} ${sql.raw(sort === 'counter' ? '+ 0' : "|| ''")}`;
      return db.selectFrom('infrastructure_errors').selectAll()
        .where((eb) => filtered(eb, filters, dialect, fromIndex, searchKey))
        .orderBy(unindexed, direction).orderBy('id', direction)
        .limit(limit).offset(offset)
        .execute();
    }
    if (!walked) return plainPage(db, filters, dialect, fromIndex, searchKey, sort, direction, limit, offset, walkBound);
    const byRow: ErrorFilters = {};
    const rest: ErrorFilters = { ...filters };
    for (const name of ROW_FILTERS) {
      if (filters[name] === undefined) continue;
      (byRow as Record<string, unknown>)[name] = filters[name];
      delete rest[name];
    }
    // The bound as the walk's own limit: the first `walkBound` entries of the order, read only as far as
    // the page needs them (a limit is pulled row by row). The value `walkBound` entries in (withinWalk)
    // costs all of them first (docs/architecture.md#the-page).
    const columns = new Set(['id', sort, ...(filters.since !== undefined || filters.until !== undefined ? ['updated_at'] : []), ...(filters.errorClass !== undefined ? ['error_class'] : [])]);
    const order = db.selectFrom('infrastructure_errors').select([...columns] as Array<keyof InfrastructureErrorsTable>)
      .orderBy(sort, direction).orderBy('id', direction);
    const walk = (typeof walkBound === 'number' ? order.limit(walkBound) : order).as('infrastructure_errors');
    const ids = (db.selectFrom(walk) as unknown as SelectQueryBuilder<Schema, 'infrastructure_errors', object>).select('infrastructure_errors.id')
      .where((eb) => {
        const others = filtered(eb, rest, dialect, fromIndex, searchKey);
        if (Object.keys(byRow).length === 0) return others;
        // Each error's own row by key, the same table's row as the walk's entry.
        const own = eb.selectFrom('infrastructure_errors as own').select('own.id').whereRef('own.id', '=', 'infrastructure_errors.id')
          .where((inner) => filtered(inner as unknown as ExpressionBuilder<Schema, 'infrastructure_errors'>, byRow, dialect, fromIndex, searchKey));
        return eb.and([others, eb.exists(own)]);
      })
      .orderBy(sort, direction).orderBy('infrastructure_errors.id', direction)
      .limit(limit).offset(offset);
    return db.selectFrom('infrastructure_errors').selectAll().where('id', 'in', ids)
      .orderBy(sort, direction).orderBy('id', direction)
      .execute();
  },
};

/** The list's reads: how many errors match, and a page of them (docs/architecture.md#the-page). */
export function trackerListStore(database: Database) {
  const { db, dialect } = database;

  /**
   * How many errors match. With no filter or one equality filter, read from `error_counts` (migration
   * 007). With a host or component filter and others, counted from that value's breakdown rows (at most
   * one per error, so the count is exact) joined to their errors: the rows read are the errors seen
   * there, not every error.
   */
  const countMatching = async (filters: ErrorFilters, searchKey?: string): Promise<number> => {
    const counted = countedBy(filters);
    if (counted) {
      const row = await db.selectFrom('error_counts').select('errors')
        .where('dimension', '=', counted.dimension).where('value', '=', counted.value)
        .executeTakeFirst();
      return Number(row?.errors ?? 0);
    }
    if (onlyTriageFilters(filters)) {
      // The triage's counts (migration 031): a status's and an assignee's row, or the rows of one
      // status (one an assignee) or of one assignee (one a status) added up.
      let count = db.selectFrom('error_counts').select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('errors'), eb.lit(0)).as('total'));
      count = filters.status !== undefined
        ? count.where('dimension', '=', `triage.${filters.status}`)
        : count.where('dimension', 'in', TRIAGE_STATUSES.map((status) => `triage.${status}` as const));
      if (filters.assignee !== undefined) count = count.where('value', '=', filters.assignee === 'none' ? '' : String(filters.assignee));
      return Number((await count.executeTakeFirstOrThrow()).total);
    }
    const qAlone = Object.entries(filters).every(([name, value]) => name === 'q' || value === undefined);
    const indexed = qAlone && filters.q !== undefined && (searchKey === undefined || searchKey === filters.q.toLowerCase()) ? dialect.choose(errorIdsContaining)(filters.q.toLowerCase(), true) : undefined;
    if (indexed) {
      // The index's matches are the errors that match.
      const row = await sql<{ total: number | string }>`select count(*) as total from (${indexed}) as matches`.execute(db);
      return Number(row.rows[0]?.total);
    }
    let dimension: BreakdownDimension | undefined = filters.host !== undefined ? 'host' : filters.component !== undefined ? 'component' : undefined;
    // Both: counted from the rows of the one seen on fewer errors.
    if (filters.host !== undefined && filters.component !== undefined
      && await countMatching({ component: filters.component }) < await countMatching({ host: filters.host })) dimension = 'component';
    if (dimension === undefined) {
      // With a class, its index gives the errors to count, and the triage of each is read by key: not
      // every error of the status or assignee listed first to test them against.
      const fromIndex = filters.errorClass === undefined ? true : new Set(['q', 'errorClass'] as const);
      const row = await db.selectFrom('infrastructure_errors').select((eb) => eb.fn.countAll<number | string>().as('total'))
        .where((eb) => filtered(eb, filters, dialect, fromIndex, searchKey))
        .executeTakeFirstOrThrow();
      return Number(row.total);
    }
    const rest = { ...filters, [dimension]: undefined };
    const other = dimension === 'host' ? 'component' : 'host';
    if (rest.reported === undefined && rest.errorClass === undefined && rest.since === undefined && rest.until === undefined && rest.q === undefined && rest.search === undefined) {
      // The others are the triage's and the other breakdown's, each tested by its key on the value's
      // breakdown rows: the errors' own rows are not read (a breakdown row and a triage row exist
      // exactly while their error does, docs/architecture.md#error-counts).
      const row = await db.selectFrom('error_breakdown as seen')
        .select((eb) => eb.fn.countAll<number | string>().as('total'))
        .where('seen.dimension', '=', dimension)
        .where('seen.value', '=', filters[dimension] as string)
        .where((eb) => {
          const conditions = [];
          if (rest.status !== undefined || rest.assignee !== undefined) {
            conditions.push(eb.exists(triagedAs(eb as unknown as ExpressionBuilder<Schema, 'infrastructure_errors'>, rest).whereRef('error_triage.error_id', '=', sql.ref('seen.error_id'))));
          }
          if (rest[other] !== undefined) {
            conditions.push(eb.exists(eb.selectFrom('error_breakdown as also').select('also.error_id').whereRef('also.error_id', '=', 'seen.error_id')
              .where('also.dimension', '=', other).where('also.value', '=', rest[other])));
          }
          return eb.and(conditions);
        })
        .executeTakeFirstOrThrow();
      return Number(row.total);
    }
    // The other filters tested on each of the value's errors by key when they are few; when many,
    // their own indexes' ids are read as well.
    const probed = await countMatching({ [dimension]: filters[dimension] }) <= PROBED_ROWS;
    const row = await db.selectFrom('error_breakdown')
      .innerJoin('infrastructure_errors', 'infrastructure_errors.id', 'error_breakdown.error_id')
      .select((eb) => eb.fn.countAll<number | string>().as('total'))
      .where('error_breakdown.dimension', '=', dimension)
      .where('error_breakdown.value', '=', filters[dimension] as string)
      // The other filters name columns of infrastructure_errors only, none of which error_breakdown has.
      .where((eb) => filtered(eb as unknown as ExpressionBuilder<Schema, 'infrastructure_errors'>, rest, dialect, !probed, searchKey))
      .executeTakeFirstOrThrow();
    return Number(row.total);
  };

  /**
   * PostgreSQL: the word of a search of several that its planner expects in the fewest errors (its
   * estimate from error_search's statistics, a plan made and not run), the longest among equals (more
   * trigrams, each a shorter list). The whole text's trigrams include those of every common word, each
   * a list of about every error to intersect: a whole message of 1,000,000 errors took 180 ms a search
   * (docs/benchmarks.md#error-list-queries-first-visits).
   */
  const rarestWord = async (words: readonly string[]): Promise<string> => {
    let best = words[0] as string;
    let fewest = Infinity;
    for (const word of words) {
      const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>`explain (format json) ${errorIdsContaining.postgres(word, true)}`.execute(db);
      const n = Number(rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows']);
      if (n < fewest || (n === fewest && [...word].length > [...best].length)) [best, fewest] = [word, n];
    }
    return best;
  };

  /**
   * Which word of a search the trigram index is asked for. SQLite: a phrase of many trigrams reads
   * every trigram's list of rows, and the trigrams of common words are in most errors: a whole
   * message of 1,000,000 errors took over a second. Each word of 3 characters or more is
   * counted up to SEARCH_PROBE matches, and the rarest is asked for; each error it gives is tested
   * for the whole text (filtered). PostgreSQL: rarestWord.
   */
  const searchKeyOf = async (folded: string): Promise<string> => {
    const words = [...new Set(folded.split(/\s+/).filter((word) => [...word].length >= 3))];
    if (words.length === 0 || (words.length === 1 && words[0] === folded)) return folded;
    if (dialect.choose({ sqlite: false, postgres: true })) return rarestWord(words);
    let best = folded;
    let fewest = Infinity;
    for (const word of words) {
      const { rows } = await sql<{ n: number }>`select count(*) as n from (${errorIdsContaining.sqlite(word, true)} limit ${SEARCH_PROBE}) as found`.execute(db);
      const n = Number(rows[0]?.n);
      if (n < fewest) [best, fewest] = [word, n];
      if (n === 0) break;
    }
    return best;
  };

  return {
    /** A page of errors matching `filters`, in `sort` order (ties by id the same way), and how many match. */
    async list(filters: ErrorFilters, sort: ErrorSort, direction: Direction, limit: number, offset: number): Promise<{ items: InfrastructureError[]; total: number }> {
      // Counted first: the count says how to read the page, and whether there is one.
      const searchKey = filters.q === undefined ? undefined : await searchKeyOf(filters.q.toLowerCase());
      const total = await countMatching(filters, searchKey);
      if (total <= offset) return { items: [], total };
      const all = await countMatching({});
      const walkCheaper = (matches: number) => matches * matches > WALKED_ROW_COST * (offset + limit) * all;
      const indexed = filters.q !== undefined || filters.host !== undefined || filters.component !== undefined || filters.status !== undefined || filters.assignee !== undefined;
      const fromIndex = new Set<'status' | 'q' | 'host' | 'component' | 'errorClass'>();
      // A part of the list's own filters: counted once (the bound and the index read ask the same),
      // unless it is all of them (then it is `total`).
      const given = (some: ErrorFilters) => Object.values(some).filter((value) => value !== undefined).length;
      const counted = new Map<string, Promise<number>>();
      const countOf = (part: ErrorFilters): number | Promise<number> => {
        if (given(part) === given(filters)) return total;
        const key = JSON.stringify(part);
        let count = counted.get(key);
        if (count === undefined) counted.set(key, (count = countMatching(part)));
        return count;
      };
      const readFromIndexes = async () => {
        for (const name of ['status', 'q', 'host', 'component'] as const) fromIndex.add(name);
        // Seen on a host and a component: the ids of the one seen on fewer errors, the other tested
        // on each of them by its breakdown key (not two lists of ids intersected).
        if (filters.host !== undefined && filters.component !== undefined) {
          const [host, component] = await Promise.all([countOf({ host: filters.host }), countOf({ component: filters.component })]);
          fromIndex.delete(host <= component ? 'component' : 'host');
        }
      };
      const walking = indexed && walkCheaper(total);
      if (indexed && !walking) await readFromIndexes();
      // A class's index gives the list's order only by updated_at: by another, its errors are read
      // and sorted, which costs more than walking the order when many are of the class.
      if (filters.errorClass !== undefined && (sort === 'updated_at' || !walkCheaper(filters.reported === undefined && !indexed ? total : await countMatching({ errorClass: filters.errorClass })))) fromIndex.add('errorClass');
      // walkCheaper takes the matches as spread evenly through the order; when they are not (a host's
      // errors all older than an incident's on other hosts), the walk passes many errors for each
      // match. It reads at most as many errors as the index read would cost (the ids of the filter
      // seen on the fewest errors, each a third of a walked row: their error_counts rows; the matches
      // when only `q` is read from an index), and the page is read from the indexes when that prefix
      // of the order did not hold the whole page.
      const readByIndex = async () => {
        const counts = await Promise.all([
          filters.host === undefined ? Infinity : countOf({ host: filters.host }),
          filters.component === undefined ? Infinity : countOf({ component: filters.component }),
          filters.status === undefined && filters.assignee === undefined ? Infinity : countOf({ status: filters.status, assignee: filters.assignee }),
        ]);
        const fewest = Math.min(...counts);
        return fewest === Infinity ? total : fewest;
      };
      const bound = walking ? Math.max(offset + limit, Math.ceil(await readByIndex() / WALKED_ROW_COST)) : all;
      if (walking && bound < all) {
        const walked = await dialect.choose(readPage)(db, filters, dialect, fromIndex, searchKey, sort, direction, limit, offset, bound);
        if (walked.length === Math.min(limit, total - offset)) return { items: walked.map(toRecord), total };
        await readFromIndexes();
      }
      const rows = await dialect.choose(readPage)(db, filters, dialect, fromIndex, searchKey, sort, direction, limit, offset, walking ? 'never' : undefined);
      return { items: rows.map(toRecord), total };
    },
  };
}
