import { createServer, type Server } from 'node:http';
import type { Metrics } from './metrics.js';

/**
 * CMI_METRICS_PORT: `GET /metrics` without credentials on 127.0.0.1 only, apart from the API port
 * (docs/operations.md#metrics). Anything else on it is a 404; it reads no request body.
 */
export function listenForScrapes(metrics: Metrics, port: number): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if ((request.method !== 'GET' && request.method !== 'HEAD') || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end('Not found\n');
      return;
    }
    metrics.scrape().then(
      (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(request.method === 'HEAD' ? undefined : text),
      () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics failed\n'),
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  server.maxConnections = 64;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // exclusive: in a worker of --workers, its own port, not one the cluster shares among them.
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
