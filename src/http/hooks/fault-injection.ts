import type { FastifyInstance } from 'fastify';

/** An error no code of cmi throws otherwise, so its record is easy to tell. */
export class InjectedFault extends Error {
  override name = 'InjectedFault';
}

/**
 * CMI_FAULT_INJECTION (tests and benchmarks only; off by default): an authenticated request that
 * carries `X-Cmi-Inject-Fault: 1` fails in its handler as a fault of the service would.
 */
export function registerFaultInjection(app: FastifyInstance): void {
  app.addHook('preHandler', (request, _reply, done) => {
    done(request.headers['x-cmi-inject-fault'] === '1' ? new InjectedFault('injected fault') : undefined);
  });
}
