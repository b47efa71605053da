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
}

/**
 * A real SMTP server (the smtp-server package) on a free port of 127.0.0.1, without TLS, that takes
 * every mail (when `user` is given, only after AUTH with it and `password`) and keeps it for the test.
 */
export async function smtpReceiver(options: { user?: string; password?: string } = {}) {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
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
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    received,
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
