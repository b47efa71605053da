import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ClientError, NotFound } from '../shared/problems.js';
import { CHART_PERIODS, type ChartPeriod, confirmDeleteErrorPage, errorPage } from './error-page.js';
import { parseId } from '../http/route-params.js';
import { consoleRoute, type ConsoleServices, pageContext, sendPage } from './console-page.js';

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

/** Groups and occurrences one error's page shows. */
const SHOWN_GROUPS = 10;
const SHOWN_OCCURRENCES = 20;

/** One error's page, and its actions: report, delete (docs/console.md#one-error). */
export function consoleErrorRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { tracker, errorReporting } = services;

  async function show(request: FastifyRequest<WithId>, reply: FastifyReply, id: number, extra: { notice?: string; failure?: string; status?: number }) {
    const { viewer } = request;
    const error = await tracker.find(viewer, id);
    const asked = request.query.period;
    const period: ChartPeriod = typeof asked === 'string' && asked in CHART_PERIODS ? (asked as ChartPeriod) : '24h';
    const [buckets, byHost, byComponent, occurrences] = await Promise.all([
      tracker.histogram(viewer, id, { period }),
      tracker.breakdown(viewer, id, { by: 'host' }, SHOWN_GROUPS, 0),
      tracker.breakdown(viewer, id, { by: 'component' }, SHOWN_GROUPS, 0),
      tracker.occurrences(viewer, id, SHOWN_OCCURRENCES, 0),
    ]);
    const view = { error, period, buckets, byHost, byComponent, occurrences, notice: extra.notice, failure: extra.failure };
    return sendPage(reply, errorPage(pageContext(request, services), view), extra.status);
  }

  app.get<WithId>('/errors/:id', consoleRoute(), (request, reply) =>
    show(request, reply, parseId(request.params.id), { notice: request.query.notice === 'reported' ? 'Reported.' : undefined }));

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
