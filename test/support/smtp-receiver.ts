import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One mail as the SMTP server took it. */
export interface ReceivedMail {
  from: string;
  to: string[];
  user: string | undefined;
  /** The message as sent (headers and body), CRLF lines. */
  raw: string;
  /** Whether the connection was encrypted when the mail was sent (TLS, or after STARTTLS). */
  secure: boolean;
}

/**
 * A real SMTP server (the smtp-server package) on a free port of 127.0.0.1 that takes every mail (when
 * `user` is given, only after AUTH with it and `password`) and keeps it for the test. Without `tls`, in
 * the clear and offering no STARTTLS; with it, TLS from the first byte (`implicit`) or offering STARTTLS.
 */
export async function smtpReceiver(options: { user?: string; password?: string; tls?: { key: string; cert: string; implicit: boolean } } = {}) {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: options.tls?.implicit ?? false,
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    disabledCommands: options.tls ? [] : ['STARTTLS'],
    authOptional: options.user === undefined,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          user: typeof session.user === 'string' ? session.user : undefined,
          raw: Buffer.concat(chunks).toString('utf8'),
          secure: session.secure,
        });
        callback();
      });
    },
  });
  // A client that gives up the TLS handshake (a certificate it does not trust) is an error of the connection, kept for the test.
  const errors: Error[] = [];
  server.on('error', (error: Error) => errors.push(error));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    received,
    errors,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A TCP server that takes connections and never says a word: an SMTP server that hangs. */
export async function silentServer() {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => sockets.size,
    stop: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

/** A mail part's text, its quoted-printable decoded, header lines unfolded. */
export function decodeMail(raw: string): { headers: Record<string, string>; text: string; html: string } {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = rest.join('\r\n\r\n');
  const qp = (text: string) => text.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const part = (type: string) => {
    const at = body.indexOf(`Content-Type: ${type}`);
    if (at < 0) return '';
    const start = body.indexOf('\r\n\r\n', at) + 4;
    const end = body.indexOf('\r\n--', start);
    const encoded = body.slice(at, start).includes('quoted-printable');
    const content = body.slice(start, end < 0 ? undefined : end);
    return (encoded ? qp(content) : content).replace(/\r\n/g, '\n');
  };
  return { headers, text: part('text/plain'), html: part('text/html') };
}
