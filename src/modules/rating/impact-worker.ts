/**
 * A thread of an impact test: takes batches of policies' terms (JSON text), re-rates each on the
 * version it was started with, and answers each batch with its tally. Rating is pure and CPU-bound,
 * so the test runs on as many of these as there are cores while the main thread reads the next batch.
 */
import { parentPort, workerData } from 'node:worker_threads';
import {
  addToTally,
  emptyTally,
  policyImpact,
  type ImpactTally,
  type PolicyImpact,
  type RateBookContent,
  type StoredTerms,
} from './rules/index.ts';

export interface ImpactBatch {
  readonly batch: number;
  /** [policy reference, terms as JSON text] */
  readonly policies: readonly (readonly [string, string])[];
}

export interface ImpactBatchResult {
  readonly batch: number;
  readonly tally: ImpactTally;
}

const content = (workerData as { content: RateBookContent }).content;

/** One policy; terms that do not even parse or hold the shape rating reads are counted, not thrown. */
function impactOf(termsJson: string): PolicyImpact {
  try {
    return policyImpact(content, JSON.parse(termsJson) as StoredTerms);
  } catch (error) {
    return {
      kind: 'unrated',
      problems: [
        {
          path: 'terms',
          message: `could not be read for rating: ${error instanceof Error ? error.message : String(error)}`,
        },
      ],
    };
  }
}

parentPort?.on('message', (message: ImpactBatch) => {
  const tally = emptyTally();
  for (const [reference, termsJson] of message.policies) addToTally(tally, reference, impactOf(termsJson));
  const result: ImpactBatchResult = { batch: message.batch, tally };
  parentPort?.postMessage(result);
});
