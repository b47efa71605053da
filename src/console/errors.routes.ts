import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ClientError, NotFound, Unprocessable } from '../shared/problems.js';
import { safeNext } from './console-session.js';
import {
  BULK_TRIAGE, type BulkTriageAction, confirmDeletePage, ERROR_FILTERS, type ErrorFilterValues, errorsListPage, errorsListUrl, listQuery,
} from './errors-list-page.js';
import { activityPeople, CHART_PERIODS, type ChartPeriod, confirmDeleteErrorPage, errorPage } from './errors-item-page.js';
import { assignablePeople, withNamesOf } from './errors-people.js';
import { may } from '../roles/authorization.js';
import { parseId } from '../http/route-params.js';
import { HISTOGRAM_KEPT_DAYS } from '../tracker/tracker.service.js';
import { parsePagination } from '../shared/pagination.js';
import { consoleRoute, type ConsoleServices, formOf, pageContext, sendPage } from './console-page.js';

type Query = Record<string, string | string[] | undefined>;

/** Errors a page of the console shows (and may select at once). */
const PAGE_LIMITS = { defaultPerPage: 25, maxPerPage: 100 };

/** The filters the URL gives (empty fields of the form are no filter; status `unresolved` is the default, left out). */
function filtersOf(query: Query): ErrorFilterValues {
  const filters: ErrorFilterValues = {};
  for (const name of ERROR_FILTERS) {
    const value = query[name];
    if (typeof value === 'string' && value !== '') filters[name] = value;
  }
  if (filters.status === 'unresolved') delete filters.status;
  return filters;
}

/** The `triage` body a bulk action sends the triage service, at `now` (a snooze ends from now). */
function bulkChange(action: BulkTriageAction, viewerId: number, now: Date): Record<string, unknown> {
  switch (action) {
    case 'resolve': return { status: 'resolved' };
    case 'ignore': return { status: 'ignored' };
    case 'reopen': return { status: 'unresolved' };
    case 'assign_me': return { assignee_id: viewerId };
    case 'unassign': return { assignee_id: null };
    case 'snooze_1h': return { status: 'snoozed', snoozed_until: new Date(now.getTime() + 3_600_000).toISOString() };
    case 'snooze_24h': return { status: 'snoozed', snoozed_until: new Date(now.getTime() + 86_400_000).toISOString() };
  }
}

/** What a notice in the URL says after an action (codes only: no text from the URL is shown). */
function noticeOf(query: Query): string | undefined {
  const count = Number(query.count);
  const n = Number.isSafeInteger(count) && count >= 0 ? count : 0;
  const errors = `${n} ${n === 1 ? 'error' : 'errors'}`;
  if (query.notice === 'deleted') return `Deleted ${errors}.`;
  if (query.notice === 'triaged' && typeof query.action === 'string' && Object.hasOwn(BULK_TRIAGE, query.action)) {
    const [, done, after] = BULK_TRIAGE[query.action as BulkTriageAction];
    return `${done} ${errors}${after}.`;
  }
  if (query.notice === 'reported') {
    const failed = Number(query.failed);
    return failed > 0 && Number.isSafeInteger(failed) ? `Reported ${errors}; ${failed} could not be reported (see each error's page).` : `Reported ${errors}.`;
  }
  return undefined;
}

/** Back to the list the form was on, with a notice. */
function backWith(back: string | null, notice: Record<string, string>): string {
  const target = safeNext(back ?? undefined);
  const url = new URL(target.startsWith('/console/errors') ? target : '/console/errors', 'http://console.invalid');
  for (const [name, value] of Object.entries(notice)) url.searchParams.set(name, value);
  return url.pathname + url.search;
}

/** The errors list with its filters, paging, and actions on the selected errors (docs/console.md#errors). */
function errorsListRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { tracker, triage, users, errorReporting, clock } = services;

  app.get<{ Querystring: Query }>('/errors', consoleRoute(), async (request, reply) => {
    const query = request.query;
    const filters = filtersOf(query);
    // A filter form sends its empty fields too: the URL to keep (and share) is the one without them.
    if (Object.values(query).some((value) => value === '') || query.status === 'unresolved') return reply.code(303).header('location', errorsListUrl(filters)).send();
    const pagination = parsePagination([], { page: query.page, per_page: query.per_page }, PAGE_LIMITS);
    let filterErrors: Record<string, string[]> = {};
    let list = { items: [] as Awaited<ReturnType<typeof tracker.list>>['items'], total: 0 };
    try {
      list = await tracker.list(request.viewer, listQuery(filters), pagination.perPage, pagination.offset);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      filterErrors = error.messages;
    }
    // One query for the page's sparklines, not two an error.
    const days = await tracker.histograms(request.viewer, list.items.map((error) => error.id), { period: '24h' });
    const ids = list.items.map((error) => error.id);
    const [triages, people] = await Promise.all([triage.triagesOf(request.viewer, ids), assignablePeople(users, request.viewer)]);
    const rows = list.items.map((error) => ({ error, day: days.get(error.id) ?? [], triage: triages.get(error.id) }));
    reply.header('x-total', String(list.total));
    const view = {
      filters, filterErrors, rows, people, canTriage: may(request.viewer, 'infrastructure_errors.triage'),
      total: list.total, page: pagination.page, perPage: pagination.perPage, notice: noticeOf(query),
    };
    return sendPage(reply, errorsListPage(pageContext(request, services), view), Object.keys(filterErrors).length > 0 ? 422 : 200);
  });

  /**
   * Report, delete, or change the triage of the selected errors; deleting asks first. A triage
   * action with `scope=filter` changes every error the list's filters select (the bulk change by
   * filters of the API: docs/api.md#error-triage).
   */
  app.post('/errors/selected', consoleRoute(), async (request, reply) => {
    const form = formOf(request);
    const ids = [...new Set(form.getAll('id'))].slice(0, PAGE_LIMITS.maxPerPage).filter((id) => /^[1-9]\d{0,9}$/.test(id)).map(Number);
    const action = form.get('action');
    const back = form.get('back');
    if (action !== null && Object.hasOwn(BULK_TRIAGE, action)) {
      const now = clock();
      const triageBody = { triage: bulkChange(action as BulkTriageAction, request.viewer.id, now) };
      let changed: number;
      if (form.get('scope') === 'filter') {
        // The filters of the list the form was on: its URL, read again as the list reads it.
        const listed = new URL(backWith(back, {}), 'http://console.invalid');
        const query = listQuery(filtersOf(Object.fromEntries(listed.searchParams)));
        delete query.sort;
        delete query.direction;
        changed = await triage.changeMany(request.viewer, Object.keys(query).length === 0 ? { all: 'true' } : query, triageBody);
      } else {
        if (ids.length === 0) return reply.code(303).header('location', backWith(back, {})).send();
        changed = await triage.changeMany(request.viewer, {}, { ...triageBody, ids });
      }
      return reply.code(303).header('location', backWith(back, { notice: 'triaged', action, count: String(changed) })).send();
    }
    if (ids.length === 0) return reply.code(303).header('location', backWith(back, {})).send();
    if (action === 'delete') {
      if (form.get('confirmed') !== '1') return sendPage(reply, confirmDeletePage(pageContext(request, services), ids, backWith(back, {})));
      let deleted = 0;
      for (const id of ids) {
        await tracker.remove(request.viewer, id).then(() => (deleted += 1), (error: unknown) => {
          if (!(error instanceof ClientError) || error.status !== 404) throw error;
        });
      }
      return reply.code(303).header('location', backWith(back, { notice: 'deleted', count: String(deleted) })).send();
    }
    if (action === 'report') {
      let reported = 0;
      let failed = 0;
      for (const id of ids) {
        await errorReporting.report(request.viewer, id).then(() => (reported += 1), (error: unknown) => {
          if (!(error instanceof ClientError) || error.status === 403) throw error;
          failed += 1;
        });
      }
      return reply.code(303).header('location', backWith(back, { notice: 'reported', count: String(reported), failed: String(failed) })).send();
    }
    throw new Unprocessable({ action: [`must be report, delete or one of ${Object.keys(BULK_TRIAGE).join(', ')}`] });
  });
}

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

/** Groups one error's page shows; its latest kept occurrences read for the context table (docs/console.md#one-error). */
const SHOWN_GROUPS = 10;
const CONTEXT_READ = 200;
/** Notes and activity entries one error's page shows (the first notes, the latest entries). */
const SHOWN_NOTES = 100;
const SHOWN_ACTIVITY = 50;

/** What a notice in the URL says after an action (codes only: no text from the URL is shown). */
const NOTICES: Record<string, string> = { reported: 'Reported.', triaged: 'Triage saved.', noted: 'Note added.', note_deleted: 'Note deleted.' };

/** The fields of the triage form, by its action (the change the triage service reads: tracker/triage.ts). */
function triageBody(form: URLSearchParams, viewerId: number): Record<string, unknown> {
  const action = form.get('action');
  const given = (name: string) => {
    const value = form.get(name)?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  switch (action) {
    case 'resolve': return { status: 'resolved' };
    case 'ignore': return { status: 'ignored' };
    case 'reopen': return { status: 'unresolved' };
    case 'assign_me': return { assignee_id: viewerId };
    case 'assign': return { assignee_id: given('assignee_id') ?? null };
    case 'snooze': {
      const until = given('snoozed_until');
      const occurrences = given('snooze_occurrences');
      return { status: 'snoozed', ...(until === undefined ? {} : { snoozed_until: until }), ...(occurrences === undefined ? {} : { snooze_occurrences: occurrences }) };
    }
    default: throw new Unprocessable({ action: ['must be resolve, ignore, reopen, snooze, assign or assign_me'] });
  }
}

/** One error's page, and its actions: report, delete (docs/console.md#one-error). */
function errorsItemRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { tracker, triage, users, errorReporting, alertRouting, clock } = services;

  type Extra = { notice?: string; failure?: string; status?: number; formErrors?: Record<string, string[]>; draft?: Record<string, string> };
  async function show(request: FastifyRequest<WithId>, reply: FastifyReply, id: number, extra: Extra) {
    const { viewer } = request;
    const error = await tracker.find(viewer, id);
    const asked = request.query.period;
    const period: ChartPeriod = typeof asked === 'string' && asked in CHART_PERIODS ? (asked as ChartPeriod) : '24h';
    // The alerts of the days the histogram keeps; those within the chart's buckets are marked.
    const since = new Date(clock().getTime() - HISTOGRAM_KEPT_DAYS * 86_400_000);
    const [buckets, byHost, byComponent, byRelease, byEnvironment, occurrences, state, notes, firstActivity, people, sent] = await Promise.all([
      tracker.histogram(viewer, id, { period }),
      tracker.breakdown(viewer, id, { by: 'host' }, SHOWN_GROUPS, 0),
      tracker.breakdown(viewer, id, { by: 'component' }, SHOWN_GROUPS, 0),
      tracker.breakdown(viewer, id, { by: 'release' }, SHOWN_GROUPS, 0),
      tracker.breakdown(viewer, id, { by: 'environment' }, SHOWN_GROUPS, 0),
      tracker.occurrences(viewer, id, CONTEXT_READ, 0),
      triage.get(viewer, id),
      triage.notes(viewer, id, SHOWN_NOTES, 0),
      triage.activity(viewer, id, SHOWN_ACTIVITY, 0),
      assignablePeople(users, viewer),
      alertRouting.alertsSentFor(viewer, id, since),
    ]);
    const alerts = sent.filter((alert) => buckets[0] !== undefined && alert.at >= buckets[0].start);
    // The latest entries: read again from the end when there are more than a page shows.
    const activity = firstActivity.total > SHOWN_ACTIVITY ? await triage.activity(viewer, id, SHOWN_ACTIVITY, firstActivity.total - SHOWN_ACTIVITY) : firstActivity;
    // The navigator's occurrence, by position (0: the newest); past the ones read, read alone.
    const askedPosition = Number(request.query.occurrence);
    const position = Number.isSafeInteger(askedPosition) && askedPosition > 0 ? Math.min(askedPosition, Math.max(0, occurrences.total - 1)) : 0;
    const one = occurrences.items[position] ?? (await tracker.occurrences(viewer, id, 1, position)).items[0];
    const names = await withNamesOf(users, viewer, people, [state.assignee_id, state.resolved_by_id, ...notes.items.map((n) => n.author_id), ...activity.items.map((a) => a.actor_id), ...activityPeople(activity.items)]);
    const view = {
      error, period, buckets, byHost, byComponent, byRelease, byEnvironment, occurrences, triage: state, notes, activity, people, names, alerts,
      shownOccurrence: one && { occurrence: one, position },
      notice: extra.notice, failure: extra.failure, formErrors: extra.formErrors, draft: extra.draft,
    };
    return sendPage(reply, errorPage(pageContext(request, services), view), extra.status);
  }

  app.get<WithId>('/errors/:id', consoleRoute(), (request, reply) =>
    show(request, reply, parseId(request.params.id), { notice: typeof request.query.notice === 'string' ? NOTICES[request.query.notice] : undefined }));

  /** Shows the page again with a 422's field errors beside the form's fields, and what was typed. */
  const orAgain = async (request: FastifyRequest<WithId>, reply: FastifyReply, id: number, work: () => Promise<unknown>, notice: string) => {
    try {
      await work();
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const form = formOf(request);
      const draft: Record<string, string> = {};
      for (const name of ['snoozed_until', 'snooze_occurrences', 'assignee_id', 'body']) {
        const value = form.get(name);
        if (value !== null) draft[name] = value;
      }
      return show(request, reply, id, { formErrors: error.messages, draft, status: 422 });
    }
    return reply.code(303).header('location', `/console/errors/${id}?notice=${notice}`).send();
  };

  // Triage (docs/console.md#triage): the buttons and forms of the page; the service decides who may.
  app.post<WithId>('/errors/:id/triage', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    return orAgain(request, reply, id, () => triage.change(request.viewer, id, triageBody(formOf(request), request.viewer.id)), 'triaged');
  });

  app.post<WithId>('/errors/:id/notes', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    return orAgain(request, reply, id, () => triage.addNote(request.viewer, id, { body: formOf(request).get('body') ?? '' }), 'noted');
  });

  app.post<{ Params: { id: string; note: string }; Querystring: WithId['Querystring'] }>('/errors/:id/notes/:note/delete', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    await triage.deleteNote(request.viewer, id, parseId(request.params.note));
    return reply.code(303).header('location', `/console/errors/${id}?notice=note_deleted`).send();
  });

  app.post<WithId>('/errors/:id/report', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    try {
      await errorReporting.report(request.viewer, id);
    } catch (error) {
      // The receiver refused or failed (502): said on the page, with what it answered.
      if (!(error instanceof ClientError) || error.status !== 502) throw error;
      return show(request, reply, id, { failure: `${error.message} (request ${request.id})`, status: 502 });
    }
    return reply.code(303).header('location', `/console/errors/${id}?notice=reported`).send();
  });

  // An occurrence's context or message whole (the page shows at most errorReportLimits.shownChars of
  // each), as a download: any kept occurrence of the error (the navigator shows each), else 404.
  // (No extension in the path: the API's rewrite takes `.json` off every URL.)
  for (const [field, file] of [['context', 'context.json'], ['message', 'message.txt']] as const) {
    app.get<{ Params: { id: string; occurrence: string } }>(`/errors/:id/occurrences/:occurrence/${field}`, consoleRoute(), async (request, reply) => {
      const id = parseId(request.params.id);
      const occurrenceId = parseId(request.params.occurrence);
      const occurrence = await tracker.occurrence(request.viewer, id, occurrenceId);
      if (occurrence === undefined) throw new NotFound();
      const json = field === 'context';
      return reply
        .type(json ? 'application/octet-stream' : 'text/plain; charset=utf-8')
        .header('content-disposition', `attachment; filename="error-${id}-occurrence-${occurrenceId}-${file}"`)
        .header('x-content-type-options', 'nosniff')
        .send(json ? (occurrence.context ?? 'null') : occurrence.message);
    });
  }

  app.get<WithId>('/errors/:id/delete', consoleRoute(), async (request, reply) => {
    const error = await tracker.find(request.viewer, parseId(request.params.id));
    return sendPage(reply, confirmDeleteErrorPage(pageContext(request, services), error));
  });

  app.post<WithId>('/errors/:id/delete', consoleRoute(), async (request, reply) => {
    await tracker.remove(request.viewer, parseId(request.params.id));
    return reply.code(303).header('location', '/console/errors?notice=deleted&count=1').send();
  });
}

/** The errors' pages (docs/console.md#errors): the list, then one error's. */
export function consoleErrorsRoutes(app: FastifyInstance, services: ConsoleServices): void {
  errorsListRoutes(app, services);
  errorsItemRoutes(app, services);
}
