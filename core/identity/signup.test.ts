import { emailDomain, signupStep } from './signup';

const domains = ['example.org'];
const ask = (email: string | null, invitationToken: string | null = null) => ({
  invitationToken,
  email,
  allowedDomains: domains,
});

describe('sign-up steps', () => {
  it('refuses everything while sign-up is off, invitation or not', () => {
    expect(signupStep('off', ask('a@example.org', 'tok'))).toEqual({
      step: 'refuse',
      reason: 'sign-up is off on this deployment',
    });
  });

  it('accepts an invitation token in both open modes', () => {
    expect(signupStep('invitation', ask(null, 'tok'))).toEqual({ step: 'accept-invitation', token: 'tok' });
    expect(signupStep('domain', ask(null, 'tok'))).toEqual({ step: 'accept-invitation', token: 'tok' });
  });

  it('needs an invitation in invitation mode', () => {
    expect(signupStep('invitation', ask('a@example.org'))).toMatchObject({ step: 'refuse' });
  });

  it('mails an invitation to an address of an allowed domain only, subdomains not included', () => {
    expect(signupStep('domain', ask('a@example.org'))).toEqual({
      step: 'mail-invitation',
      email: 'a@example.org',
    });
    expect(signupStep('domain', ask('a@lab.example.org'))).toEqual({
      step: 'refuse',
      reason: 'sign-up is open only to addresses in example.org',
    });
    expect(signupStep('domain', ask('a@example.org.evil.test'))).toMatchObject({ step: 'refuse' });
    expect(signupStep('domain', ask(null))).toMatchObject({ step: 'refuse' });
  });

  it('takes the domain after the last @', () => {
    expect(emailDomain('"a@b"@Example.ORG')).toBe('example.org');
  });
});
