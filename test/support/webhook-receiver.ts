import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One delivery as a receiver saw it. */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The parsed body. */
  json: Record<string, unknown>;
  /** Whether X-Cmi-Signature is the HMAC of "<X-Cmi-Timestamp>.<body>" under the secret (checked as docs/reporting-and-alerts.md shows). */
  signatureValid: boolean;
}

/** How the receiver answers a request: a status, after an optional delay, with an optional body. */
export type Answerer = (received: Received, index: number) => { status: number; delayMs?: number; body?: string };

/**
 * A free port below the kernel's ephemeral range (32768 to 60999 on Linux), where a `listen(0)` of
 * another test never lands: a receiver that is down leaves its port free, and another process given it
 * would answer in its stead (a 401 of some cmi instead of a refused connection).
 */
async function listenBelowEphemeral(listen: (port: number) => Promise<number>): Promise<number> {
  for (;;) {
    try {
      return await listen(20_000 + Math.floor(Math.random() * 12_000));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
}

/**
 * A real HTTP receiver on a free port of 127.0.0.1, verifying signatures the way the docs tell a
 * receiver to (its own HMAC code, not cmi's). It can be stopped and started again on the same port
 * (a receiver that is down, then back).
 */
export async function webhookReceiver(secret: string, answer: Answerer = () => ({ status: 200 })) {
  const received: Received[] = [];
  let answerer = answer;
  const sockets = new Set<import('node:net').Socket>();
  const delayed = new Set<NodeJS.Timeout>();
  const make = () => http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const timestamp = String(req.headers['x-cmi-timestamp'] ?? '');
      const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`);
      const given = Buffer.from(String(req.headers['x-cmi-signature'] ?? ''));
      let json: Record<string, unknown>;
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        json = {};
      }
      const entry: Received = { path: req.url ?? '', headers: req.headers, body, json, signatureValid: given.length === expected.length && timingSafeEqual(given, expected) };
      received.push(entry);
      const { status, delayMs = 0, body: answerBody = '' } = answerer(entry, received.length - 1);
      const timer = setTimeout(() => {
        delayed.delete(timer);
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'text/plain' }).end(answerBody);
      }, delayMs);
      delayed.add(timer);
    });
  });
  const track = (made: http.Server) => made.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  let server = track(make());
  const listen = (port: number) => new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
  const port = await listenBelowEphemeral(listen);
  let up = true;
  return {
    port,
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    answer(next: Answerer) {
      answerer = next;
    },
    /** The receiver goes down: nothing listens on its port. */
    async stop() {
      if (!up) return;
      up = false;
      for (const timer of delayed) clearTimeout(timer);
      delayed.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
    /** Back on the same port. */
    async start() {
      if (up) return;
      server = track(make());
      await listen(port);
      up = true;
    },
  };
}

export type WebhookReceiver = Awaited<ReturnType<typeof webhookReceiver>>;
