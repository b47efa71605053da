import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.js';
import type { TriageStatus } from './triage.js';

/** A recorded infrastructure error: the spec's nine fields, by their wire names (docs/api.md#infrastructure-errors). */
export interface InfrastructureError {
  id: number;
  backtrace: string;
  counter: number;
  created_at: Date;
  error_class: string;
  fingerprint: string;
  message: string;
  reported: boolean;
  updated_at: Date;
}

/** One report of an error, validated and truncated, as the tracker stores it. */
export interface ErrorReport {
  fingerprint: string;
  error_class: string;
  message: string;
  backtrace: string;
  occurred_at: Date;
  /** Occurrences it stands for (1 unless the reporter pre-aggregated). */
  count: number;
  host: string | null;
  component: string | null;
  request_id: string | null;
  /** A JSON object, serialized. */
  context: string | null;
  /**
   * What makes the report idempotent, when given (a Sentry event: its key's id and event id,
   * ingest/sentry-ingestion.ts): a report whose key was counted before, in an error that is still
   * there, is counted no more. Kept in `ingested_events` for a day after the occurrence (migration 022).
   */
  event_key?: string;
  /**
   * What the report's context says of it that the list can search and break down by, kept per error
   * like its hosts (facetsOf): `[dimension, value]`, the dimension `release`, `environment`, `level` or
   * `tag.<name>`.
   */
  facets?: ReadonlyArray<readonly [string, string]>;
}

/** A report's facets (ErrorReport.facets): at most this many tags, each value at most this many characters (docs/search.md#releases-environments-and-tags). */
export const FACET_LIMITS = { tags: 10, valueChars: 100 } as const;
const TAG_NAME = /^[a-z0-9_.-]{1,32}$/;

/** The facets of a context's `release`, `environment`, `level` and `tags` (an object of texts); values trimmed, empty ones left out. */
export function facetsOf(context: { release?: unknown; environment?: unknown; level?: unknown; tags?: unknown }): Array<readonly [string, string]> | undefined {
  const facets: Array<readonly [string, string]> = [];
  const add = (dimension: string, value: unknown) => {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return;
    const text = String(value).trim();
    if (text !== '' && text.length <= FACET_LIMITS.valueChars && !text.includes('\u0000')) facets.push([dimension, text]);
  };
  add('release', context.release);
  add('environment', context.environment);
  add('level', context.level);
  const tags = context.tags;
  if (typeof tags === 'object' && tags !== null && !Array.isArray(tags)) {
    let taken = 0;
    for (const [name, value] of Object.entries(tags)) {
      const key = name.toLowerCase();
      if (taken === FACET_LIMITS.tags) break;
      if (!TAG_NAME.test(key)) continue;
      const before = facets.length;
      add(`tag.${key}`, value);
      if (facets.length > before) taken++;
    }
  }
  return facets.length > 0 ? facets : undefined;
}

/** Which occurrences each error keeps: the first `first` and the latest `latest`. */
export interface SampleSize {
  first: number;
  latest: number;
}

export interface ErrorFilters {
  reported?: boolean;
  errorClass?: string;
  /** Case-insensitive substring of the class or the message. */
  q?: string;
  since?: Date;
  until?: Date;
  host?: string;
  component?: string;
  /** The triage status (docs/api.md#error-triage). */
  status?: TriageStatus;
  /** The assignee's id, or 'none' for errors assigned to no one. */
  assignee?: number | 'none';
  /** The search language's other terms, all of which must hold (tracker/search-plan.ts, docs/search.md). */
  search?: SearchCondition[];
}

export type SearchTimeColumn = 'created_at' | 'updated_at';
export type SearchComparison = '=' | '>' | '>=' | '<' | '<=';

/** One condition of a search. `values` match exactly, or as a glob where they hold `*`; any of them. */
export type SearchCondition =
  | { kind: 'column'; column: 'error_class' | 'message'; negated: boolean; values: string[] }
  /** Seen in an occurrence: `host`, `component` (its breakdown), `release`, `environment`, `level`, `tag.<name>` (its context). */
  | { kind: 'seen'; dimension: string; negated: boolean; values: string[] }
  | { kind: 'has'; dimension: string; negated: boolean }
  | { kind: 'status'; negated: boolean; statuses: TriageStatus[] }
  /** Assigned to one of `ids`, to a user of one of `logins` (lower case), or to no one (`none`). */
  | { kind: 'assigned'; negated: boolean; ids: number[]; logins: string[]; none: boolean }
  | { kind: 'reported'; value: boolean }
  | { kind: 'counter'; operator: SearchComparison; value: number }
  | { kind: 'time'; column: SearchTimeColumn; operator: Exclude<SearchComparison, '='>; at: Date }
  /** None of `conditions` all holding (an empty list: nothing matches). */
  | { kind: 'not'; conditions: SearchCondition[] };

export type ErrorSort = 'updated_at' | 'created_at' | 'counter';
export type Direction = 'asc' | 'desc';

export interface StoredOccurrence {
  id: number;
  occurred_at: Date;
  host: string | null;
  component: string | null;
  request_id: string | null;
  message: string;
  context: string | null;
}

/** What an error's occurrences are broken down by (its breakdown's dimensions, besides tags). */
export type BreakdownDimension = 'host' | 'component' | 'release' | 'environment' | 'level';
export const BREAKDOWN_DIMENSIONS: readonly BreakdownDimension[] = ['host', 'component', 'release', 'environment', 'level'];

/** The hour the histogram counts an occurrence in: whole hours since the epoch. */
const HOUR_MS = 3_600_000;
export const hourOf = (at: Date): number => Math.floor(at.getTime() / HOUR_MS);

/** What the batch did to one error's triage. */
export interface BatchTriage {
  /** The error's triage status once the batch is committed. */
  status: TriageStatus;
  /** Whether this batch reopened it (it was resolved). */
  regressed: boolean;
}

/** One error's part of a committed batch: the record as the batch left it, whether it created it, how many it added. */
export interface BatchOutcome {
  record: InfrastructureError;
  created: boolean;
  added: number;
  /** Its triage once the batch is committed, and whether the batch reopened it (tracker/triage-batch.ts). */
  triage: BatchTriage;
  /** The hosts and components the batch's reports of it name (alert rules match them: docs/alert-routing.md). */
  hosts: readonly string[];
  components: readonly string[];
}

/**
 * What a feature above the tracker does inside the transaction that counts a batch (the alerts queue
 * what it causes, so an alert exists exactly when its cause was committed: alerts/planner.ts). The
 * tracker knows it only as this port, wired at the top (app/app.ts).
 */
export type InBatch = (trx: Kysely<Schema>, outcomes: readonly BatchOutcome[]) => Promise<unknown>;
