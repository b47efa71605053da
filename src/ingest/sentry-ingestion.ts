import { randomUUID } from 'node:crypto';
import type { Actor } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import type { TrackerService } from '../tracker/tracker.service.js';
import type { IngestKey } from './ingest-key.js';
import type { IngestKeysService } from './ingest-keys.service.js';
import { SentryRateLimited, SentryRefusal } from '../shared/problems.js';
import { tokenBuckets } from '../shared/rate-limit.js';
import { DISABLED_KEY, INVALID_KEY, sameKey } from './sentry-auth.js';
import type { Envelope } from './sentry-envelope.js';
import { parseEvent } from './sentry-envelope.js';
import { eventIdOf, reportOfEvent } from './sentry-event.js';

/** What an ingest key may do: create errors, nothing else (docs/security.md#ingest-keys). */
const INGEST_ACTOR: Actor = { id: null, permissions: new Set(['infrastructure_errors.create']) };

const MAX_KEYS = 10_000;

export interface SentryIngestionOptions {
  /** How often each process adds its keys' use (last use, events dropped) to the database, in ms. */
  usageFlushMs: number;
}

/**
 * The Sentry protocol's side of ingestion (docs/sentry.md): authenticates an ingest key, applies
 * its rate limit, reads events into reports and records them through the tracker's group commit.
 */
export function sentryIngestion(keys: IngestKeysService, tracker: TrackerService, clock: Clock, options: SentryIngestionOptions) {
  const buckets = tokenBuckets(clock, MAX_KEYS);
  const usage = new Map<number, { lastUsedAt: Date; dropped: number }>();

  const used = (key: IngestKey, dropped: number) => {
    const entry = usage.get(key.id) ?? { lastUsedAt: clock(), dropped: 0 };
    entry.lastUsedAt = clock();
    entry.dropped += dropped;
    usage.set(key.id, entry);
  };

  const flushUsage = async (): Promise<void> => {
    if (usage.size === 0) return;
    const batch = [...usage].map(([keyId, entry]) => ({ keyId, ...entry }));
    usage.clear();
    await keys.recordUsage(batch);
  };
  let flushing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    flushing = flushing.then(flushUsage).catch(() => {});
  }, options.usageFlushMs);
  timer.unref();

  /** A token bucket per key holding a minute's worth: a burst up to the limit passes, a stream beyond it is 429. */
  const admit = (key: IngestKey): void => {
    const wait = buckets.take(key.id, key.rate_limit_per_minute, key.rate_limit_per_minute / 60);
    used(key, wait === undefined ? 0 : 1);
    if (wait !== undefined) throw new SentryRateLimited(wait);
  };

  /** Records one event; the same event id again (an SDK's retry) is counted once (tracker/tracker-batch.store.ts event_key). */
  const record = async (key: IngestKey, event: Record<string, unknown>, headerId: string | undefined): Promise<string> => {
    const eventId = eventIdOf(event, () => headerId ?? randomUUID().replaceAll('-', ''));
    const report = reportOfEvent(event, eventId, key.component, clock());
    await tracker.recordReport(INGEST_ACTOR, { ...report, event_key: `${key.id}:${eventId}` });
    return eventId;
  };

  return {
    /** The key of project `projectId` if `given` is its public key and it is enabled: else 401 or 403. */
    async authenticate(projectId: string, given: string): Promise<IngestKey> {
      const id = /^[1-9]\d{0,9}$/.test(projectId) ? Number(projectId) : undefined;
      const key = id === undefined ? null : await keys.forIngestion(id);
      if (key === null || !sameKey(given, key.public_key)) throw new SentryRefusal(401, INVALID_KEY);
      if (!key.enabled) throw new SentryRefusal(403, DISABLED_KEY);
      return key;
    },

    admit,

    /** A store body's one event; answers its id once durable. */
    store: (key: IngestKey, body: Buffer): Promise<string> => record(key, parseEvent(body), undefined),

    /** An envelope's event items recorded (others accepted and dropped); answers the event's id, if any. */
    async envelope(key: IngestKey, envelope: Envelope): Promise<string | undefined> {
      const headerId = typeof envelope.header.event_id === 'string' ? eventIdOf({ event_id: envelope.header.event_id }, () => '') || undefined : undefined;
      let answer = headerId;
      for (const item of envelope.items) {
        if (item.type !== 'event') continue;
        answer = await record(key, parseEvent(item.payload), headerId);
      }
      return answer;
    },

    /** Writes what is held of the keys' use (shutdown; tests). */
    async stop(): Promise<void> {
      clearInterval(timer);
      await flushing;
      // What is kept of the keys' use is worth a try, never a failed shutdown.
      await flushUsage().catch(() => {});
    },
    flushUsage: () => (flushing = flushing.then(flushUsage)),
  };
}

export type SentryIngestion = ReturnType<typeof sentryIngestion>;
