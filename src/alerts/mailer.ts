import type { createTransport as CreateTransport } from 'nodemailer';
import type { MailBody } from './alert-messages.js';
import type { SmtpSecurity } from './alert-routing.js';
import { isIP } from 'node:net';
import { type AllowedHosts, INTERNAL_REFUSAL, checkedAddress, normalisedHost } from './address-guard.js';

/** The SMTP side of an email destination. */
export interface SmtpSettings {
  host: string;
  port: number;
  security: SmtpSecurity;
  user: string | null;
  password: string | null;
  from: string;
  to: readonly string[];
}

/** What one try of a mail came to: the server's reply code, or why there is none. */
export interface MailAttempt {
  ok: boolean;
  /** The SMTP reply code (250 when accepted); null when the server gave none. */
  status: number | null;
  /** The server's reply, one line, at most 200 characters. */
  excerpt: string;
  problem?: string;
}

let nodemailer: Promise<typeof CreateTransport> | undefined;
const loadNodemailer = () => (nodemailer ??= import('nodemailer').then((module) => module.createTransport));

const clip = (text: string) => text.replace(/\p{Cc}+/gu, ' ').trim().slice(0, 200);

/** `message` without the server's `reply` in it (nodemailer quotes it: `Invalid greeting. response=...`): the reason shown never carries what the server said. */
const withoutReply = (message: string, reply: string | undefined) => {
  const said = reply?.trim();
  return said ? message.split(said).join('…') : message;
};

/**
 * Sends one mail through nodemailer (docs/alert-routing.md#email): the server's name resolved once
 * and its address checked (docs/alert-routing.md#internal-addresses), then connected to by that very
 * address, the name kept for TLS (SNI and the certificate's check); a new connection each time,
 * `tls` from the first byte, `starttls` required (never sent in the clear), `none` as the server
 * allows; certificates checked. The whole exchange must end within `timeoutMs`, or as soon as `stop`
 * aborts: a server that hangs holds the outbox no longer than that. Never throws. nodemailer is loaded
 * with the first mail: a server that sends none does not hold it in memory (docs/operations.md#start-up).
 */
export async function sendMail(smtp: SmtpSettings, mail: MailBody, messageId: string, timeoutMs: number, allowed: AllowedHosts, stop?: AbortSignal): Promise<MailAttempt> {
  if (stop?.aborted) return { ok: false, status: null, excerpt: '', problem: 'stopped' };
  const started = Date.now();
  const name = normalisedHost(smtp.host) ?? smtp.host;
  let address: string;
  try {
    address = await checkedAddress(name, allowed, timeoutMs);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    return { ok: false, status: null, excerpt: '', problem: code === INTERNAL_REFUSAL ? INTERNAL_REFUSAL : clip(code ?? message) };
  }
  const resolvedIn = Date.now() - started;
  const createTransport = await loadNodemailer();
  return new Promise((resolve) => {
    let settled = false;
    const transport = createTransport({
      host: address,
      // The certificate is checked against the name given, not the address connected to.
      ...(isIP(name) === 0 ? { servername: name, tls: { servername: name } } : {}),
      port: smtp.port,
      secure: smtp.security === 'tls',
      requireTLS: smtp.security === 'starttls',
      ignoreTLS: smtp.security === 'none',
      ...(smtp.user !== null ? { auth: { user: smtp.user, pass: smtp.password ?? '' } } : {}),
      // The whole exchange is bounded by `timeoutMs` below; nodemailer's own limits are a backstop past it.
      connectionTimeout: timeoutMs + 1000,
      greetingTimeout: timeoutMs + 1000,
      socketTimeout: timeoutMs + 1000,
      dnsTimeout: timeoutMs + 1000,
      logger: false,
      debug: false,
    });
    const finish = (attempt: MailAttempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
      transport.close();
      resolve(attempt);
    };
    const onStop = () => finish({ ok: false, status: null, excerpt: '', problem: 'stopped' });
    // The name's resolution counted: the whole try ends within `timeoutMs`.
    const timer = setTimeout(() => finish({ ok: false, status: null, excerpt: '', problem: `no answer within ${timeoutMs} ms` }), Math.max(1, timeoutMs - resolvedIn));
    if (stop?.aborted) return onStop();
    stop?.addEventListener('abort', onStop);
    transport.sendMail({
      from: smtp.from,
      to: [...smtp.to],
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: `<${messageId}@cmi>`,
      headers: { 'X-Cmi-Delivery': messageId },
    }).then(
      (info: { response?: string }) => {
        const response = clip(String(info.response ?? ''));
        const code = /^(\d{3})/.exec(response);
        finish({ ok: true, status: code ? Number(code[1]) : 250, excerpt: response });
      },
      (error: Error & { responseCode?: number; code?: string; response?: string }) => finish({
        ok: false,
        status: typeof error.responseCode === 'number' ? error.responseCode : null,
        excerpt: '',
        problem: clip(withoutReply(error.code ? `${error.code}: ${error.message}` : error.message, error.response)),
      }),
    );
  });
}
