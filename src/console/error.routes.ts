import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ClientError, NotFound, Unprocessable } from '../shared/problems.js';
import { assignablePeople } from './error-people.js';
import { CHART_PERIODS, type ChartPeriod, confirmDeleteErrorPage, errorPage } from './error-page.js';
import { parseId } from '../http/route-params.js';
import { consoleRoute, type ConsoleServices, formOf, pageContext, sendPage } from './console-page.js';

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

/** Groups and occurrences one error's page shows. */
const SHOWN_GROUPS = 10;
const SHOWN_OCCURRENCES = 20;
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
export function consoleErrorRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { tracker, triage, users, errorReporting } = services;

  type Extra = { notice?: string; failure?: string; status?: number; formErrors?: Record<string, string[]>; draft?: Record<string, string> };
  async function show(request: FastifyRequest<WithId>, reply: FastifyReply, id: number, extra: Extra) {
    const { viewer } = request;
    const error = await tracker.find(viewer, id);
    const asked = request.query.period;
    const period: ChartPeriod = typeof asked === 'string' && asked in CHART_PERIODS ? (asked as ChartPeriod) : '24h';
    const [buckets, byHost, byComponent, occurrences, state, notes, firstActivity, people] = await Promise.all([
      tracker.histogram(viewer, id, { period }),
      tracker.breakdown(viewer, id, { by: 'host' }, SHOWN_GROUPS, 0),
      tracker.breakdown(viewer, id, { by: 'component' }, SHOWN_GROUPS, 0),
      tracker.occurrences(viewer, id, SHOWN_OCCURRENCES, 0),
      triage.get(viewer, id),
      triage.notes(viewer, id, SHOWN_NOTES, 0),
      triage.activity(viewer, id, SHOWN_ACTIVITY, 0),
      assignablePeople(users, viewer),
    ]);
    // The latest entries: read again from the end when there are more than a page shows.
    const activity = firstActivity.total > SHOWN_ACTIVITY ? await triage.activity(viewer, id, SHOWN_ACTIVITY, firstActivity.total - SHOWN_ACTIVITY) : firstActivity;
    const view = {
      error, period, buckets, byHost, byComponent, occurrences, triage: state, notes, activity, people,
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
  // each), as a download: one of the occurrences the page shows, else 404.
  // (No extension in the path: the API's rewrite takes `.json` off every URL.)
  for (const [field, file] of [['context', 'context.json'], ['message', 'message.txt']] as const) {
    app.get<{ Params: { id: string; occurrence: string } }>(`/errors/:id/occurrences/:occurrence/${field}`, consoleRoute(), async (request, reply) => {
      const id = parseId(request.params.id);
      const occurrenceId = parseId(request.params.occurrence);
      const { items } = await tracker.occurrences(request.viewer, id, SHOWN_OCCURRENCES, 0);
      const occurrence = items.find((o) => o.id === occurrenceId);
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
