/**
 * What the log sources' benchmark sends (docs/benchmarks.md#logs), made once before the clock starts:
 * RFC 5424 syslog lines octet-counted (RFC 6587 3.4.1), journal export bodies
 * (docs/log-sources.md#the-wire) and OTLP/HTTP JSON bodies of log records, each with exactly one record
 * in ERROR_EVERY at err (syslog severity 3, `PRIORITY=3`, OTLP severityNumber 17), the rest info, over
 * HOSTS host names and MESSAGES distinct error messages. Pure: tested by test/log-bench-payloads.test.ts.
 */

/** One record in this many is an error. */
export const ERROR_EVERY = 100;
/** Host names the records come from: `hv-000` ... `hv-499`. */
export const HOSTS = Array.from({ length: 500 }, (_, k) => `hv-${String(k).padStart(3, '0')}`);
/** The programs, in turn. */
export const PROGRAMS = ['nova-compute', 'libvirtd', 'ceph-osd', 'ovs-vswitchd'];
/** The error messages: 20 distinct, so 20 errors at most per program (the host is not part of an error's grouping). */
export const MESSAGES = Array.from({ length: 20 }, (_, k) => [
  `internal error: qemu unexpectedly closed the monitor (domain instance-${String(k).padStart(4, '0')})`,
  `osd.${k} heartbeat_check: no reply from osd.${k + 20} since back 2026-12-03T12:00:00`,
  `Failed to allocate network(s) for port ${k}: VirtualInterfaceCreateException`,
  `bridge br-int: could not open network device tap${k} (No such device)`,
][k % 4] as string);
const INFO_MESSAGES = [
  'Successfully synced instances from host',
  'Running periodic task ComputeManager._poll_volume_usage',
  'pgmap v1024: 512 pgs: 512 active+clean; 1.2 TiB data, 3.6 TiB used',
  'bridge br-int: added interface tap7 on port 12',
];

/** What a payload holds: records, and of them errors. */
export interface PayloadCount {
  records: number;
  errors: number;
}

/** Record `n` of a run: its host, program, and whether it is an error (and then its message). */
function recordAt(n: number): { host: string; program: string; error: boolean; message: string } {
  const error = n % ERROR_EVERY === ERROR_EVERY - 1;
  const errorIndex = Math.floor(n / ERROR_EVERY);
  // Errors walk the hosts one by one (500 errors cover every host once), the rest wander with n.
  const host = HOSTS[(error ? errorIndex : n * 7) % HOSTS.length] as string;
  const program = PROGRAMS[(error ? errorIndex : n) % PROGRAMS.length] as string;
  const message = error ? (MESSAGES[errorIndex % MESSAGES.length] as string) : (INFO_MESSAGES[n % INFO_MESSAGES.length] as string);
  return { host, program, error, message };
}

/**
 * `count` syslog lines from record `first` on, each `LEN SP <PRI>1 TIMESTAMP HOST APP PROCID - - MSG`
 * (facility daemon: PRI 27 at err, 30 at info), as one buffer.
 */
export function syslogLines(first: number, count: number, timestamp: string): { bytes: Buffer } & PayloadCount {
  const parts: string[] = [];
  let errors = 0;
  for (let n = first; n < first + count; n += 1) {
    const record = recordAt(n);
    if (record.error) errors += 1;
    const line = `<${record.error ? 27 : 30}>1 ${timestamp} ${record.host} ${record.program} ${1000 + (n % 9000)} - - ${record.message}`;
    parts.push(`${Buffer.byteLength(line)} ${line}`);
  }
  return { bytes: Buffer.from(parts.join('')), records: count, errors };
}

/** A journal export body of `count` entries from record `first` on, as systemd-journal-upload writes them (no `__CURSOR`: each entry is new). */
export function journalBody(first: number, count: number, realtimeMicros: number): { bytes: Buffer } & PayloadCount {
  const parts: string[] = [];
  let errors = 0;
  for (let n = first; n < first + count; n += 1) {
    const record = recordAt(n);
    if (record.error) errors += 1;
    parts.push(
      `__REALTIME_TIMESTAMP=${realtimeMicros + n}\n__MONOTONIC_TIMESTAMP=${1_000_000 + n}\n_BOOT_ID=0123456789abcdef0123456789abcdef\n` +
        `_HOSTNAME=${record.host}\nSYSLOG_IDENTIFIER=${record.program}\n_SYSTEMD_UNIT=${record.program}.service\n_PID=${1000 + (n % 9000)}\n` +
        `PRIORITY=${record.error ? 3 : 6}\nMESSAGE=${record.message}\n\n`,
    );
  }
  return { bytes: Buffer.from(parts.join('')), records: count, errors };
}

/**
 * An OTLP/HTTP JSON `ExportLogsServiceRequest` of `count` log records from record `first` on, one
 * resource (host.name, service.name) per run of records with the same host and program.
 */
export function otlpBody(first: number, count: number, timeUnixNano: bigint): { bytes: Buffer } & PayloadCount {
  const resources: Array<{ host: string; program: string; logRecords: unknown[] }> = [];
  let errors = 0;
  for (let n = first; n < first + count; n += 1) {
    const record = recordAt(n);
    if (record.error) errors += 1;
    let last = resources.at(-1);
    if (last === undefined || last.host !== record.host || last.program !== record.program) resources.push((last = { host: record.host, program: record.program, logRecords: [] }));
    last.logRecords.push({
      timeUnixNano: String(timeUnixNano + BigInt(n)),
      severityNumber: record.error ? 17 : 9,
      severityText: record.error ? 'ERROR' : 'INFO',
      body: { stringValue: record.message },
      attributes: [{ key: 'thread.id', value: { intValue: String(n % 64) } }],
    });
  }
  const request = {
    resourceLogs: resources.map(({ host, program, logRecords }) => ({
      resource: { attributes: [{ key: 'host.name', value: { stringValue: host } }, { key: 'service.name', value: { stringValue: program } }] },
      scopeLogs: [{ scope: { name: 'bench' }, logRecords }],
    })),
  };
  return { bytes: Buffer.from(JSON.stringify(request)), records: count, errors };
}

/** Frames of RFC 6587 octet counting in `bytes` from `state` on (a reference server's count, across chunks). */
export interface FrameCount {
  frames: number;
  /** Bytes of the current frame still to skip; 0 while reading a length, whose digits so far make `length`. */
  skip: number;
  length: number;
}

/** Counts the octet-counted frames a chunk completes, carrying a frame cut between chunks in `state`. */
export function countFrames(state: FrameCount, bytes: Buffer): void {
  let at = 0;
  while (at < bytes.length) {
    if (state.skip > 0) {
      const step = Math.min(state.skip, bytes.length - at);
      state.skip -= step;
      at += step;
      if (state.skip === 0) state.frames += 1;
      continue;
    }
    const byte = bytes[at] as number;
    at += 1;
    if (byte >= 0x30 && byte <= 0x39) state.length = state.length * 10 + (byte - 0x30);
    else if (byte === 0x20 && state.length > 0) {
      state.skip = state.length;
      state.length = 0;
    }
  }
}
