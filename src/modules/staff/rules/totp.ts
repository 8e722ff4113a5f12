import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30 s steps. */
const PERIOD_SECONDS = 30;
const DIGITS = 6;
/** One step either side: a phone's clock a little off, or a code typed as it changed. */
const WINDOW_STEPS = 1;

const totpOf = (secretBase32: string, label = '', issuer = '') =>
  new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secretBase32),
  });

/** A new secret: 160 bits, as RFC 4226 recommends. */
export const newTotpSecret = (): string => new Secret({ size: 20 }).base32;

export interface TotpEnrolment {
  readonly secret: string;
  readonly otpauth_uri: string;
  /** The URI as a QR code, an SVG document to show as an image. */
  readonly qr_svg: string;
}

export async function enrolmentFor(secret: string, email: string, issuer: string): Promise<TotpEnrolment> {
  const uri = totpOf(secret, email, issuer).toString();
  return {
    secret,
    otpauth_uri: uri,
    qr_svg: await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }),
  };
}

/**
 * The time step a code belongs to, or undefined when it is wrong. The caller refuses a step at or
 * before the last one accepted, so an overheard code cannot be used again.
 */
export function acceptedStep(secret: string, code: string, now: Date): number | undefined {
  const token = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(token)) return undefined;
  const delta = totpOf(secret).validate({ token, timestamp: now.getTime(), window: WINDOW_STEPS });
  if (delta === null) return undefined;
  return TOTP.counter({ period: PERIOD_SECONDS, timestamp: now.getTime() }) + delta;
}
