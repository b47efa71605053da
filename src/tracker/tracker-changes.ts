import { PartialChanges } from '../shared/page-cache.js';
import type { ErrorFilters, ErrorReport, InfrastructureError } from './infrastructure-error.js';

/**
 * What a kept page of the tracker shows, as far as a new error can tell: a record (no new error
 * changes another's record), or a list page and the filters that may exclude a new error from it.
 */
export type TrackerPageTag = { record: true } | { filters: Pick<ErrorFilters, 'errorClass' | 'host' | 'component'> };

/** An error a batch of this process created, as the filters see it (lower case: equal values are equal after folding). */
interface NewError {
  errorClass: string;
  hosts: ReadonlySet<string>;
  components: ReadonlySet<string>;
}

const fold = (value: string) => value.toLowerCase();

/**
 * Whether a page of `tag` may show one of `created`: a record never does; a list page may, unless a
 * filter on the class, a host or a component excludes each (docs/architecture.md#how-cached-pages-stay-right).
 * Folded to lower case on both sides, so only values that differ in any case count as different.
 */
export function mayShowAny(created: readonly NewError[], tag: TrackerPageTag): boolean {
  if ('record' in tag) return false;
  const { errorClass, host, component } = tag.filters;
  return created.some((error) =>
    (errorClass === undefined || fold(errorClass) === error.errorClass)
    && (host === undefined || error.hosts.has(fold(host)))
    && (component === undefined || error.components.has(fold(component))));
}

/**
 * The tracker's partial changes: batches of reports of this process that only created errors
 * (tracker.service.ts `record`). Such a batch writes the new errors' rows (their occurrences, counts,
 * breakdown, triage, alerts) and the counts of `error_counts` by their class, hosts and components;
 * nothing of an error that was there before. So a record page stays, and so does a list page that a
 * filter on another class, host or component keeps the new errors out of. Any other write (a report of
 * a known error reorders every list by `updated_at` and `counter`) moves the tracker's version.
 */
export function trackerChanges() {
  const changes = new PartialChanges<TrackerPageTag>();
  return {
    changes,
    /**
     * Tells the caches what a committed batch changed, when it only created errors: `answers[i]` is
     * what `reports[i]` became. False (nothing told) when any report counted an error that was there
     * before, so the batch's writes move the version instead.
     */
    tellCreated(reports: readonly ErrorReport[], answers: ReadonlyArray<{ record: InfrastructureError; created: boolean }>): boolean {
      if (reports.length !== answers.length || answers.length === 0) return false;
      const createdIds = new Set(answers.filter((answer) => answer.created).map((answer) => answer.record.id));
      const created = new Map<number, { errorClass: string; hosts: Set<string>; components: Set<string> }>();
      for (const [index, { record }] of answers.entries()) {
        if (!createdIds.has(record.id)) return false;
        const report = reports[index] as ErrorReport;
        let error = created.get(record.id);
        if (error === undefined) created.set(record.id, (error = { errorClass: fold(record.error_class), hosts: new Set(), components: new Set() }));
        // As the breakdown keeps them: no host is the empty value.
        error.hosts.add(fold(report.host ?? ''));
        error.components.add(fold(report.component ?? ''));
      }
      const errors = [...created.values()];
      changes.tell((tag) => mayShowAny(errors, tag));
      return true;
    },
  };
}

export type TrackerChanges = ReturnType<typeof trackerChanges>;
