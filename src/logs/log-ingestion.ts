import { BlockList, isIPv6 } from 'node:net';
import { LRUCache } from 'lru-cache';
import type { Actor } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import { TooManyRequests } from '../shared/problems.js';
import { tokenBuckets } from '../shared/rate-limit.js';
import { nextTurn, TurnBudget } from '../shared/turn-budget.js';
import type { ErrorReport } from '../tracker/infrastructure-error.js';
import type { TrackerService } from '../tracker/tracker.service.js';
import type { IngestKey } from '../ingest/ingest-key.js';
import type { IngestKeysService } from '../ingest/ingest-keys.service.js';
import { sameKey } from '../ingest/sentry-auth.js';
import { DEFAULT_RULES, type PromotionRule, reportOfRecord, verdictOf } from './log-errors.js';
import type { LogRecord } from './log-record.js';
import type { LogSourcesRepository, SourceSeen } from './log-sources.store.js';
import type { SyslogPeer } from './syslog-listener.js';

/** What an ingest key may do: create errors, nothing else (docs/security.md#ingest-keys). */
const INGEST_ACTOR: Actor = { id: null, permissions: new Set(['infrastructure_errors.create']) };

/** Most sources (host, program) one process counts between two writes; more in that time are not counted (docs/limits.md#log-sources). */
export const MAX_SOURCES_PER_FLUSH = 10_000;
/** Characters of messages and raw lines waiting in a process at most (64 Mi, some 128 MiB): lines of 64 KiB fill it before their count does. */
const MAX_SYSLOG_WAITING_CHARS = 64 * 1024 * 1024;
/** Writes of a full `seen` that may wait at once; past them, new sources until the next write are not counted. */
const MAX_EARLY_WRITES = 4;
/** Most syslog lines waiting in a process for their key and verdict; more are dropped (`overloaded`). */
export const MAX_SYSLOG_WAITING = 50_000;
/**
 * Syslog lines taken together: a batch is judged and its errors recorded at once. While this many
 * wait, TCP and TLS connections are not read (syslogFull, syslogRoom): their senders wait, as TCP's
 * flow control makes them (docs/log-sources.md#speed).
 */
export const SYSLOG_BATCH = 10_000;
/** Milliseconds of a turn of the event loop spent judging syslog lines: HTTP requests are answered between (docs/log-sources.md#speed). */
const JUDGE_MS_PER_TURN = 0.25;

/** Where the counted sources go: the sources' repository (log-sources.store.ts adds them up). */
export type SourcesSink = Pick<LogSourcesRepository, 'add'>;

/** Counters of what ingestion did with the records the readers gave it, for /metrics. */
export interface LogIngestionCounters {
  /** Records that were errors, recorded (or, for a journal entry taken before, recognised). */
  errors: number;
  /** Records below their key's threshold: counted on their source only. */
  lines: number;
  /** Syslog lines no enabled key accepts (their sender's address or certificate). */
  unauthenticated: number;
  /** Error records refused for their key's rate limit (syslog: dropped; OTLP and journald: the request answered 429). */
  rate_limited: number;
  /** Syslog lines dropped because too many waited, or the tracker could not take their errors. */
  overloaded: number;
}

export interface LogIngestionOptions {
  /** How often the counted sources and the keys' use are written, in ms. */
  flushMs: number;
  /** The operator's rules (log-rules.service.ts), tried before the shipped ones (log-errors.ts DEFAULT_RULES). */
  operatorRules?: () => Promise<readonly PromotionRule[]>;
}

/** Whether an address is in the key's `allowed_networks` (addresses and CIDRs separated by spaces); no networks: any. */
function networksOf(key: IngestKey): BlockList | undefined {
  if (key.allowed_networks === '') return undefined;
  const list = new BlockList();
  for (const network of key.allowed_networks.split(' ')) {
    const [address, bits] = network.split('/') as [string, string];
    list.addSubnet(address, Number(bits), isIPv6(address) ? 'ipv6' : 'ipv4');
  }
  return list;
}

const covers = (list: BlockList, address: string | undefined): boolean => {
  if (address === undefined || address === '') return false;
  try {
    return list.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
  } catch {
    return false;
  }
};

/** The log sources' keys made ready to match senders with: by certificate, and each key's networks. */
interface KeyMatcher {
  keys: IngestKey[];
  networks: Map<number, BlockList | undefined>;
  byCertificate: Map<string, IngestKey>;
  /** A syslog sender's address → its key (or null: none), while these keys hold. */
  byAddress: Map<string, IngestKey | null>;
}

function matcherOf(keys: IngestKey[]): KeyMatcher {
  const networks = new Map(keys.map((key) => [key.id, networksOf(key)] as const));
  const byCertificate = new Map<string, IngestKey>();
  for (const key of keys) if (key.kind === 'syslog' && key.client_certificate_sha256 !== null && !byCertificate.has(key.client_certificate_sha256)) byCertificate.set(key.client_certificate_sha256, key);
  return { keys, networks, byCertificate, byAddress: new Map() };
}

/** Whether `key`'s networks and certificate (when it names them) let this sender in. */
function admitsPeer(matcher: KeyMatcher, key: IngestKey, address: string | undefined, certificateSha256: string | undefined): boolean {
  const networks = matcher.networks.get(key.id);
  if (networks !== undefined && !covers(networks, address)) return false;
  return key.client_certificate_sha256 === null || key.client_certificate_sha256 === certificateSha256;
}

/**
 * The log sources' side of ingestion (docs/log-sources.md): finds the key a sender uses (an OTLP
 * bearer token, a journal upload's path, a syslog line's address or client certificate), judges each
 * record (log-errors.ts `verdictOf`, the key's threshold), records the errors through the tracker's
 * group commit as an ingest key (the key's rate limit applies), and counts every record on its source
 * (host, program), written every `flushMs`.
 */
export function logIngestion(keys: IngestKeysService, tracker: TrackerService, sources: SourcesSink, clock: Clock, options: LogIngestionOptions) {
  /** The rules a record is judged by now: the operator's, then the shipped ones. */
  let joined: { operators: readonly PromotionRule[]; rules: readonly PromotionRule[] } | undefined;
  const currentRules = async (): Promise<readonly PromotionRule[]> => {
    const operators = options.operatorRules === undefined ? [] : await options.operatorRules();
    if (operators.length === 0) return DEFAULT_RULES;
    // Joined once while the operator's rules are the same (log-rules.service.ts keeps them), not every batch.
    if (joined?.operators !== operators) joined = { operators, rules: [...operators, ...DEFAULT_RULES] };
    return joined.rules;
  };
  const buckets = tokenBuckets(clock);
  const counters: LogIngestionCounters = { errors: 0, lines: 0, unauthenticated: 0, rate_limited: 0, overloaded: 0 };

  let matcher: KeyMatcher | undefined;
  /** When syslogRecord last had the keys read for a sender it refused (performance.now()). */
  let matcherCheckedAt = -Infinity;
  /** The keys as ingestion sees them now (ingest-keys.service.ts: from memory while no key changed). */
  const currentMatcher = async (): Promise<KeyMatcher> => {
    const current = await keys.logSourceKeys();
    if (matcher?.keys !== current) matcher = matcherOf(current);
    return matcher;
  };

  // The sources counted since the last write, and the keys' use (last use, errors refused).
  let seen = new Map<string, SourceSeen>();
  let flushing: Promise<void> = Promise.resolve();
  /** Writes begun because `seen` was full, still running. */
  let early = 0;
  let usage = new Map<number, { lastUsedAt: Date; dropped: number }>();
  const count = (key: IngestKey, record: LogRecord, peerAddress: string | undefined, isError: boolean, now: Date) => {
    const host = record.host ?? peerAddress ?? 'unknown';
    const program = record.program ?? '';
    const id = `${host}\n${program}`;
    let source = seen.get(id);
    if (source === undefined) {
      // Full (a sender inventing host names): written now rather than dropped, while few writes wait.
      if (seen.size >= MAX_SOURCES_PER_FLUSH) {
        if (early >= MAX_EARLY_WRITES) return;
        early += 1;
        void write().finally(() => (early -= 1));
      }
      seen.set(id, (source = { host, program, component: key.component, keyId: key.id, lines: 0, errors: 0, firstAt: now, lastAt: now }));
    }
    source.lines += 1;
    if (isError) source.errors += 1;
    source.lastAt = now;
    source.keyId = key.id;
  };
  const used = (key: IngestKey, dropped: number) => {
    const entry = usage.get(key.id) ?? { lastUsedAt: clock(), dropped: 0 };
    entry.lastUsedAt = clock();
    entry.dropped += dropped;
    usage.set(key.id, entry);
  };

  /**
   * Spends `count` of the key's tokens (a minute's worth of its rate limit held), all or none: the
   * seconds to wait when there are not that many.
   */
  const admit = (key: IngestKey, reports: number): number | undefined =>
    reports === 0 ? undefined : buckets.takeMany(key.id, reports, key.rate_limit_per_minute, key.rate_limit_per_minute / 60);

  const record = async (reports: ErrorReport[]): Promise<void> => {
    await Promise.all(reports.map((report) => tracker.recordReport(INGEST_ACTOR, report)));
    counters.errors += reports.length;
  };

  // The last journal entry of each upload taken, by key and cursor: the uploader sends it again when it
  // starts from its saved cursor, and the tracker recognises its error by the cursor (event_key) but the
  // source would count it twice. Bounded: the latest MAX_SOURCES_PER_FLUSH.
  const lastEntries = new LRUCache<string, true>({ max: MAX_SOURCES_PER_FLUSH });
  const entryId = (key: IngestKey, cursor: string) => `${key.id}\n${cursor}`;

  /**
   * Takes one request's records (OTLP, a journal upload's batch): answered once their errors are
   * durable; 429 with Retry-After, nothing taken and no token spent, when the key's rate limit has not
   * room for them all. Every record is counted on its source, but the journal entry sent again.
   */
  const takeAll = async (key: IngestKey, records: readonly LogRecord[], peerAddress: string | undefined): Promise<void> => {
    const rules = await currentRules();
    const verdicts = records.map((item) => verdictOf(item, key.min_severity, rules));
    // The entry sent again was taken (and paid for) with the upload before.
    const again = records.map((item) => item.cursor !== undefined && lastEntries.has(entryId(key, item.cursor)));
    const errors = verdicts.filter((verdict, i) => verdict !== undefined && !again[i]).length;
    const wait = admit(key, errors);
    used(key, wait === undefined ? 0 : errors);
    if (wait !== undefined) {
      counters.rate_limited += errors;
      throw new TooManyRequests(wait, 'Rate limit of the ingest key exceeded, try again later');
    }
    const now = clock();
    const reports: ErrorReport[] = [];
    records.forEach((item, i) => {
      const verdict = verdicts[i];
      if (!again[i]) {
        count(key, item, peerAddress, verdict !== undefined, now);
        if (verdict === undefined) counters.lines += 1;
      }
      if (verdict !== undefined) reports.push(reportOfRecord(item, verdict, key, peerAddress, now));
    });
    await record(reports);
    const last = records.findLast((item) => item.cursor !== undefined)?.cursor;
    if (last !== undefined) lastEntries.set(entryId(key, last), true);
  };

  // Syslog: lines arrive one by one; they wait here (bounded: UDP's beyond MAX_SYSLOG_WAITING are dropped, TCP and TLS
  // connections pause at a full batch) and are judged in batches.
  let waiting: Array<{ record: LogRecord; peer: SyslogPeer }> = [];
  /** The characters of the messages and raw lines waiting (MAX_SYSLOG_WAITING_CHARS bounds them). */
  let waitingChars = 0;
  const sizeOf = (line: LogRecord) => line.message.length + line.raw.length;
  let draining: Promise<void> | undefined;
  const judging = new TurnBudget(JUDGE_MS_PER_TURN);
  /** Connections paused for a full batch, resumed once it is taken. */
  let paused: Array<() => void> = [];
  const wakePaused = () => {
    if (waiting.length >= SYSLOG_BATCH || paused.length === 0) return;
    const resume = paused;
    paused = [];
    for (const one of resume) one();
  };
  const drainSyslog = async (): Promise<void> => {
    while (waiting.length > 0) {
      const batch = waiting.length <= SYSLOG_BATCH ? waiting : waiting.slice(0, SYSLOG_BATCH);
      waiting = batch === waiting ? [] : waiting.slice(SYSLOG_BATCH);
      for (const { record: line } of batch) waitingChars -= sizeOf(line);
      wakePaused();
      const current = await currentMatcher();
      const rules = await currentRules();
      const byKey = new Map<IngestKey, Array<{ record: LogRecord; peer: SyslogPeer }>>();
      for (const line of batch) {
        const key = syslogKeyOf(current, line.peer);
        if (key === undefined) {
          counters.unauthenticated += 1;
          continue;
        }
        const lines = byKey.get(key);
        if (lines === undefined) byKey.set(key, [line]);
        else lines.push(line);
      }
      const writes: Array<Promise<void>> = [];
      for (const [key, lines] of byKey) {
        let now = clock();
        for (const { record: line, peer } of lines) {
          if (judging.spend()) {
            await nextTurn();
            now = clock();
          }
          const verdict = verdictOf(line, key.min_severity, rules);
          count(key, line, peer.address, verdict !== undefined, now);
          if (verdict === undefined) {
            counters.lines += 1;
            continue;
          }
          if (admit(key, 1) !== undefined) {
            counters.rate_limited += 1;
            used(key, 1);
            continue;
          }
          writes.push(tracker.recordReport(INGEST_ACTOR, reportOfRecord(line, verdict, key, peer.address, now)).then(
            () => void (counters.errors += 1),
            () => void (counters.overloaded += 1),
          ));
        }
        used(key, 0);
      }
      await Promise.all(writes);
    }
  };

  /** The syslog key of a sender: the one naming its client certificate, else the first whose networks cover its address. */
  function syslogKeyOf(current: KeyMatcher, peer: SyslogPeer): IngestKey | undefined {
    if (peer.certificateSha256 !== undefined) {
      const key = current.byCertificate.get(peer.certificateSha256);
      if (key !== undefined && admitsPeer(current, key, peer.address, peer.certificateSha256)) return key;
    }
    const known = current.byAddress.get(peer.address);
    if (known !== undefined) return known ?? undefined;
    const key = current.keys.find((candidate) => candidate.kind === 'syslog' && candidate.client_certificate_sha256 === null && current.networks.get(candidate.id) !== undefined
      && covers(current.networks.get(candidate.id)!, peer.address));
    if (current.byAddress.size < MAX_SOURCES_PER_FLUSH) current.byAddress.set(peer.address, key ?? null);
    return key;
  }

  /** Takes what is counted now and writes it after the writes before it; failures are not passed on. */
  const write = (): Promise<void> => {
    const counted = [...seen.values()];
    const keyUse = [...usage].map(([keyId, entry]) => ({ keyId, ...entry }));
    seen = new Map();
    usage = new Map();
    flushing = flushing.then(async () => {
      if (counted.length > 0) await sources.add(counted);
      if (keyUse.length > 0) await keys.recordUsage(keyUse);
    }).catch(() => {});
    return flushing;
  };
  const timer = setInterval(() => void write(), options.flushMs);
  timer.unref();

  return {
    counters,

    /** The enabled OTLP key whose public key the bearer token is, if its networks let this address in. */
    async otlpKey(token: string, address: string | undefined): Promise<IngestKey | undefined> {
      const current = await currentMatcher();
      let found: IngestKey | undefined;
      // Every key compared, in constant time each: the answer's time tells nothing of which came near.
      for (const key of current.keys) if (key.kind === 'otlp' && sameKey(token, key.public_key)) found = key;
      return found !== undefined && admitsPeer(current, found, address, undefined) ? found : undefined;
    },

    /** The enabled journald key the upload's path names, if its networks and certificate let this sender in. */
    async journalKey(keyId: string, publicKey: string, peer: { address: string | undefined; certificateSha256: string | undefined }): Promise<IngestKey | undefined> {
      const current = await currentMatcher();
      const id = /^[1-9]\d{0,9}$/.test(keyId) ? Number(keyId) : undefined;
      const key = current.keys.find((candidate) => candidate.id === id && candidate.kind === 'journald');
      if (key === undefined || !sameKey(publicKey, key.public_key)) return undefined;
      return admitsPeer(current, key, peer.address, peer.certificateSha256) ? key : undefined;
    },

    /** One request's records, OTLP's or a journal upload's batch (takeAll). */
    take: takeAll,

    /** Whether a syslog key admits this sender (its certificate, else its address): the listener closes the others' connections at once. */
    async syslogSenderAdmitted(peer: SyslogPeer): Promise<boolean> {
      return syslogKeyOf(await currentMatcher(), peer) !== undefined;
    },

    /** A syslog line, as the listener reads it (never throws; what cannot wait is dropped and counted). */
    syslogRecord(line: LogRecord, peer: SyslogPeer): void {
      // A sender already known to be nobody's (UDP: a connection is refused before it sends) is not queued.
      if (matcher !== undefined && peer.certificateSha256 === undefined && matcher.byAddress.get(peer.address) === null) {
        counters.unauthenticated += 1;
        // The keys read again now and then, so that a key made for this sender lets its next lines in.
        if (performance.now() - matcherCheckedAt >= 100) {
          matcherCheckedAt = performance.now();
          void currentMatcher().catch(() => undefined);
        }
        return;
      }
      const size = sizeOf(line);
      if (waiting.length >= MAX_SYSLOG_WAITING || waitingChars + size > MAX_SYSLOG_WAITING_CHARS) {
        counters.overloaded += 1;
        return;
      }
      waitingChars += size;
      waiting.push({ record: line, peer });
      draining ??= Promise.resolve().then(drainSyslog).catch(() => {
        counters.overloaded += waiting.length;
        waiting = [];
        waitingChars = 0;
      }).finally(() => {
        draining = undefined;
        wakePaused();
      });
    },

    /** Whether a full batch of syslog lines waits: a TCP or TLS connection is then paused until syslogRoom resolves. */
    syslogFull: (): boolean => waiting.length >= SYSLOG_BATCH,

    /** Resolves once fewer than a batch of syslog lines wait (at once when they already do). */
    syslogRoom(): Promise<void> {
      if (waiting.length < SYSLOG_BATCH) return Promise.resolve();
      return new Promise((resolve) => paused.push(resolve));
    },

    /** Settles once the syslog lines received so far are judged and their errors recorded (tests; shutdown). */
    async syslogDrained(): Promise<void> {
      while (draining !== undefined) await draining;
    },

    /** Writes the sources counted and the keys' use now (tests; shutdown). */
    flush: write,

    async stop(): Promise<void> {
      clearInterval(timer);
      while (draining !== undefined) await draining;
      await write();
    },
  };
}

export type LogIngestion = ReturnType<typeof logIngestion>;
