import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The front-end build version (`fv`): a digest of the hashed asset names of the site build.
 * Any rebuild that changes client code changes it; browsers holding an older one reload.
 */
export function readFrontendVersion(siteDist: string): string {
  let names: string[] = [];
  try {
    names = readdirSync(join(siteDist, 'client', '_astro')).sort();
  } catch {
    // No client assets (a build without islands, or no build yet): the version is still stable.
  }
  return createHash('sha256').update(names.join('\n')).digest('base64url').slice(0, 12);
}
