import { createHook } from 'node:async_hooks';

/** The object that holds the shape alive (see `keepTickObjectShape`). */
let keptTickObject: object | undefined;

/**
 * Keeps one of Node's `process.nextTick` queue entries alive for the life of the process, so that V8
 * never collects the hidden class (map) those entries share.
 *
 * Why: Node builds each entry with an object literal whose keys are computed (symbols), and V8 gives
 * such a literal no boilerplate: its maps are held only by live entries. A full garbage collection
 * while no entry is alive drops them, the next entry gets new ones, and after a few such collections
 * the literal's inline cache gives up and every entry is built through the V8 runtime. Measured with
 * callgrind (instructions, so the figures repeat exactly):
 * - 50 forced full collections between bursts of ticks made each later `nextTick` and `await` cost
 *   8,956 instructions instead of 6,237;
 * - a bare Fastify server in a process that had created 100 tables in PGlite (many full collections
 *   during start-up) spent 123,800 instructions a `GET /healthz` against 85,900 for the same server
 *   alone, and 86,500 with this call made first;
 * - the service on PGlite: 140,000 a request before this.
 * A request makes about ten ticks, so this was most of what embedded PGlite cost every request. The
 * same can happen on PostgreSQL to a server that collects fully while idle (not measured).
 *
 * Call it once, before any heavy work; later calls do nothing. It enables an async hook for the one
 * tick it makes and disables it again, so nothing is left running.
 */
export function keepTickObjectShape(): void {
  if (keptTickObject !== undefined) return;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') keptTickObject ??= resource;
    },
  }).enable();
  process.nextTick(() => {});
  hook.disable();
}
