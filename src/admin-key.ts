import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import { randomToken } from './platform/crypto.ts';

/**
 * In embedded mode an unset ADMIN_API_KEY is generated once and kept in DATA_DIR, so the first start
 * needs no set-up; its path (never the key) is written to stderr.
 */
export async function resolveAdminKey(config: Config, logger: FastifyBaseLogger): Promise<string> {
  if (config.adminApiKey !== undefined) return config.adminApiKey;
  const file = path.join(config.dataDir, 'admin-api-key');
  try {
    const existing = (await fs.readFile(file, 'utf8')).trim();
    if (existing.length >= 32) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await fs.mkdir(config.dataDir, { recursive: true });
  const key = randomToken('mp_admin_');
  await fs.writeFile(file, `${key}\n`, { mode: 0o600 });
  logger.warn({ path: file }, 'ADMIN_API_KEY is unset: generated an admin key and wrote it to this file');
  process.stderr.write(`milepost: admin API key written to ${file}\n`);
  return key;
}
