import type { FastifyBaseLogger } from 'fastify';
import type { FaultCatcher } from '../shared/faults.js';
import { INTERNAL_ERROR_CODE } from '../shared/problems.js';

/**
 * The reporter of faults in work no request waits for: `background(component)` is what one
 * component's failures are handed to (`api-key-usage`, `retention`, `fault-spool`). Each is captured
 * as the error handler captures a request's (docs/operations.md#faults-of-cmi) and logged when the
 * capture says so (docs/operations.md#log-storms). The capture is the tracker's, made after the users
 * that report here: `captureWith` points the reporter at it once it is made, before the app serves
 * or runs a job.
 */
export function backgroundFaults(log: FastifyBaseLogger) {
  let faults: FaultCatcher | undefined;
  const background = (component: string) => (error: unknown): void => {
    if (faults === undefined) throw new Error(`a fault of ${component} came before the fault capture was made (app/app.ts makes it first)`, { cause: error });
    const fault = faults.capture(error, { component });
    if (fault.log) log.error({ code: INTERNAL_ERROR_CODE, err: error, fingerprint: fault.fingerprint, component, repeated: fault.repeated }, 'fault');
  };
  return Object.assign(background, {
    captureWith(capture: FaultCatcher): void {
      faults = capture;
    },
  });
}
