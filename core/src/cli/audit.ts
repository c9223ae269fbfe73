import { readFile, writeFile } from 'node:fs/promises';
import { auditPages, verifyAuditChain, verifyAuditLines, type TAuditFilter, type TAuditLine } from '../domains/audit/service.ts';
import { options, type TCommand } from './command.ts';

const EXPORT_USAGE = 'usage: audit:export <file.jsonl> [from=<YYYY-MM-DD>] [to=<YYYY-MM-DD>] [actor=…] [subject=…] [action=…]  (to exclusive, UTC)';
const VERIFY_USAGE = 'usage: audit:verify [file.jsonl]  (no file: the chain in the database)';

function dayOf(text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const date = new Date(`${text}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(date.getTime())) throw new Error(EXPORT_USAGE);
  return date;
}

/**
 * The audit trail: audit:verify walks the hash chain (in the database, or an exported file
 * offline) and names the first broken row; audit:export writes rows as JSON Lines with their
 * hashes and the content each hash covers.
 */
export const AUDIT_COMMANDS: Record<string, TCommand> = {
  'audit:verify': async (db, args) => {
    if (args.length > 1) throw new Error(VERIFY_USAGE);
    if (args[0] === undefined) return verifyAuditChain(db);
    const text = await readFile(args[0], 'utf8');
    const lines = text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as TAuditLine);
    return verifyAuditLines(lines);
  },
  'audit:export': async (db, args) => {
    const [file, ...rest] = args;
    if (!file || file.includes('=')) throw new Error(EXPORT_USAGE);
    const given = options(rest, ['from', 'to', 'actor', 'subject', 'action'], EXPORT_USAGE);
    const filter: TAuditFilter = { actor: given.actor, subject: given.subject, action: given.action, from: dayOf(given.from), to: dayOf(given.to) };
    const lines: string[] = [];
    for await (const page of auditPages(db, filter)) for (const line of page) lines.push(JSON.stringify(line));
    await writeFile(file, lines.length ? `${lines.join('\n')}\n` : '', { mode: 0o600 });
    return { file, rows: lines.length };
  },
};
