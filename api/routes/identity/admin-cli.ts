import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { recordAudit } from '../../../activities/audit';
import { createDb, type Db } from '../../../activities/db';
import { createInvitation } from '../../../activities/identity/invitations';
import { createMailer } from '../../../activities/identity/mail';
import { loadConfig, type AppConfig } from '../../../core/config';
import { ConflictError, NotFoundError } from '../../../core/errors';
import { hashPassword } from '../../auth/passwords';
import { ROLES } from '../../auth/principal';
import { endSessions } from '../../auth/sessions';
import { EmailAddress } from '../../http/email';

/**
 * The identity admin's command line (docs/identity.md), for what has no route in the inventory:
 *
 *   tsx api/routes/identity/admin-cli.ts invite <email> [--role annotator|reviewer|admin]
 *   tsx api/routes/identity/admin-cli.ts temporary-password <email>
 *
 * It reads the same APP_* environment as the API. Secrets it makes are printed once, only when
 * they cannot be mailed (an invitation without SMTP) or are meant for the admin (a temporary password).
 */

/** An invitation to sign up, mailed when SMTP is configured. Refused for an address that has an account. */
export async function inviteUser(db: Db, config: AppConfig, email: string, role: (typeof ROLES)[number]) {
  if (await db.user.findUnique({ where: { email }, select: { id: true } }))
    throw new ConflictError(`${email} has an account already`);
  return createInvitation(
    { db, config, mailer: createMailer(config.mail) },
    { email, role, invitedBy: null },
  );
}

/**
 * Sets a random temporary password that the user must change at the next sign-in; every token and
 * session of the user ends. The password, to hand over out of band.
 */
export async function setTemporaryPassword(db: Db, email: string): Promise<string> {
  const password = randomBytes(15).toString('base64url');
  const passwordHash = await hashPassword(password);
  await db.$transaction(async (tx) => {
    const user = await tx.user.findUnique({ where: { email } });
    if (!user || user.kind !== 'person') throw new NotFoundError(`no person with e-mail ${email}`);
    await tx.user.update({
      where: { id: user.id },
      data: { passwordHash, mustChangePassword: true, tokenVersion: { increment: 1 } },
    });
    await endSessions(tx, user.id, null);
    await recordAudit(tx, {
      actorId: null,
      action: 'user.password.temporary_set',
      subjectType: 'user',
      subjectId: user.id,
      detail: { via: 'admin-cli' },
    });
  });
  return password;
}

const USAGE =
  'usage: admin-cli.ts invite <email> [--role annotator|reviewer|admin] | temporary-password <email>';

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { role: { type: 'string', default: 'annotator' } },
  });
  const [command, rawEmail] = positionals;
  const email = EmailAddress.safeParse(rawEmail);
  const role = z.enum(ROLES).safeParse(values.role);
  if (!email.success || !role.success || positionals.length !== 2) throw new Error(USAGE);
  const config = loadConfig(process.env);
  const db = createDb(config.database.url, { maxConnections: 2 });
  try {
    if (command === 'invite') {
      const made = await inviteUser(db, config, email.data, role.data);
      const until = made.expiresAt.toISOString();
      console.log(
        made.token === null
          ? `invitation ${made.invitationId} mailed to ${email.data} as ${role.data}, valid until ${until}`
          : `no SMTP configured: hand this invitation token to ${email.data} (${role.data}, valid until ${until}, shown once):\n${made.token}`,
      );
    } else if (command === 'temporary-password') {
      const password = await setTemporaryPassword(db, email.data);
      console.log(
        `temporary password of ${email.data} (must be changed at sign-in, shown once):\n${password}`,
      );
    } else {
      throw new Error(USAGE);
    }
  } finally {
    await db.$disconnect();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
