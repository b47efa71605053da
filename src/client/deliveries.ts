import { deliveryResource } from '../alerts/delivery.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import type { Delivery } from './records.js';
import type { Transport } from './transport.js';

const PATH = '/sysadmin_tools/infrastructure/deliveries';

/** `client.deliveries`: the webhook deliveries, reports and alerts (docs/api.md#get-sysadmin_toolsinfrastructuredeliveries). */
export function deliveriesApi(http: Transport) {
  const list = (params: PageParams & { state?: 'pending' | 'delivered' | 'failed' }) => {
    const { state, ...page } = params;
    return fetchPage(http, deliveryResource, PATH, { ...page, query: { state } });
  };
  return {
    list(params: PageParams & { state?: 'pending' | 'delivered' | 'failed' } = {}): Promise<Page<Delivery>> {
      return list(params);
    },
    all(params: Omit<PageParams, 'page'> & { state?: 'pending' | 'delivered' | 'failed' } = {}): AsyncGenerator<Delivery, void, undefined> {
      return walkPages((page) => list({ ...params, page }), (delivery) => delivery.id);
    },
  };
}
