import { pino, type Logger } from 'pino';

/** Paths that carry secrets or card data; pino replaces them before anything is written. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.client_secret',
  'req.headers.cookie',
  'req.headers["stripe-signature"]',
  '*.password',
  '*.new_password',
  '*.temporary_password',
  '*.client_secret',
  '*.client_secret_sandbox',
  '*.access_token',
  '*.refresh_token',
  '*.session',
  '*.code',
  '*.card',
  '*.card_number',
  '*.cvc',
  '*.payment_temporary_token',
  '*.secret',
  '*.admin_api_key',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  return destination === undefined ? pino(options) : pino(options, destination);
}
