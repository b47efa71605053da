import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Bucket } from '../buckets/bucket.js';
import { parseId } from '../http/route-params.js';
import { assertPermitted } from '../roles/authorization.js';
import { parsePagination } from '../shared/pagination.js';
import { Unprocessable } from '../shared/problems.js';
import { BUCKET_FLAGS, type BucketFormValues, bucketPage, bucketsListPage, confirmDeleteBucketPage, newBucketPage } from './buckets-pages.js';
import { consoleRoute, type ConsoleServices, formOf, pageContext, sendPage } from './console-page.js';

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

const PAGE_LIMITS = { defaultPerPage: 25, maxPerPage: 100 };

const NOTICES: Record<string, string> = { created: 'Bucket created.', saved: 'Saved.', deleted: 'Bucket deleted.' };

const noticeOf = (query: WithId['Querystring']) => (typeof query.notice === 'string' ? NOTICES[query.notice] : undefined);

function valuesOf(bucket: Bucket): BucketFormValues {
  return { ...bucket, monthly_price: String(bucket.monthly_price) };
}

/** The bucket form as the API's request body (buckets/buckets.service.ts reads it): an unticked flag is false. */
function bodyOf(form: URLSearchParams): Record<string, string> {
  const body: Record<string, string> = {};
  for (const name of ['label', 'currency_code', 'monthly_price']) {
    const value = form.get(name);
    if (value !== null) body[name] = value;
  }
  for (const [name] of BUCKET_FLAGS) body[name] = form.get(name) === 'true' ? 'true' : 'false';
  return body;
}

const typed = (body: Record<string, string>): BucketFormValues =>
  ({ ...body, ...Object.fromEntries(BUCKET_FLAGS.map(([name]) => [name, body[name] === 'true'])) });

/** Billing buckets (docs/console.md#billing-buckets): every action decided by buckets/buckets.service.ts. */
export function consoleBucketsRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { buckets } = services;
  const see = (id: number, notice: string) => `/console/buckets/${id}?notice=${notice}`;

  app.get<WithId>('/buckets', consoleRoute(), async (request, reply) => {
    const pagination = parsePagination([], { page: request.query.page, per_page: request.query.per_page }, PAGE_LIMITS);
    const { items, total } = await buckets.list(request.actor, pagination.perPage, pagination.offset);
    reply.header('x-total', String(total));
    return sendPage(reply, bucketsListPage(pageContext(request, services), { buckets: items, total, page: pagination.page, perPage: pagination.perPage, notice: noticeOf(request.query) }));
  });

  app.get('/buckets/new', consoleRoute(), (request, reply) => {
    assertPermitted(request.actor, 'buckets.create');
    return sendPage(reply, newBucketPage(pageContext(request, services), {}, {}));
  });

  app.post('/buckets', consoleRoute(), async (request, reply) => {
    const body = bodyOf(formOf(request));
    try {
      const bucket = await buckets.create(request.actor, body);
      return reply.code(303).header('location', see(bucket.id, 'created')).send();
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return sendPage(reply, newBucketPage(pageContext(request, services), typed(body), error.messages), 422);
    }
  });

  async function show(request: FastifyRequest<WithId>, reply: FastifyReply, bucket: Bucket, extra: Partial<Parameters<typeof bucketPage>[1]> & { status?: number } = {}) {
    const view = { bucket, values: valuesOf(bucket), errors: {}, notice: noticeOf(request.query), ...extra };
    return sendPage(reply, bucketPage(pageContext(request, services), view), extra.status);
  }

  app.get<WithId>('/buckets/:id', consoleRoute(), async (request, reply) => show(request, reply, await buckets.get(request.actor, parseId(request.params.id))));

  app.post<WithId>('/buckets/:id', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    const body = bodyOf(formOf(request));
    try {
      await buckets.update(request.actor, id, body);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return show(request, reply, await buckets.get(request.actor, id), { values: typed(body), errors: error.messages, notice: undefined, status: 422 });
    }
    return reply.code(303).header('location', see(id, 'saved')).send();
  });

  app.get<WithId>('/buckets/:id/delete', consoleRoute(), async (request, reply) => {
    assertPermitted(request.actor, 'buckets.delete');
    const bucket = await buckets.get(request.actor, parseId(request.params.id));
    return sendPage(reply, confirmDeleteBucketPage(pageContext(request, services), bucket));
  });

  /** A bucket users belong to: the API's refusal, said on the bucket's page (422). */
  app.post<WithId>('/buckets/:id/delete', consoleRoute(), async (request, reply) => {
    const id = parseId(request.params.id);
    try {
      await buckets.remove(request.actor, id);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const bucket = await buckets.get(request.actor, id);
      return show(request, reply, bucket, { refusal: error.messages.base ?? Object.values(error.messages).flat(), notice: undefined, status: 422 });
    }
    return reply.code(303).header('location', '/console/buckets?notice=deleted').send();
  });
}
