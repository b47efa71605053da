import type { FastifyInstance } from 'fastify';
import type { Metrics, MetricsSources } from './metrics.js';
import { METRICS_ROUTE, metricsRoutes } from './metrics.routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** This process's metrics when CMI_METRICS_TOKEN or CMI_METRICS_PORT is set (docs/operations.md#metrics). */
    metrics: Metrics | undefined;
  }
}

/** CMI_METRICS_TOKEN (served at `GET /metrics`) and CMI_METRICS_PORT (served on a port of their own). */
export interface MetricsSettings {
  token: string | undefined;
  port: number | undefined;
}

/** Whether this process keeps metrics: either setting turns them on (docs/operations.md#metrics). */
export const metricsAreOn = (settings: MetricsSettings): boolean => settings.token !== undefined || settings.port !== undefined;

/** What the metrics are made of (docs/architecture.md#how-a-feature-registers-itself): what they read, read at each scrape. */
export interface MetricsPieces extends Omit<MetricsSources, 'build'> {
  settings: MetricsSettings;
  /** What runs (`cmi_build_info`), asked only with the metrics on. */
  build: () => NonNullable<MetricsSources['build']>;
}

/**
 * This process's metrics: gives its row of the route table (`GET /metrics`, with a token); `instrument`
 * registers its hooks among the app's and decorates the app with them (`app.metrics`), and `register`
 * their route. Off, there are no hooks, a request does no work for them, and prom-client is not even
 * loaded: start-up does not pay for it either.
 */
export function metricsPlugin({ settings, build, ...sources }: MetricsPieces) {
  const on = metricsAreOn(settings);
  let metrics: Metrics | undefined;
  return {
    routes: on && settings.token !== undefined ? [METRICS_ROUTE] : [],
    async instrument(app: FastifyInstance): Promise<Metrics | undefined> {
      metrics = on ? (await import('./metrics.js')).registerMetrics(app, { build: build(), ...sources }) : undefined;
      app.decorate('metrics', metrics);
      return metrics;
    },
    async register(app: FastifyInstance): Promise<void> {
      if (metrics && settings.token !== undefined) await app.register(metricsRoutes, { metrics, token: settings.token });
    },
  };
}
