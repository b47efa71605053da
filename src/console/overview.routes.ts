import type { FastifyInstance } from 'fastify';
import { may } from '../roles/authorization.js';
import { consoleRoute, type ConsoleServices, pageContext, sendPage } from './console-page.js';
import { overviewPage, type OverviewView } from './overview-page.js';

/** Regressions, hosts, components and silent sources the overview names (the rest are a link away). */
const SHOWN = 5;

/**
 * The overview (docs/console.md#overview): each part read through its feature's service, and only
 * for a viewer holding what that service asks (a part it may not read is not shown, not refused).
 */
export function consoleOverviewRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { tracker, alertRouting, logSources, clock } = services;
  app.get('/overview', consoleRoute(), async (request, reply) => {
    const viewer = request.viewer;
    const now = clock();
    const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const readsErrors = may(viewer, 'infrastructure_errors.read');
    const [errors, deliveries, silent] = await Promise.all([
      readsErrors ? tracker.overview(viewer, today, SHOWN) : undefined,
      may(viewer, 'webhook_deliveries.read') && may(viewer, 'alert_destinations.read') ? alertRouting.failingDeliveries(viewer) : undefined,
      readsErrors ? logSources.silent(viewer, SHOWN) : undefined,
    ]);
    const view: OverviewView = { errors, today, deliveries, silent };
    return sendPage(reply, overviewPage(pageContext(request, services), view));
  });
}
