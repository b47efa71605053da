import { breakdownGroupResource, errorEnvironmentResource, errorReleaseResource, histogramBucketResource, occurrenceResource } from '../tracker/error-details.resource.js';
import { releaseResource } from '../tracker/release.resource.js';
import { activityResource, noteResource, triageResource } from '../tracker/triage.resource.js';
import { infrastructureErrorResource as resource } from '../tracker/infrastructure-error.resource.js';
import { CmiProtocolError } from './errors.js';
import { decodeList, type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { type Activity, type BreakdownGroup, decodeRecord, type HistogramBucket, type InfrastructureError, type Note, type Occurrence, type RecordOf, type Triage, unwrap } from './records.js';
import type { Answer, Query, RequestOptions, Transport } from './transport.js';

/** What selects errors (docs/api.md#get-sysadmin_toolsinfrastructureerrors); filters combine. */
export interface ErrorFilters {
  reported?: boolean;
  error_class?: string;
  /** Text in the class or message, in any case. */
  q?: string;
  since?: Date | string;
  until?: Date | string;
  host?: string;
  component?: string;
  /** With an occurrence of this release, or in this environment (docs/search.md#releases-environments-and-tags). */
  release?: string;
  environment?: string;
  /** The triage status (docs/api.md#error-triage); without it, every status. */
  status?: 'unresolved' | 'resolved' | 'ignored' | 'snoozed';
  /** `me`, `none` or a user id. */
  assignee?: 'me' | 'none' | number;
}

/** A change of triage (docs/api.md#put-sysadmin_toolsinfrastructureerrorsidtriage): only what is given changes. */
export interface TriageChange {
  status?: 'unresolved' | 'resolved' | 'ignored' | 'snoozed';
  /** A user id; null unassigns. */
  assignee_id?: number | null;
  snoozed_until?: Date | string;
  snooze_occurrences?: number;
  /** With status resolved: only an occurrence of a later release reopens it (docs/api.md#resolved-in-a-release). */
  in_release?: string;
  /** With status resolved: in the latest release its occurrences carried (one error at a time). */
  in_next_release?: true;
}

/** A release or an environment an error occurred in (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidreleases). */
export type ErrorFacet = RecordOf<typeof errorReleaseResource>;
/** A release and what it brought (docs/api.md#releases). */
export type Release = RecordOf<typeof releaseResource>;
const RELEASES = '/sysadmin_tools/infrastructure/releases';

const changeBody = (change: TriageChange) => ({
  ...change,
  ...(change.snoozed_until instanceof Date ? { snoozed_until: change.snoozed_until.toISOString() } : {}),
});

export interface ErrorListParams extends PageParams, ErrorFilters {
  sort?: 'updated_at' | 'created_at' | 'counter';
  direction?: 'asc' | 'desc';
  /** A saved search by id or name (docs/search.md#saved-searches): its query as q; a q beside it narrows it. */
  saved?: number | string;
}

/** One report (docs/api.md#post-sysadmin_toolsinfrastructureerrors); only `error_class` is required. */
export interface ErrorReport {
  error_class: string;
  message?: string;
  backtrace?: string | string[];
  fingerprint?: string;
  occurred_at?: Date | string;
  count?: number;
  host?: string;
  component?: string;
  request_id?: string;
  context?: Record<string, unknown>;
}

const BASE = '/sysadmin_tools/infrastructure/errors';

function splitParams<T extends PageParams>(params: T): { page: PageParams; query: Query } {
  const { page, perPage, signal, timeout, maxRetries, ...rest } = params;
  return { page: { page, perPage, signal, timeout, maxRetries }, query: rest as Query };
}

/** `client.infrastructureErrors`: the error tracker, administrators only (docs/client.md#infrastructure-errors). */
export function infrastructureErrorsApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(resource, http.format === 'json' ? unwrap(resource, answer.body) : answer.body, http.format);
  const decodeOne = <R extends typeof triageResource | typeof noteResource>(resource: R, answer: Answer) =>
    decodeRecord(resource, http.format === 'json' ? unwrap(resource, answer.body) : answer.body, http.format);
  const list = (params: ErrorListParams) => {
    const { page, query } = splitParams(params);
    return fetchPage(http, resource, BASE, { ...page, query });
  };

  return {
    list(params: ErrorListParams = {}): Promise<Page<InfrastructureError>> {
      return list(params);
    },

    all(params: Omit<ErrorListParams, 'page'> = {}): AsyncGenerator<InfrastructureError, void, undefined> {
      return walkPages((page) => list({ ...params, page }), (error) => error.id);
    },

    async get(id: number, call: RequestOptions = {}): Promise<InfrastructureError> {
      return one(await http.request('GET', `${BASE}/${id}`, call));
    },

    /** Records a report: `created` when it started a record (201), else it was counted on a known one (200). */
    async record(report: ErrorReport, call: RequestOptions = {}): Promise<{ error: InfrastructureError; created: boolean }> {
      const answer = await http.request('POST', BASE, { ...call, body: { infrastructure_error: report } });
      return { error: one(answer), created: answer.status === 201 };
    },

    /** Marks the error reported, delivering it to the server's report webhook first when one is set. */
    async report(id: number, call: RequestOptions = {}): Promise<InfrastructureError> {
      return one(await http.request('POST', `${BASE}/${id}/report`, call));
    },

    async delete(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', `${BASE}/${id}`, call);
    },

    /** Deletes every error the filters select; with no filter, `all: true` must say so. Answers how many. */
    async deleteMatching(filters: ErrorFilters & { all?: true }, call: RequestOptions = {}): Promise<number> {
      const answer = await http.request('DELETE', BASE, { ...call, query: filters as Query });
      const body = answer.body as Record<string, unknown> | number;
      const deleted = typeof body === 'number' ? body : body?.deleted;
      if (typeof deleted !== 'number') throw new CmiProtocolError(`expected {"deleted": N}, got ${JSON.stringify(answer.body)}`);
      return deleted;
    },

    /** The error's triage: status, snooze, assignee (docs/api.md#error-triage). */
    async triage(id: number, call: RequestOptions = {}): Promise<Triage> {
      return decodeOne(triageResource, await http.request('GET', `${BASE}/${id}/triage`, call));
    },

    /** Changes the error's triage; answers it as it now is. */
    async setTriage(id: number, change: TriageChange, call: RequestOptions = {}): Promise<Triage> {
      return decodeOne(triageResource, await http.request('PUT', `${BASE}/${id}/triage`, { ...call, body: { triage: changeBody(change) } }));
    },

    /**
     * One change to many errors: those of `ids`, or those the filters select (with none, `all: true`
     * must say so). Answers how many it changed.
     */
    async triageMatching(change: TriageChange, selection: { ids: number[] } | (ErrorFilters & { all?: true }), call: RequestOptions = {}): Promise<number> {
      const byIds = 'ids' in selection;
      const answer = await http.request('PUT', `${BASE}/triage`, {
        ...call,
        body: { triage: changeBody(change), ...(byIds ? { ids: selection.ids } : {}) },
        ...(byIds ? {} : { query: selection as Query }),
      });
      const body = answer.body as Record<string, unknown> | number;
      const changed = typeof body === 'number' ? body : body?.changed;
      if (typeof changed !== 'number') throw new CmiProtocolError(`expected {"changed": N}, got ${JSON.stringify(answer.body)}`);
      return changed;
    },

    /** The notes on the error, oldest first. */
    notes(id: number, params: PageParams = {}): Promise<Page<Note>> {
      return fetchPage(http, noteResource, `${BASE}/${id}/notes`, params);
    },

    /** Adds a note (plain text). */
    async addNote(id: number, body: string, call: RequestOptions = {}): Promise<Note> {
      return decodeOne(noteResource, await http.request('POST', `${BASE}/${id}/notes`, { ...call, body: { note: { body } } }));
    },

    async deleteNote(id: number, noteId: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', `${BASE}/${id}/notes/${noteId}`, call);
    },

    /** What happened to the error and who did it, oldest first. */
    activity(id: number, params: PageParams = {}): Promise<Page<Activity>> {
      return fetchPage(http, activityResource, `${BASE}/${id}/activity`, params);
    },

    occurrences(id: number, params: PageParams = {}): Promise<Page<Occurrence>> {
      return fetchPage(http, occurrenceResource, `${BASE}/${id}/occurrences`, params);
    },

    /** Counts an hour (or a day) over `period`, zero-filled, oldest first. */
    async histogram(id: number, params: RequestOptions & { period?: '24h' | '7d' | '30d' } = {}): Promise<HistogramBucket[]> {
      const { period, ...call } = params;
      return decodeList(histogramBucketResource, await http.request('GET', `${BASE}/${id}/histogram`, { ...call, query: { period } }), http.format);
    },

    /** Occurrences by host or component, largest first. */
    breakdown(id: number, params: PageParams & { by?: 'host' | 'component' | 'release' | 'environment' | 'level' } = {}): Promise<Page<BreakdownGroup>> {
      const { by, ...page } = params;
      return fetchPage(http, breakdownGroupResource, `${BASE}/${id}/breakdown`, { ...page, query: { by } });
    },

    /** The releases the error occurred in, the latest seen first. */
    releases(id: number, params: PageParams = {}): Promise<Page<ErrorFacet>> {
      return fetchPage(http, errorReleaseResource, `${BASE}/${id}/releases`, params);
    },

    /** The environments the error occurred in, the latest seen first. */
    environments(id: number, params: PageParams = {}): Promise<Page<ErrorFacet>> {
      return fetchPage(http, errorEnvironmentResource, `${BASE}/${id}/environments`, params);
    },
  };
}

/** `client.releases`: the releases the errors occurred in, and declaring one (docs/api.md#releases). */
export function releasesApi(http: Transport) {
  return {
    list(params: PageParams = {}): Promise<Page<Release>> {
      return fetchPage(http, releaseResource, RELEASES, params);
    },

    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<Release, void, undefined> {
      return walkPages((page) => fetchPage(http, releaseResource, RELEASES, { ...params, page }), (release) => release.name);
    },

    /** Declares a release ahead of its first event; answers it (as it was, when known already). */
    async declare(name: string, call: RequestOptions = {}): Promise<Release> {
      const answer = await http.request('POST', RELEASES, { ...call, body: { release: { name } } });
      return decodeRecord(releaseResource, http.format === 'json' ? unwrap(releaseResource, answer.body) : answer.body, http.format);
    },
  };
}
