import { setTimeout as sleep } from 'node:timers/promises';
import { SMTPServer } from 'smtp-server';

export interface ReceivedEmail {
  readonly to: string[];
  readonly raw: string;
  /** The raw message with quoted-printable soft line breaks joined, for searching. */
  readonly text: string;
}

/**
 * A real SMTP server on a random local port that keeps what it receives. Addresses in `refused` are
 * refused at RCPT TO for good (550), as a real server refuses a mailbox that does not exist; those in
 * `deferred` for now (450, mailbox busy), as a server asks a sender to try again later. While
 * `silent.on`, it takes each message and never answers it, as a server that has hung.
 */
export async function startSmtpServer(
  options: { refused?: ReadonlySet<string>; deferred?: ReadonlySet<string>; silent?: { on: boolean } } = {},
): Promise<{
  url: string;
  received: ReceivedEmail[];
  waitFor(to: string, count?: number, timeoutMs?: number): Promise<ReceivedEmail[]>;
  close(): Promise<void>;
}> {
  const received: ReceivedEmail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const mailbox = address.address.toLowerCase();
      if (options.refused?.has(mailbox) === true)
        callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      else if (options.deferred?.has(mailbox) === true)
        callback(Object.assign(new Error('mailbox busy, try again later'), { responseCode: 450 }));
      else callback();
    },
    onData(stream, session, callback) {
      if (options.silent?.on === true) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        received.push({ to, raw, text: raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('smtp server has no port');
  return {
    url: `smtp://127.0.0.1:${address.port}`,
    received,
    async waitFor(to, count = 1, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const mine = received.filter((m) => m.to.includes(to.toLowerCase()));
        if (mine.length >= count) return mine;
        if (Date.now() > until)
          throw new Error(`timed out waiting for ${count} email(s) to ${to}; have ${mine.length}`);
        await sleep(50);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  };
}
