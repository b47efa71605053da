/**
 * cmi's syslog listeners (docs/log-sources.md#syslog): UDP (one datagram a line), TCP and TLS (RFC 5425)
 * with RFC 6587 framing, octet counting or LF, told apart frame by frame. Each line is read by
 * parseSyslog and handed to the caller's onRecord with who sent it; what cannot be read is counted by
 * reason, never thrown. Every input is bounded: a line over MAX_LINE_BYTES is cut and marked and the rest
 * of its frame skipped, a connection holds at most one frame, connections are limited and time out.
 */
import { createHash } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { type Clock, systemClock } from '../shared/clock.js';
import { TurnBudget } from '../shared/turn-budget.js';
import { MAX_LINE_BYTES, type LogRecord } from './log-record.js';
import { parseSyslog } from './syslog-parse.js';

export type SyslogTransport = 'udp' | 'tcp' | 'tls';

/** Who sent a line: the peer's address (IPv4-mapped IPv6 written as IPv4) and, over TLS, its certificate's fingerprint. */
export interface SyslogPeer {
  transport: SyslogTransport;
  address: string;
  port: number;
  /** SHA-256 of the client certificate's DER, lowercase hex: only over TLS, only when the client presented one (and proved it holds its key). */
  certificateSha256?: string;
}

export interface SyslogListenerOptions {
  /** PEM of the server's certificate and key for tls:// specs; with `ca`, a client certificate that CA signed is required. */
  tls?: { cert: string | Buffer; key: string | Buffer; ca?: string | Buffer };
  /** Called once for each line read; what it throws is counted (`sink_error`), never passed on. */
  onRecord(record: LogRecord, peer: SyslogPeer): void;
  /**
   * Back-pressure for TCP and TLS (UDP cannot be asked to wait): after a chunk, when `full()`, the
   * connection is not read until `room()` resolves; its sender waits, as TCP's flow control makes it.
   */
  backlog?: { full(): boolean; room(): Promise<void> };
  /**
   * Whether a sender may send at all (an ingest key admits its address or, over TLS, its certificate):
   * asked when a TCP connection opens and when a TLS handshake ends; one refused is closed at once
   * (`unauthenticated`), so strangers hold no connection. Undefined: every sender may.
   */
  admits?(peer: SyslogPeer): boolean | Promise<boolean>;
  /** Open TCP/TLS connections each listener takes at most (DEFAULT_MAX_CONNECTIONS); more are closed at once. */
  maxConnections?: number;
  /** A TCP/TLS connection that sends nothing for this long is closed (DEFAULT_IDLE_TIMEOUT_MS). */
  idleTimeoutMs?: number;
  /** How long a TLS handshake may take (DEFAULT_HANDSHAKE_TIMEOUT_MS). */
  handshakeTimeoutMs?: number;
  /** "Now", for the year of an RFC 3164 timestamp (parseSyslog). */
  clock?: Clock;
}

/** Why a line or a connection was dropped. */
export type SyslogDropReason =
  /** A frame that is no syslog line (parseSyslog). */
  | 'unparsable'
  /** A connection closed for bytes that start neither framing (`<` or a length), or a bad length. */
  | 'framing'
  /** A connection closed partway through an octet-counted frame: that frame is lost. */
  | 'incomplete'
  /** A TLS handshake that failed (junk, no common version or cipher, timed out). */
  | 'handshake'
  /** A TLS connection closed for presenting no client certificate, or one the CA did not sign (only with `ca`). */
  | 'client_certificate'
  /** A connection refused for the listener's limit (maxConnections). */
  | 'connection_limit'
  /** A connection closed at once: no ingest key admits its sender (`admits`). */
  | 'unauthenticated'
  /** A connection closed for sending nothing for idleTimeoutMs. */
  | 'idle_timeout'
  /** A record onRecord threw for. */
  | 'sink_error';

/** The listeners' counters (for /metrics), all listeners together. */
export interface SyslogCounters {
  /** Frames (TCP, TLS) and datagrams (UDP) received. */
  received: number;
  /** Records handed to onRecord. */
  records: number;
  /** Lines cut at MAX_LINE_BYTES (still read and handed on). */
  truncated: number;
  dropped: Record<SyslogDropReason, number>;
  /** TCP and TLS connections: accepted since start (TLS: handshake done), open now. */
  connections: { accepted: number; open: number };
}

export interface SyslogListeners {
  /** Each spec as given with the port it listens on (the chosen one for port 0). */
  addresses(): Array<{ spec: string; transport: SyslogTransport; host: string; port: number }>;
  counters: SyslogCounters;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

export const DEFAULT_MAX_CONNECTIONS = 1_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60_000;
/** TCP keep-alive probes after this long without traffic, so that a peer gone without a word is noticed. */
const KEEPALIVE_DELAY_MS = 60_000;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
/** A UDP socket's receive buffer asked of the kernel (which may give less), so a burst waits rather than being lost. */
const UDP_RECEIVE_BUFFER_BYTES = 4 * 1024 * 1024;
/**
 * Milliseconds of a turn of the event loop spent reading frames, all connections together: the rest of
 * a chunk (a sender's burst of thousands of lines) waits for the next turn, and HTTP requests are
 * answered between (docs/log-sources.md#speed).
 */
const READ_MS_PER_TURN = 0.25;
/** An octet count of more digits than this is no length (RFC 6587 3.4.1 sets no bound; 9 digits is under a gigabyte). */
const MAX_LENGTH_DIGITS = 9;

/** `udp://HOST:PORT`, `tcp://HOST:PORT` or `tls://HOST:PORT` (an IPv6 HOST in brackets; PORT 0 lets the system choose); throws a clear sentence for anything else. */
export function parseListenSpec(spec: string): { transport: SyslogTransport; host: string; port: number } {
  const wrong = new Error(`The syslog listener "${spec}" is not udp://HOST:PORT, tcp://HOST:PORT or tls://HOST:PORT.`);
  const match = /^(udp|tcp|tls):\/\/(\[[0-9a-fA-F:.]+\]|[^\s/:@[\]]+):(\d{1,5})$/.exec(spec.trim());
  if (!match) throw wrong;
  const port = Number(match[3]);
  if (port > 65_535) throw wrong;
  const host = (match[2] as string).replace(/^\[(.*)\]$/, '$1');
  return { transport: match[1] as SyslogTransport, host, port };
}

/** Starts one listener per spec (all or none: a spec that cannot listen closes the others and rejects with why). */
export async function startSyslogListeners(specs: string[], options: SyslogListenerOptions): Promise<SyslogListeners> {
  const parsed = specs.map((spec) => ({ spec, ...parseListenSpec(spec) }));
  if (parsed.some((one) => one.transport === 'tls') && !options.tls) throw new Error('A tls:// syslog listener needs a certificate and its key (CMI_SYSLOG_TLS_CERT, CMI_SYSLOG_TLS_KEY).');
  const counters = newCounters();
  const context: Context = {
    options,
    counters,
    clock: options.clock ?? systemClock,
    sockets: new Set(),
    turns: new TurnBudget(READ_MS_PER_TURN),
  };
  const started: Started[] = [];
  try {
    for (const one of parsed) started.push(await listen(one, context));
  } catch (error) {
    await closeAll(started, context);
    throw error;
  }
  return {
    addresses: () => started.map(({ spec, transport, host, port }) => ({ spec, transport, host, port })),
    counters,
    close: () => closeAll(started, context),
  };
}

interface Context {
  options: SyslogListenerOptions;
  counters: SyslogCounters;
  clock: Clock;
  /** Every open TCP/TLS socket, for close(). */
  sockets: Set<Socket>;
  /** The share of a turn of the event loop all TCP and TLS connections together read frames for. */
  turns: TurnBudget;
}

interface Started {
  spec: string;
  transport: SyslogTransport;
  host: string;
  port: number;
  close: () => Promise<void>;
}

function newCounters(): SyslogCounters {
  return {
    received: 0,
    records: 0,
    truncated: 0,
    dropped: { unparsable: 0, framing: 0, incomplete: 0, handshake: 0, client_certificate: 0, connection_limit: 0, unauthenticated: 0, idle_timeout: 0, sink_error: 0 },
    connections: { accepted: 0, open: 0 },
  };
}

async function closeAll(started: Started[], context: Context): Promise<void> {
  for (const socket of context.sockets) socket.destroy();
  await Promise.all(started.map((one) => one.close()));
}

function listen(one: { spec: string; transport: SyslogTransport; host: string; port: number }, context: Context): Promise<Started> {
  return one.transport === 'udp' ? listenUdp(one, context) : listenStream(one, context);
}

/** A UDP listener: each datagram is one line (RFC 5426 3.1). */
function listenUdp(one: { spec: string; transport: SyslogTransport; host: string; port: number }, context: Context): Promise<Started> {
  const socket: UdpSocket = createSocket({ type: one.host.includes(':') ? 'udp6' : 'udp4', recvBufferSize: UDP_RECEIVE_BUFFER_BYTES });
  socket.on('message', (datagram: Buffer, info: RemoteInfo) => {
    const peer: SyslogPeer = { transport: 'udp', address: peerAddress(info.address), port: info.port };
    const text = datagram.length <= MAX_LINE_BYTES ? datagram.toString('utf8') : cutLine(datagram, datagram.length, context.counters);
    handleLine(text, peer, context);
  });
  return new Promise((resolve, reject) => {
    socket.once('error', (error) => reject(listenError(one.spec, error)));
    socket.bind(one.port, one.host, () => {
      socket.removeAllListeners('error');
      // An error on a bound socket (none is expected) must not end the process.
      socket.on('error', () => undefined);
      resolve({ ...one, port: socket.address().port, close: () => new Promise((done) => socket.close(() => done())) });
    });
  });
}

/** A TCP or TLS listener, RFC 6587 framing. */
function listenStream(one: { spec: string; transport: SyslogTransport; host: string; port: number }, context: Context): Promise<Started> {
  const { options, counters } = context;
  const server: Server = one.transport === 'tls' ? tlsServer(context) : createTcpServer();
  server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  server.on('drop', () => (counters.dropped.connection_limit += 1));
  server.on('connection', (socket: Socket) => {
    context.sockets.add(socket);
    socket.on('close', () => context.sockets.delete(socket));
    socket.on('error', () => undefined);
    if (one.transport === 'tcp') admitted(socket, { transport: 'tcp', address: peerAddress(socket.remoteAddress), port: socket.remotePort ?? 0 }, context);
  });
  if (one.transport === 'tls') {
    server.on('secureConnection', (socket: TLSSocket) => {
      socket.on('error', () => undefined);
      if (context.options.tls?.ca !== undefined && !socket.authorized) {
        counters.dropped.client_certificate += 1;
        socket.destroy();
        return;
      }
      const peer: SyslogPeer = { transport: 'tls', address: peerAddress(socket.remoteAddress), port: socket.remotePort ?? 0 };
      const fingerprint = certificateSha256(socket);
      if (fingerprint) peer.certificateSha256 = fingerprint;
      admitted(socket, peer, context);
    });
    server.on('tlsClientError', (_error: Error, socket: TLSSocket) => {
      counters.dropped.handshake += 1;
      socket.destroy();
    });
  }
  return new Promise((resolve, reject) => {
    server.once('error', (error) => reject(listenError(one.spec, error)));
    server.listen(one.port, one.host, () => {
      server.removeAllListeners('error');
      server.on('error', () => undefined);
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : one.port;
      resolve({ ...one, port, close: () => new Promise((done) => server.close(() => done())) });
    });
  });
}

/**
 * A TLS server (RFC 5425): a client certificate is always asked for; with `ca` one that CA signed is
 * required (checked on 'secureConnection'), without it one is optional and, when given, only its fingerprint is passed on (the handshake
 * proves the client holds its key; an ingest key names the fingerprint it trusts).
 */
function tlsServer(context: Context): Server {
  const tls = context.options.tls as NonNullable<SyslogListenerOptions['tls']>;
  return createTlsServer({
    cert: tls.cert,
    key: tls.key,
    ...(tls.ca ? { ca: tls.ca } : {}),
    requestCert: true,
    // Checked on 'secureConnection' (so that a refusal is counted): with `ca`, an unverified client is closed before a byte is read.
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
    handshakeTimeout: context.options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
  });
}

function certificateSha256(socket: TLSSocket): string | undefined {
  const certificate = socket.getPeerCertificate();
  if (!certificate?.raw) return undefined;
  return createHash('sha256').update(certificate.raw).digest('hex');
}

/** Reads the connection when `admits` lets its sender in (what it sent meanwhile waits in the socket); else closes it. */
function admitted(socket: Socket, peer: SyslogPeer, context: Context): void {
  const { options } = context;
  if (options.admits === undefined) return readStream(socket, peer, context);
  void Promise.resolve(options.admits(peer)).catch(() => false).then((ok) => {
    if (socket.destroyed) return;
    if (ok) return readStream(socket, peer, context);
    context.counters.dropped.unauthenticated += 1;
    socket.destroy();
  });
}

/** Reads a connection's frames; closes it for junk, for idling, and counts each. */
function readStream(socket: Socket, peer: SyslogPeer, context: Context): void {
  const { counters, options } = context;
  counters.connections.accepted += 1;
  counters.connections.open += 1;
  socket.on('close', () => (counters.connections.open -= 1));
  socket.setKeepAlive(true, KEEPALIVE_DELAY_MS);
  socket.setTimeout(options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, () => {
    counters.dropped.idle_timeout += 1;
    socket.destroy();
  });
  const frames = new FrameReader((text) => handleLine(text, peer, context), counters);
  const backlog = options.backlog;
  // The connection is paused while the rest of a chunk waits for the next turn (this turn's share is
  // spent), or while the backlog is full; it is read again once neither holds.
  let rest: { chunk: Buffer; at: number } | undefined;
  let waitingForRoom = false;
  /** A turn to read the rest in is asked for (once, whoever finds more waiting: the backlog's room may too). */
  let readingNextTurn = false;
  let ended = false;
  const spend = () => context.turns.spend();
  const finish = () => {
    frames.end();
    socket.end();
  };
  /** Reads what waits of a chunk; true when all of it is read (false: the connection is closed, or more waits). */
  const readRest = (): boolean => {
    if (rest === undefined) return true;
    const at = frames.push(rest.chunk, rest.at, spend);
    if (at < 0) {
      rest = undefined;
      counters.dropped.framing += 1;
      socket.destroy();
      return false;
    }
    if (at < rest.chunk.length) {
      rest.at = at;
      if (!socket.isPaused()) socket.pause();
      if (!readingNextTurn) {
        readingNextTurn = true;
        setImmediate(() => {
          readingNextTurn = false;
          readOn();
        });
      }
      return false;
    }
    rest = undefined;
    return true;
  };
  /** Whether the backlog has room; when not, the connection waits for it paused. */
  const roomInBacklog = (): boolean => {
    if (backlog === undefined || !backlog.full()) return true;
    if (!socket.isPaused()) socket.pause();
    if (!waitingForRoom) {
      waitingForRoom = true;
      void backlog.room().then(() => {
        waitingForRoom = false;
        readOn();
      });
    }
    return false;
  };
  // What was read of a connection is taken even once the connection is gone (its sender closed it after the burst).
  const readOn = () => {
    if (!readRest() || !roomInBacklog()) return;
    if (ended) finish();
    else if (!socket.destroyed) socket.resume();
  };
  socket.on('data', (chunk: Buffer) => {
    rest = { chunk, at: 0 };
    if (readRest()) roomInBacklog();
  });
  socket.on('end', () => {
    // What waits of the last chunk is read first.
    if (rest === undefined && !waitingForRoom) finish();
    else ended = true;
  });
}

/**
 * RFC 6587's two framings, told apart by each frame's first byte: a digit starts octet counting
 * (`LEN SP MSG`, 3.4.1), `<` a line ending at LF (3.4.2). CR, LF, SP, TAB and NUL between frames are
 * skipped (senders put a trailer after a counted frame). At most MAX_LINE_BYTES of a frame are kept:
 * the rest is counted and skipped.
 */
export class FrameReader {
  private mode: 'between' | 'length' | 'octets' | 'line' = 'between';
  private lengthDigits = 0;
  private remaining = 0;
  /** Bytes of the current frame seen, and the first MAX_LINE_BYTES of them (copied: a chunk is never kept). */
  private total = 0;
  private kept: Buffer[] = [];
  private keptBytes = 0;
  /** A frame was handed on since push last looked: where push may stop. */
  private delivered = false;

  constructor(
    private readonly onFrame: (text: string) => void,
    private readonly counters: Pick<SyslogCounters, 'truncated' | 'dropped'>,
  ) {}

  /**
   * Reads a chunk from `from`, stopping after a frame once `enough()` says so: returns where it stopped
   * (the chunk's length when it read all of it), or -1 for bytes that are no framing (the connection should be closed).
   */
  push(chunk: Buffer, from = 0, enough?: () => boolean): number {
    let at = from;
    while (at < chunk.length) {
      if (this.delivered) {
        this.delivered = false;
        if (enough?.()) return at;
      }
      if (this.mode === 'between') {
        const byte = chunk[at] as number;
        if (byte === 0x0a || byte === 0x0d || byte === 0x20 || byte === 0x09 || byte === 0x00) at += 1;
        else if (byte === 0x3c) this.start('line');
        else if (byte >= 0x31 && byte <= 0x39) this.start('length');
        else return -1;
      } else if (this.mode === 'length') {
        const byte = chunk[at] as number;
        at += 1;
        if (byte >= 0x30 && byte <= 0x39) {
          this.remaining = this.remaining * 10 + (byte - 0x30);
          this.lengthDigits += 1;
          if (this.lengthDigits > MAX_LENGTH_DIGITS) return -1;
        } else if (byte === 0x20) {
          this.mode = 'octets';
        } else {
          return -1;
        }
      } else if (this.mode === 'octets') {
        const end = Math.min(chunk.length, at + this.remaining);
        this.remaining -= end - at;
        at = this.take(chunk, at, end, this.remaining === 0);
      } else {
        const lf = chunk.indexOf(0x0a, at);
        at = this.take(chunk, at, lf === -1 ? chunk.length : lf, lf !== -1);
        if (lf !== -1) at += 1;
      }
    }
    this.delivered = false;
    return at;
  }

  /** The connection ended: a line without its LF is still a line; a counted frame cut short is lost. */
  end(): void {
    if (this.mode === 'line' && this.total > 0) this.emit();
    else if (this.mode === 'octets' || this.mode === 'length') this.counters.dropped.incomplete += 1;
    this.mode = 'between';
  }

  private start(mode: 'line' | 'length'): void {
    this.mode = mode;
    this.remaining = 0;
    this.lengthDigits = 0;
    this.total = 0;
    this.kept = [];
    this.keptBytes = 0;
  }

  /** Bytes `start` to `end` of the chunk are the current frame's; `complete` when its last. Where reading goes on. */
  private take(chunk: Buffer, start: number, end: number, complete: boolean): number {
    if (complete && this.total === 0 && end - start <= MAX_LINE_BYTES) {
      // The whole frame in one chunk (the usual case): decoded in place.
      this.total = end - start;
      this.deliver(chunk.toString('utf8', start, end));
      this.mode = 'between';
      return end;
    }
    const room = MAX_LINE_BYTES - this.keptBytes;
    if (room > 0 && end > start) {
      const part = Buffer.from(chunk.subarray(start, Math.min(end, start + room)));
      this.kept.push(part);
      this.keptBytes += part.length;
    }
    this.total += end - start;
    if (complete) this.emit();
    return end;
  }

  private emit(): void {
    const bytes = this.kept.length === 1 ? (this.kept[0] as Buffer) : Buffer.concat(this.kept, this.keptBytes);
    const text = this.total <= MAX_LINE_BYTES ? bytes.toString('utf8') : cutLine(bytes, this.total, this.counters);
    this.kept = [];
    this.keptBytes = 0;
    this.mode = 'between';
    this.deliver(text);
  }

  private deliver(text: string): void {
    this.delivered = true;
    try {
      this.onFrame(text);
    } catch {
      this.counters.dropped.sink_error += 1;
    }
  }
}

/**
 * A line of `totalBytes` of which `prefix` holds the first MAX_LINE_BYTES, cut as boundedText would cut
 * the whole line (never inside a character, marked `… [truncated: N more bytes]`) without having it.
 */
export function cutLine(prefix: Buffer, totalBytes: number, counters?: Pick<SyslogCounters, 'truncated'>): string {
  if (counters) counters.truncated += 1;
  const marker = (more: number) => `… [truncated: ${more} more bytes]`;
  let room = Math.max(0, Math.min(prefix.length, MAX_LINE_BYTES - Buffer.byteLength(marker(totalBytes))));
  // Back off to the start of a character: a UTF-8 continuation byte is 10xxxxxx.
  while (room > 0 && room < prefix.length && ((prefix[room] as number) & 0xc0) === 0x80) room -= 1;
  const cut = prefix.toString('utf8', 0, room);
  return cut + marker(totalBytes - Buffer.byteLength(cut));
}

/** A line read: parsed and handed on, or counted. */
function handleLine(text: string, peer: SyslogPeer, context: Context): void {
  const { counters, options } = context;
  counters.received += 1;
  let record: LogRecord | undefined;
  try {
    record = parseSyslog(text, peer.address, context.clock);
  } catch {
    record = undefined;
  }
  if (!record) {
    counters.dropped.unparsable += 1;
    return;
  }
  try {
    options.onRecord(record, peer);
    counters.records += 1;
  } catch {
    counters.dropped.sink_error += 1;
  }
}

/** `::ffff:10.0.0.1` (an IPv4 peer of a dual-stack socket) as `10.0.0.1`. */
function peerAddress(address: string | undefined): string {
  if (!address) return '';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

function listenError(spec: string, error: Error): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const why = code === 'EADDRINUSE' ? 'the port is taken' : code === 'EACCES' ? 'permission denied' : code === 'EADDRNOTAVAIL' ? 'no such local address' : error.message;
  return new Error(`The syslog listener ${spec} cannot listen: ${why}.`, { cause: error });
}
