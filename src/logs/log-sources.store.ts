import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { LogSourcesTable, Schema } from '../db/schema.js';
import { nextTurn } from '../shared/turn-budget.js';

/** What a reader saw of one source in one batch (the ingestion's flush adds these, docs/log-sources.md#sources-and-silence). */
export interface SourceSeen { host: string; program: string; component: string | null; keyId: number; lines: number; errors: number; firstAt: Date; lastAt: Date }

/** A log source as cmi keeps it. */
export interface LogSource {
  id: number;
  host: string;
  program: string;
  component: string | null;
  key_id: number | null;
  first_seen_at: Date;
  last_seen_at: Date;
  lines: number;
  errors: number;
}

/** The list's filters, each an exact match. */
export interface SourceFilters {
  host?: string;
  program?: string;
  component?: string;
}

/**
 * The most sources kept (docs/limits.md): a sender on an allowed network may name any host, so a
 * million names would otherwise be a million rows. Past it, a source not yet known is refused (its
 * lines are still read and judged; only the table leaves it out) and counted; known ones go on.
 */
export const MAX_LOG_SOURCES = 100_000;
/** Sources one statement upserts at most: a statement and its making are one turn of the event loop (docs/log-sources.md#speed). */
const ROWS_PER_STATEMENT = 100;

export function toSource(row: Selectable<LogSourcesTable>): LogSource {
  return {
    id: Number(row.id), host: row.host, program: row.program, component: row.component, key_id: row.key_id === null ? null : Number(row.key_id),
    first_seen_at: new Date(row.first_seen_at), last_seen_at: new Date(row.last_seen_at), lines: Number(row.lines), errors: Number(row.errors),
  };
}

/** One entry per (host, program): a batch may name a source twice, and an upsert may touch a row once. */
function merged(seen: readonly SourceSeen[]): SourceSeen[] {
  const byPair = new Map<string, SourceSeen>();
  for (const one of seen) {
    const key = `${one.host}\u0000${one.program}`;
    const kept = byPair.get(key);
    if (!kept) {
      byPair.set(key, { ...one });
      continue;
    }
    kept.lines += one.lines;
    kept.errors += one.errors;
    if (one.firstAt < kept.firstAt) kept.firstAt = one.firstAt;
    if (one.lastAt >= kept.lastAt) {
      kept.lastAt = one.lastAt;
      kept.component = one.component;
      kept.keyId = one.keyId;
    }
  }
  // In key order, so that concurrent upserts on PostgreSQL lock the same rows in the same order.
  return [...byPair.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : a.program < b.program ? -1 : a.program > b.program ? 1 : 0));
}

/** The only SQL of log_sources (migration 040). */
export function logSourcesRepository(database: Database, options: { maxSources?: number } = {}) {
  const { db } = database;
  const maxSources = options.maxSources ?? MAX_LOG_SOURCES;
  let refused = 0;

  return {
    /**
     * Adds a batch of what the readers saw, one statement per 500 sources, the same SQL on SQLite and
     * PostgreSQL: lines and errors added, `first_seen_at` the least, `last_seen_at` the greatest, the
     * component and key the batch's. A source not yet known is inserted only while fewer than the
     * cap are kept (the count is read only when the statement meets one); the others are counted in `refused`.
     */
    async add(seen: SourceSeen[]): Promise<void> {
      const rows = merged(seen);
      for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
        if (i > 0) await nextTurn();
        const part = rows.slice(i, i + ROWS_PER_STATEMENT);
        const values = sql.join(part.map((s) => sql`(${s.host}, ${s.program}, ${s.component}, ${s.keyId}, ${s.firstAt.toISOString()}, ${s.lastAt.toISOString()}, ${s.lines}, ${s.errors})`));
        const result = await sql<{ id: number }>`insert into log_sources (host, program, component, key_id, first_seen_at, last_seen_at, lines, errors)
          select v.column1, v.column2, v.column3, cast(v.column4 as integer), v.column5, v.column6, cast(v.column7 as bigint), cast(v.column8 as bigint)
          from (values ${values}) as v
          where exists (select 1 from log_sources k where k.host = v.column1 and k.program = v.column2)
            or (select count(*) from log_sources) < ${maxSources}
          on conflict (host, program) do update set
            lines = log_sources.lines + excluded.lines,
            errors = log_sources.errors + excluded.errors,
            first_seen_at = case when excluded.first_seen_at < log_sources.first_seen_at then excluded.first_seen_at else log_sources.first_seen_at end,
            last_seen_at = case when excluded.last_seen_at > log_sources.last_seen_at then excluded.last_seen_at else log_sources.last_seen_at end,
            component = excluded.component,
            key_id = excluded.key_id
          returning id`.execute(db);
        refused += part.length - result.rows.length;
      }
    },

    /** Sources this process refused since it started, the cap reached (for `/metrics`). */
    refused: (): number => refused,

    /** A page of sources in (host, program) order, of those the filters match, and how many match. */
    async page(limit: number, offset: number, filters: SourceFilters = {}): Promise<{ items: LogSource[]; total: number }> {
      let rows = db.selectFrom('log_sources').selectAll();
      let count = db.selectFrom('log_sources').select((eb) => eb.fn.countAll<number | string>().as('n'));
      for (const name of ['host', 'program', 'component'] as const) {
        const value = filters[name];
        if (value === undefined) continue;
        rows = rows.where(name, '=', value);
        count = count.where(name, '=', value);
      }
      const [items, { n }] = await Promise.all([rows.orderBy('host').orderBy('program').limit(limit).offset(offset).execute(), count.executeTakeFirstOrThrow()]);
      return { items: items.map(toSource), total: Number(n) };
    },

    /**
     * The sources a silence rule holds silent now (log_source_silences, docs/log-sources.md#sources-and-silence),
     * the longest silent first, at most `limit`, and how many there are. The silences are one row a
     * silent source and rule: a short table, read whole.
     */
    async silent(limit: number): Promise<{ items: LogSource[]; total: number }> {
      const silentIds = db.selectFrom('log_source_silences').select('source_id');
      const [items, { n }] = await Promise.all([
        db.selectFrom('log_sources').selectAll().where('id', 'in', silentIds).orderBy('last_seen_at').orderBy('id').limit(limit).execute(),
        db.selectFrom('log_sources').select((eb) => eb.fn.countAll<number | string>().as('n')).where('id', 'in', silentIds).executeTakeFirstOrThrow(),
      ]);
      return { items: items.map(toSource), total: Number(n) };
    },

    async find(host: string, program: string): Promise<LogSource | undefined> {
      const row = await db.selectFrom('log_sources').selectAll().where('host', '=', host).where('program', '=', program).executeTakeFirst();
      return row && toSource(row);
    },
  };
}

export type LogSourcesRepository = ReturnType<typeof logSourcesRepository>;

/** What a silence rule scopes (docs/alert-routing.md#silent-sources). */
export interface SilenceScope {
  ruleId: number;
  component: string | null;
  host: string | null;
}

/** Silences one check claims at most per rule; the rest wait for the next check. */
export const SILENCES_PER_CHECK = 1000;

/**
 * Inside a transaction: claims, for the rule, the sources in its scope last seen at or before
 * `silentBefore` and not claimed yet; answers them. The claim is one conditional insert on the
 * silences' primary key: of several processes claiming at once, each source goes to exactly one.
 */
export async function claimSilences(trx: Kysely<Schema>, scope: SilenceScope, silentBefore: Date, now: Date): Promise<LogSource[]> {
  const claimed = await sql<{ source_id: number }>`insert into log_source_silences (rule_id, source_id, last_seen_at, silent_at)
    select ${scope.ruleId}, s.id, s.last_seen_at, ${now.toISOString()} from log_sources s
    where s.last_seen_at <= ${silentBefore.toISOString()}
      ${scope.component === null ? sql`` : sql`and s.component = ${scope.component}`}
      ${scope.host === null ? sql`` : sql`and s.host = ${scope.host}`}
      and not exists (select 1 from log_source_silences c where c.rule_id = ${scope.ruleId} and c.source_id = s.id)
    order by s.id limit ${SILENCES_PER_CHECK}
    on conflict (rule_id, source_id) do nothing
    returning source_id`.execute(trx);
  return sourcesById(trx, claimed.rows.map((row) => Number(row.source_id)));
}

/**
 * Inside a transaction: ends the rule's silences whose source sent since it was claimed (one delete:
 * exactly one process ends each); answers each source with when it had last been seen before.
 */
export async function endSilences(trx: Kysely<Schema>, ruleId: number): Promise<Array<{ source: LogSource; silentSince: Date }>> {
  // At most SILENCES_PER_CHECK a check, as claims are: 70,000 sources back at once end over 70 checks, each statement bounded.
  const ended = await sql<{ source_id: number; last_seen_at: string }>`delete from log_source_silences
    where rule_id = ${ruleId}
      and source_id in (select c.source_id from log_source_silences c join log_sources s on s.id = c.source_id
        where c.rule_id = ${ruleId} and s.last_seen_at > c.last_seen_at order by c.source_id limit ${SILENCES_PER_CHECK})
    returning source_id, last_seen_at`.execute(trx);
  const sources = new Map((await sourcesById(trx, ended.rows.map((row) => Number(row.source_id)))).map((source) => [source.id, source]));
  return ended.rows.flatMap((row) => {
    const source = sources.get(Number(row.source_id));
    return source ? [{ source, silentSince: new Date(row.last_seen_at) }] : [];
  }).sort((a, b) => a.source.id - b.source.id);
}

async function sourcesById(trx: Kysely<Schema>, ids: readonly number[]): Promise<LogSource[]> {
  if (ids.length === 0) return [];
  const rows = await trx.selectFrom('log_sources').selectAll().where('id', 'in', ids).orderBy('id').execute();
  return rows.map(toSource);
}
