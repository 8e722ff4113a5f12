/** Email templates: each yields a subject, a text part and an HTML part from the same values. Pure. */

export interface RenderedEmail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

const escapeHtml = (value: string): string =>
  value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** Lines are `[label, value]` pairs (value null for a plain paragraph); one layout for every email. */
function render(
  subject: string,
  greeting: string,
  lines: ReadonlyArray<readonly [string, string | null]>,
  closing: string,
): RenderedEmail {
  const text = [
    greeting,
    '',
    ...lines.map(([label, value]) => (value === null ? label : `${label}: ${value}`)),
    '',
    closing,
    '',
  ].join('\n');
  const rows = lines
    .map(([label, value]) =>
      value === null
        ? `<p>${escapeHtml(label)}</p>`
        : `<p>${escapeHtml(label)}: <strong>${escapeHtml(value)}</strong></p>`,
    )
    .join('\n');
  const html = `<!doctype html><html><body style="font-family:sans-serif"><p>${escapeHtml(greeting)}</p>\n${rows}\n<p>${escapeHtml(closing)}</p></body></html>`;
  return { subject, text, html };
}

export function welcomeEmail(values: {
  firstNames: string;
  username: string;
  temporaryPassword: string;
  policyReference: string;
  expiresOn: string;
}): RenderedEmail {
  return render(
    'Your motor insurance account',
    `Hello ${values.firstNames},`,
    [
      ['Your policy is set up and an account has been created for you.', null],
      ['Policy', values.policyReference],
      ['Username', values.username],
      ['Temporary password', values.temporaryPassword],
      [
        `Log in with these details to choose your own password before ${values.expiresOn}, when the temporary password expires.`,
        null,
      ],
    ],
    'Drive safely.',
  );
}

export function policyAddedEmail(values: {
  firstNames: string;
  username: string;
  policyReference: string;
}): RenderedEmail {
  return render(
    'A new policy has been added to your account',
    `Hello ${values.firstNames},`,
    [
      ['A new policy has been added to your existing account. Log in with your usual password.', null],
      ['Policy', values.policyReference],
      ['Username', values.username],
    ],
    'Drive safely.',
  );
}
