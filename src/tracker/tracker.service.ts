import type { AuditRecorder } from '../audit/audit-trail.js';
import { type AuditActor, SYSTEM_ACTOR } from '../audit/audit-event.js';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import { hasFilter, parseChoice, parseErrorListQuery } from './query.js';
import { searchesByTime } from './search-plan.js';
import { parseErrorReport } from './report.js';
import { FieldErrors, NotFound } from '../shared/problems.js';
import { groupCommit } from '../shared/group-commit.js';
import { rateLimit } from '../shared/rate-limit.js';
import { BREAKDOWN_DIMENSIONS, type BreakdownDimension, type ErrorReport, hourOf, type InBatch, type InfrastructureError, type SampleSize, type StoredOccurrence } from './infrastructure-error.js';
import type { Page } from '../shared/page.js';
import type { TrackerChanges, TrackerPageTag } from './tracker-changes.js';
import type { TrackerRepository } from './tracker.store.js';

type Query = Readonly<Record<string, string | string[] | undefined>>;

export interface TrackerSettings {
  /** Which occurrences each error keeps. */
  sample: SampleSize;
  /** Reports one credential may send a second, per process (429 beyond). */
  ingestPerSecond: number;
  /** Reports that may wait for the database, per process (503 beyond). */
  maxPending: number;
  /** Errors not updated for this many days are removed. */
  retentionDays: number;
}

/**
 * Alerts (docs/reporting-and-alerts.md#alerts), as the tracker knows them: what each batch's
 * transaction queues (answering how many), and who to tell once queued ones are committed. Wired at
 * the top (app/app.ts) from alerts/planner.ts.
 */
export interface TrackerAlerts {
  queue: (...batch: Parameters<InBatch>) => Promise<number>;
  queued: () => void;
}

/**
 * How a batch of this process tells the page caches what it changed (docs/architecture.md#how-cached-pages-stay-right):
 * its writes are withheld from the tracker's version (Database.withheld) and, when it only created
 * errors, told to `tracker` instead. Without it every batch moves the version.
 */
export interface TrackerChangeTelling {
  withheld: <T>(data: 'tracker', work: () => Promise<T>, settle: (answer: T) => boolean) => Promise<T>;
  tracker: TrackerChanges;
}

export const HISTOGRAM_PERIODS = { '24h': { buckets: 24, hours: 1 }, '7d': { buckets: 168, hours: 1 }, '30d': { buckets: 30, hours: 24 } } as const;
export type HistogramPeriod = keyof typeof HISTOGRAM_PERIODS;

/** How long an event key (ErrorReport.event_key) is remembered after its occurrence: an SDK's retry within it counts once. */
export const EVENT_KEYS_KEPT_MS = 86_400_000;

/** Hourly counts are kept this long (the longest period, plus the day in progress). */
export const HISTOGRAM_KEPT_DAYS = 31;

/** The tracker (docs/api.md#infrastructure-errors): administrators read, report and delete errors. */
export function trackerService(repository: TrackerRepository, clock: Clock, audit: AuditRecorder, settings: TrackerSettings, alerts?: TrackerAlerts, telling?: TrackerChangeTelling) {
  const recordErrors = (actor: AuditActor, action: string, id: number | null, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: 'infrastructure_error', target_id: id, changes });
  /** Writes a batch; the alerts it causes are queued in its transaction and sent once it commits. */
  const record = async (reports: ErrorReport[]) => {
    let queued = 0;
    const inBatch: InBatch | undefined = alerts && (async (trx, outcomes) => {
      queued = await alerts.queue(trx, outcomes);
    });
    const write = () => repository.recordBatch(reports, settings.sample, inBatch, clock());
    // Withheld: only the batch's transaction runs in `write`'s context (the alerts are queued in it, woken after).
    const answers = telling === undefined ? await write() : await telling.withheld('tracker', write, (written) => telling.tracker.tellCreated(reports, written));
    if (queued > 0) alerts?.queued();
    return answers;
  };
  const ingestion = groupCommit(record, {
    maxPending: settings.maxPending,
    maxBatch: 1000,
  });
  const mayIngest = rateLimit(clock, settings.ingestPerSecond);

  /** The buckets a period's histogram ends with now: first and last bucket start, last hour counted. */
  const histogramSpan = (query: Query) => {
    const period = HISTOGRAM_PERIODS[parseChoice(query, 'period', Object.keys(HISTOGRAM_PERIODS) as HistogramPeriod[], '24h')];
    const lastStart = Math.floor(hourOf(clock()) / period.hours) * period.hours;
    const firstStart = lastStart - (period.buckets - 1) * period.hours;
    return { hours: period.hours, firstStart, lastStart, lastHour: lastStart + period.hours - 1 };
  };
  const buckets = (span: ReturnType<typeof histogramSpan>, counts: ReadonlyMap<number, number>) => {
    const result = [];
    for (let start = span.firstStart; start <= span.lastStart; start += span.hours) {
      let count = 0;
      for (let hour = start; hour < start + span.hours; hour++) count += counts.get(hour) ?? 0;
      result.push({ start: new Date(start * 3_600_000), count });
    }
    return result;
  };

  const find = async (actor: Actor, id: number): Promise<InfrastructureError> => {
    assertPermitted(actor, 'infrastructure_errors.read');
    const record = await repository.findById(id);
    if (!record) throw new NotFound();
    return record;
  };

  return {
    find,

    /** A page of errors, filtered and sorted as the query says (a 422 names what it cannot read). */
    async list(actor: Actor, query: Query, limit: number, offset: number): Promise<Page<InfrastructureError>> {
      assertPermitted(actor, 'infrastructure_errors.read');
      const { filters, sort, direction } = parseErrorListQuery(query, { viewerId: actor.id, now: clock() });
      return repository.list(filters, sort, direction, limit, offset);
    },

    /**
     * What a kept page of the list `query` asks for shows, for the page caches (tracker-changes.ts); undefined when
     * the query is not understood, null when the page must not be kept (it goes stale with the clock).
     */
    listPageTag(actor: Actor, query: Query): TrackerPageTag | undefined | null {
      try {
        const { filters } = parseErrorListQuery(query, { viewerId: actor.id, now: clock() });
        if (searchesByTime(filters)) return null;
        return { filters: { errorClass: filters.errorClass, host: filters.host, component: filters.component } };
      } catch {
        return undefined;
      }
    },

    /**
     * Another component reports an error. Answers once the report is stored durably (group commit);
     * `created` is true for the report that started a new record.
     */
    report(actor: Actor, body: unknown): Promise<{ record: InfrastructureError; created: boolean }> {
      assertPermitted(actor, 'infrastructure_errors.create');
      mayIngest(actor.id ?? 'operator');
      return ingestion.submit(parseErrorReport(body, clock()));
    },

    /**
     * A report already read (the Sentry protocol's events: ingest/sentry-event.ts), from an actor that
     * may create errors (an ingest key, whose own rate limit applied). Answers once it is durable, in
     * the same group commit as `report`.
     */
    recordReport(actor: Actor, report: ErrorReport): Promise<{ record: InfrastructureError; created: boolean }> {
      assertPermitted(actor, 'infrastructure_errors.create');
      return ingestion.submit(report);
    },

    /** Reports recorded with no one acting (cmi's own faults): all in one transaction, or none. */
    recordReports: record,

    async remove(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'infrastructure_errors.delete');
      if (!(await repository.deleteById(id))) throw new NotFound();
      await recordErrors(actor, 'infrastructure_error.delete', id, {});
    },

    /** Deletes what the filters select; with none, only when the query says `all=true`. */
    async removeMatching(actor: Actor, query: Query): Promise<number> {
      assertPermitted(actor, 'infrastructure_errors.delete');
      const { filters } = parseErrorListQuery(query, { deletion: true, viewerId: actor.id, now: clock() });
      const all = parseChoice(query, 'all', ['true', 'false'], 'false') === 'true';
      if (!hasFilter(filters) && !all) {
        const errors = new FieldErrors();
        errors.add('all', 'must be true to delete every error (or give a filter)');
        errors.throwIfAny();
      }
      const deleted = await repository.deleteMatching(filters);
      await recordErrors(actor, 'infrastructure_error.delete_many', null, { deleted, filters: query });
      return deleted;
    },

    async occurrences(actor: Actor, id: number, limit: number, offset: number): Promise<Page<StoredOccurrence>> {
      await find(actor, id);
      return repository.occurrences(id, limit, offset);
    },

    /** One kept occurrence of the error, else undefined. */
    async occurrence(actor: Actor, id: number, occurrenceId: number): Promise<StoredOccurrence | undefined> {
      await find(actor, id);
      return repository.occurrence(id, occurrenceId);
    },

    /** Occurrences per hour (24h, 7d) or per UTC day (30d), oldest first, zero-filled, up to now. */
    async histogram(actor: Actor, id: number, query: Query): Promise<Array<{ start: Date; count: number }>> {
      await find(actor, id);
      const span = histogramSpan(query);
      return buckets(span, await repository.hourlyCounts(id, span.firstStart, span.lastHour));
    },

    /**
     * The histograms of several errors (a page of a list) in one query, by id; an id that is not
     * there has only zeros. infrastructure_errors.read, like histogram.
     */
    async histograms(actor: Actor, ids: readonly number[], query: Query): Promise<Map<number, Array<{ start: Date; count: number }>>> {
      assertPermitted(actor, 'infrastructure_errors.read');
      const span = histogramSpan(query);
      const counts = await repository.hourlyCountsOf(ids, span.firstStart, span.lastHour);
      return new Map(ids.map((id) => [id, buckets(span, counts.get(id) ?? new Map())]));
    },

    /** Occurrences per host or component, largest first: the blast radius of a fault. */
    async breakdown(actor: Actor, id: number, query: Query, limit: number, offset: number): Promise<Page<{ value: string | null; count: number }>> {
      await find(actor, id);
      const by = parseChoice<BreakdownDimension>(query, 'by', BREAKDOWN_DIMENSIONS, 'host');
      const { items, total } = await repository.breakdown(id, by, limit, offset);
      return { items: items.map((row) => ({ value: row.value === '' ? null : row.value, count: row.count })), total };
    },

    /** The releases or environments an error occurred in (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidreleases). */
    async facetValues(actor: Actor, id: number, dimension: 'release' | 'environment', limit: number, offset: number) {
      await find(actor, id);
      return repository.facetValues(id, dimension, limit, offset);
    },

    /**
     * The cloud's errors at a glance (docs/console.md#overview): occurrences per hour of every error
     * over the last 24 h and 7 d, how many errors were first seen since `today` (a UTC midnight), those
     * that regressed in the last 24 h (the latest `shown`), and the hosts and components with the most
     * occurrences among the errors seen in the last 24 h. infrastructure_errors.read.
     */
    async overview(actor: Actor, today: Date, shown: number) {
      assertPermitted(actor, 'infrastructure_errors.read');
      const week = histogramSpan({ period: '7d' });
      const day = histogramSpan({ period: '24h' });
      const since = new Date(clock().getTime() - 86_400_000);
      const [counts, newToday, regressions, hosts, components] = await Promise.all([
        repository.cloudHourlyCounts(week.firstStart, week.lastHour),
        repository.createdSince(today),
        repository.regressedSince(since, shown),
        repository.topValues('host', since, shown),
        repository.topValues('component', since, shown),
      ]);
      return { day: buckets(day, counts), week: buckets(week, counts), since, newToday, regressions, hosts, components };
    },

    /** Retention (docs/operations.md#retention): removes stale errors and old hourly counts. */
    /** A run that removed anything is recorded in the audit trail with its counts, by `actor` (cmi itself, or the operator's `cmi local errors prune`). */
    async prune(actor: AuditActor = SYSTEM_ACTOR): Promise<{ errors: number; buckets: number }> {
      const now = clock();
      const updatedBefore = new Date(now.getTime() - settings.retentionDays * 86_400_000);
      const pruned = await repository.prune(updatedBefore, hourOf(now) - HISTOGRAM_KEPT_DAYS * 24, new Date(now.getTime() - EVENT_KEYS_KEPT_MS));
      if (pruned.errors > 0 || pruned.buckets > 0) {
        await recordErrors(actor, 'retention', null, { errors: pruned.errors, hourly_counts: pruned.buckets, retention_days: settings.retentionDays });
      }
      return pruned;
    },

    /** Resolves once every accepted report is written (shutdown). */
    drained: () => ingestion.drained(),

    /** Reports waiting for the group commit's next batch (docs/operations.md#metrics). */
    reportsWaiting: () => ingestion.pending,
  };
}

export type TrackerService = ReturnType<typeof trackerService>;
