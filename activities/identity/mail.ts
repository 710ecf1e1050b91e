import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { AppConfig } from '../../core/config';
import type { MailText } from '../../core/identity/mail-text';

/** Sends a plain-text mail; rejects when the SMTP server does not take it. */
export interface Mailer {
  send(to: string, mail: MailText): Promise<void>;
}

/**
 * The SMTP transport of `mail.*` (docs/identity.md), or null when no host is configured: callers
 * say so by name rather than pretend a mail left. One connection per mail: mail is rare here, and
 * nothing stays open for a process to close.
 */
export function createMailer(config: AppConfig['mail']): Mailer | null {
  if (!config.host || !config.from) return null;
  const transport = nodemailer.createTransport({
    host: config.host,
    port: config.port,
    secure: config.secure,
    auth: config.user ? { user: config.user, pass: config.password } : undefined,
  });
  const from = config.from;
  return {
    async send(to, mail) {
      await transport.sendMail({ from, to, subject: mail.subject, text: mail.text });
    },
  };
}

/**
 * Whether `what` can be mailed; when no transport is configured the misconfiguration is logged by
 * name (the HTTP answer, given already, must not differ), with the request id and nothing else.
 */
export function canMail(
  deps: { mailer: Mailer | null; logger: Logger },
  what: string,
  requestId: string,
): deps is { mailer: Mailer; logger: Logger } {
  if (deps.mailer) return true;
  deps.logger.error(
    { req_id: requestId },
    `${what} asked, but no SMTP transport is configured (APP_MAIL__HOST): no mail sent`,
  );
  return false;
}
