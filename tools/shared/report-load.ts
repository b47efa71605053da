import http from 'node:http';

/** One answer, read to its end. */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * An HTTP client for load against a real `cmi serve`: keep-alive connections, at most `sockets` of
 * them at once (cmi closes connections past CMI_MAX_CONNECTIONS_PER_ADDRESS, 128 by default). A
 * request whose connection dies before its answer is complete rejects: it was not acknowledged.
 */
export function loadClient(baseUrl: string, authorization: string, sockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const { hostname, port } = new URL(baseUrl);

  const request = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request({
        host: hostname,
        port,
        method,
        path,
        agent,
        headers: {
          authorization,
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
          ...headers,
        },
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete) reject(new Error(`${method} ${path}: connection closed before the answer was complete`));
          else resolve({ status: res.statusCode as number, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });

  return {
    request,
    get: (path: string) => request('GET', path),
    post: (path: string, body: unknown, headers?: Record<string, string>) => request('POST', path, body, headers),
    /** Closes every connection (idle or not). */
    close: () => agent.destroy(),
  };
}

export type LoadClient = ReturnType<typeof loadClient>;
