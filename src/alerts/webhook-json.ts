import type { InfrastructureError } from '../tracker/infrastructure-error.js';
import type { WebhookRendering } from './webhook-events.js';
import { histogramBucketResource, occurrenceResource } from '../tracker/error-details.resource.js';
import { infrastructureErrorResource } from '../tracker/infrastructure-error.resource.js';
import { renderJson } from '../http/render/json.js';

/** Records in webhook bodies exactly as the JSON API renders them (docs/reporting-and-alerts.md#the-body). */
export const webhookRendering: WebhookRendering = {
  error: (record: InfrastructureError) =>
    (JSON.parse(renderJson({ kind: 'record', resource: infrastructureErrorResource, record })) as { infrastructure_error: unknown }).infrastructure_error,
  occurrences: (items) => JSON.parse(renderJson({ kind: 'list', resource: occurrenceResource, records: items })) as unknown,
  histogram: (buckets) => JSON.parse(renderJson({ kind: 'list', resource: histogramBucketResource, records: buckets })) as unknown,
};
