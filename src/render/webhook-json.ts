import type { InfrastructureError } from '../domain/records.js';
import type { WebhookRendering } from '../domain/webhook-events.js';
import { histogramBucketResource, occurrenceResource } from '../resources/error-details.js';
import { infrastructureErrorResource } from '../resources/infrastructure-error.js';
import { renderJson } from './json.js';

/** Records in webhook bodies exactly as the JSON API renders them (docs/reporting-and-alerts.md#the-body). */
export const webhookRendering: WebhookRendering = {
  error: (record: InfrastructureError) =>
    (JSON.parse(renderJson({ kind: 'record', resource: infrastructureErrorResource, record })) as { infrastructure_error: unknown }).infrastructure_error,
  occurrences: (items) => JSON.parse(renderJson({ kind: 'list', resource: occurrenceResource, records: items })) as unknown,
  histogram: (buckets) => JSON.parse(renderJson({ kind: 'list', resource: histogramBucketResource, records: buckets })) as unknown,
};
