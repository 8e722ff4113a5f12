import type { Session } from '../../../sdk/src/index.ts';
import type { AppConfig } from './config.ts';

/** What every signed-in page is given; the policy itself comes from `usePolicy()`. */
export interface PageProps {
  readonly session: Session;
  readonly config: AppConfig;
}
