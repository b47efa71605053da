import type { createTransport as CreateTransport } from 'nodemailer';
import type { AccountMailServer } from '../shared/account-settings.js';

export type { AccountMailServer } from '../shared/account-settings.js';

export interface AccountMail {
  to: string;
  subject: string;
  text: string;
}

/** How long one mail may take, connecting included. */
const MAIL_TIMEOUT_MS = 10_000;

let nodemailer: Promise<typeof CreateTransport> | undefined;
const loadNodemailer = () => (nodemailer ??= import('nodemailer').then((module) => module.createTransport));

/**
 * The account mail sender (docs/security.md#unlocking-by-mail): one mail, one connection, through the
 * operator's own SMTP server, its certificate checked. Rejects when the server refuses it; the caller
 * sends it apart from any request. Separate from the alerts' mailer (alerts/mailer.ts): the users
 * come before the alerts in the layers (docs/architecture.md#layers), and this server is the
 * operator's, not a destination someone configured through the API, so no address guard applies.
 */
export function accountMailer(server: AccountMailServer) {
  return {
    async send(mail: AccountMail): Promise<void> {
      const createTransport = await loadNodemailer();
      const transport = createTransport({
        host: server.host,
        port: server.port,
        secure: server.secure,
        ...(server.user !== null ? { auth: { user: server.user, pass: server.password ?? '' } } : {}),
        connectionTimeout: MAIL_TIMEOUT_MS,
        greetingTimeout: MAIL_TIMEOUT_MS,
        socketTimeout: MAIL_TIMEOUT_MS,
        logger: false,
        debug: false,
      });
      try {
        await transport.sendMail({ from: server.from, to: mail.to, subject: mail.subject, text: mail.text });
      } finally {
        transport.close();
      }
    },
  };
}

export type AccountMailer = ReturnType<typeof accountMailer>;
