import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database.js';
import { formatDatetime } from '../http/render/datetime.js';
import { renderJson } from '../http/render/json.js';
import type { Clock } from '../shared/clock.js';
import { type AlertedSource, type SilenceDetail, sourceAlertBody } from '../alerts/alert-messages.js';
import { type ActiveRules, deliveryTarget, keptActiveRules } from '../alerts/alert-routing.store.js';
import { insertDeliveries, pendingDelivery } from '../alerts/deliveries.store.js';
import { logSourceResource } from './log-source.resource.js';
import { claimSilences, endSilences, type LogSource } from './log-sources.store.js';

/** How often each process checks (docs/alert-routing.md#silent-sources): a 1-minute silence is told within 15 s of its minute. */
export const SILENCE_CHECK_MS = 15_000;

export interface SourceSilenceWatchPieces {
  database: Database;
  clock: Clock;
  /** The address links in alerts start with (CMI_PUBLIC_URL). */
  publicUrl: string;
  /** The outbox: something was queued, send it now. */
  wake: () => void;
  /** A check that failed (the database away): reported, and the next check tries again. */
  onError: (error: unknown) => void;
  /** How often to check, in ms (tests give none and call checkOnce). */
  intervalMs?: number;
}

export interface SourceSilenceWatch {
  /** One check at `now` (the clock's by default): answers how many alerts it queued. */
  checkOnce(now?: Date): Promise<number>;
  /** Stops the checks, waiting for the one running. */
  stop(): Promise<void>;
}

const alerted = (source: LogSource): AlertedSource => ({
  host: source.host,
  program: source.program,
  rendered: (JSON.parse(renderJson({ kind: 'record', resource: logSourceResource, record: source })) as Record<string, unknown>)['log_source'],
});

/**
 * The silence of log sources (docs/alert-routing.md#silent-sources), checked every 15 s in every
 * process: for each enabled rule with `silent_minutes` and an enabled destination, in one
 * transaction, the sources in its scope (its component and host; a rule's error class is of errors,
 * not sources) whose last line is `silent_minutes` old are claimed (log_source_silences' key: one
 * process each) and a `silent` alert queued for each to the rule's destinations; a claimed source
 * that has sent since is released and a `back` alert queued. Both through the outbox, as any alert,
 * kept under minus the source's id so that each source's silent goes before its back.
 */
export function startSourceSilenceWatch({ database, clock, publicUrl, wake, onError, intervalMs }: SourceSilenceWatchPieces): SourceSilenceWatch {
  const rules = keptActiveRules(database.dataVersions.alerts);
  let running: Promise<number> | undefined;
  let stopped = false;

  const checkRule = async ({ rule, destinations }: ActiveRules[number], now: Date): Promise<number> => {
    const minutes = rule.silent_minutes as number;
    const at = now.toISOString();
    return database.db.transaction().execute(async (trx) => {
      const rows: Array<ReturnType<typeof pendingDelivery>> = [];
      const queue = (event: 'silent' | 'back', source: LogSource, detail: SilenceDetail) => {
        for (const destination of destinations) {
          rows.push(pendingDelivery({
            delivery_id: randomUUID(), kind: event, error_id: -source.id, url: deliveryTarget(destination),
            body: sourceAlertBody(destination.kind, event, alerted(source), publicUrl, detail), destination_id: destination.id,
          }, at));
        }
      };
      for (const { source, silentSince } of await endSilences(trx, rule.id)) {
        if (rule.events.includes('back')) queue('back', source, { rule_id: rule.id, minutes, last_seen_at: formatDatetime(silentSince), back_at: formatDatetime(source.last_seen_at) });
      }
      const silentBefore = new Date(now.getTime() - minutes * 60_000);
      for (const source of await claimSilences(trx, { ruleId: rule.id, component: rule.component, host: rule.host }, silentBefore, now)) {
        if (rule.events.includes('silent')) queue('silent', source, { rule_id: rule.id, minutes, last_seen_at: formatDatetime(source.last_seen_at) });
      }
      await insertDeliveries(trx, rows);
      return rows.length;
    });
  };

  const check = async (now: Date): Promise<number> => {
    const routes = (await rules(database.db)).filter(({ rule, destinations }) => rule.silent_minutes !== null && destinations.length > 0);
    let queued = 0;
    for (const route of routes) queued += await checkRule(route, now);
    if (queued > 0) wake();
    return queued;
  };

  /** One check at a time in a process: a second waits for the first, then runs. */
  const checkOnce = async (now?: Date): Promise<number> => {
    while (running) await running.catch(() => 0);
    running = check(now ?? clock());
    try {
      return await running;
    } finally {
      running = undefined;
    }
  };

  const timer = intervalMs === undefined ? undefined : setInterval(() => {
    if (stopped || running) return;
    checkOnce().catch(onError);
  }, intervalMs);
  timer?.unref();

  return {
    checkOnce,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running?.catch(() => 0);
    },
  };
}
