/**
 * The text of the mails identity sends (docs/identity.md). Each carries its token once; the token
 * is nowhere else but in its hash.
 */
export interface MailText {
  subject: string;
  text: string;
}

export function passwordResetMail(m: {
  product: string;
  email: string;
  token: string;
  ttlMinutes: number;
}): MailText {
  return {
    subject: `Reset your ${m.product} password`,
    text: [
      `Someone asked to reset the password of ${m.email} on ${m.product}.`,
      '',
      `Reset token: ${m.token}`,
      '',
      `It works once, within ${m.ttlMinutes} minutes: enter it with your new password where you`,
      'sign in, or send both to POST /api/auth/password/reset as {"token", "new_password"}.',
      'Every sign-in of the account ends when the password is reset.',
      '',
      'If you did not ask, ignore this mail: your password stays as it is.',
    ].join('\n'),
  };
}

export function invitationMail(m: {
  product: string;
  email: string;
  token: string;
  role: string;
  ttlHours: number;
}): MailText {
  return {
    subject: `Your invitation to ${m.product}`,
    text: [
      `${m.email} is invited to ${m.product} as ${m.role}.`,
      '',
      `Invitation token: ${m.token}`,
      '',
      `It works once, within ${m.ttlHours} hours: send it with your name and a password to`,
      'POST /api/auth/signup as {"invitation_token", "name", "password"}.',
      '',
      'If you did not expect this, ignore this mail.',
    ].join('\n'),
  };
}
