/*
 * A request sent by index.html's inline start script, before the app's entry script has loaded, whose
 * answer the entry's first request of the same thing takes instead of asking again (the app's policy,
 * the console's staff session).
 *
 * A 200 answer's JSON is read as soon as it comes, so that an entry script that runs after it has come
 * (as it usually does: the script is still downloading or compiling) can render the data in its first
 * render, inside the module's evaluation. Waiting for it in a promise instead puts the render behind
 * whatever tasks are queued by then: on the second visit Chromium's code-cache production of the entry
 * script (14–48 ms measured on the 2-core machine), and a frame for a `useEffect`.
 */

export interface EarlyAnswer {
  /** The answer, for the entry's client (the body read again from the text already read, if any). */
  readonly response: Promise<Response>;
  /** The JSON of a 200 answer once it has come; undefined before, or for any other answer. */
  readonly body: unknown;
}

/** Sends the request; the caller keeps the result on the page's global object for the entry script. */
export function sendEarly(url: string, headers: Record<string, string>): EarlyAnswer {
  let body: unknown;
  const response = fetch(url, { headers }).then(async (answer) => {
    if (answer.status !== 200 || !/json/.test(answer.headers.get('content-type') ?? '')) return answer;
    const text = await answer.text();
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      // Not JSON after all: the client reads the text below and reports it as it would.
    }
    return new Response(text, {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.headers,
    });
  });
  return {
    response,
    get body() {
      return body;
    },
  };
}
