import type { MilepostClient } from '../../../sdk/src/client.ts';
import { errorFromResponse, MilepostError, networkError } from '../../../sdk/src/errors.ts';
import type { BillingRun, BillingRunCounts } from './api-types.ts';

/** What a billing run reports as it goes: the counts so far, the result, or why it stopped. */
export type BillingRunEvent =
  | { readonly name: 'progress'; readonly counts: BillingRunCounts }
  | { readonly name: 'done'; readonly run: BillingRun }
  | { readonly name: 'error'; readonly detail: string };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/*
 * NOTE: the OpenAPI document describes the run's JSON answer, not its server-sent events; the events
 * carry the same counts (and `done` the same result), checked here as they are read.
 */
const isCounts = (value: unknown): value is BillingRunCounts =>
  isRecord(value) &&
  typeof value['date'] === 'string' &&
  ['due', 'billed', 'already_billed', 'failed'].every((name) => typeof value[name] === 'number');

const isRun = (value: unknown): value is BillingRun => {
  const failures = isRecord(value) ? value['failures'] : undefined;
  return (
    isCounts(value) &&
    Array.isArray(failures) &&
    failures.every(
      (failure: unknown) =>
        isRecord(failure) &&
        typeof failure['policy_reference'] === 'string' &&
        typeof failure['reason'] === 'string',
    )
  );
};

/** One server-sent event as the run's report; undefined for one the console does not know. */
function eventOf(name: string, data: unknown): BillingRunEvent | undefined {
  if (name === 'progress' && isCounts(data)) return { name, counts: data };
  if (name === 'done' && isRun(data)) return { name, run: data };
  if (name === 'error' && isRecord(data) && 'detail' in data) return { name, detail: String(data['detail']) };
  return undefined;
}

/** Each complete event of `text` (events end with a blank line), and what is left of a partial one. */
export function splitEvents(text: string, done: boolean): { events: string[]; rest: string } {
  const events = text.replace(/\r\n/g, '\n').split('\n\n');
  const rest = done ? '' : (events.pop() ?? '');
  return { events, rest };
}

/** An event's name and data (JSON where it parses, else the text). */
export function parseEvent(event: string): { name: string; data: unknown } | undefined {
  let name = 'message';
  const lines: string[] = [];
  for (const line of event.split('\n')) {
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) lines.push(line.slice(5).replace(/^ /, ''));
  }
  if (lines.length === 0) return undefined;
  try {
    return { name, data: JSON.parse(lines.join('\n')) as unknown };
  } catch {
    return { name, data: lines.join('\n') };
  }
}

async function start(client: MilepostClient, date: string, signal: AbortSignal) {
  try {
    return await client.POST('/admin/billing-runs', {
      body: { date },
      headers: { accept: 'text/event-stream' },
      parseAs: 'stream',
      signal,
    });
  } catch (cause) {
    throw cause instanceof MilepostError ? cause : networkError(cause);
  }
}

/**
 * Runs the billing day `date` and passes each report to `onEvent` as it arrives: a POST answered with
 * server-sent events (EventSource cannot POST, so the stream is read from fetch).
 */
export async function streamBillingRun(
  client: MilepostClient,
  date: string,
  onEvent: (event: BillingRunEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  await readEventStream(await start(client, date, signal), (name, data) => {
    const event = eventOf(name, data);
    if (event !== undefined) onEvent(event);
  });
}

/**
 * Passes each server-sent event of a streamed answer to `emit` as it arrives; an answer in plain JSON
 * (a job that finished before its first progress report) is the `done` event. Throws the problem of a
 * refused request.
 */
export async function readEventStream(
  answer: { data?: ReadableStream<Uint8Array<ArrayBuffer>> | null; error?: unknown; response: Response },
  emit: (name: string, data: unknown) => void,
): Promise<void> {
  const { data: body, error, response } = answer;
  if (!response.ok) throw errorFromResponse(response, error);
  if (body === undefined || body === null) return;
  if (/json/.test(response.headers.get('content-type') ?? '')) {
    emit('done', await new Response(body).json());
    return;
  }
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (value !== undefined) buffered += value;
    const { events, rest } = splitEvents(buffered, done);
    buffered = rest;
    for (const event of events) {
      const parsed = parseEvent(event);
      if (parsed !== undefined) emit(parsed.name, parsed.data);
    }
    if (done) return;
  }
}
