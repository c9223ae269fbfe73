import { readFile, writeFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { PDF_MAX_PAGES, PdfRefused, rebuildPdf } from './pdf.ts';

/**
 * One PDF rebuilt off the core's event loop (inspect.ts starts a worker per file and ends it);
 * pdf-lib is loaded here only, never on the core's own thread.
 */
export type TPdfJob = { input: string; output: string };
export type TPdfResult = { ok: true } | { ok: false; reason: PdfRefused['reason']; maxPages: number };

const job = workerData as TPdfJob;
let result: TPdfResult;
try {
  await writeFile(job.output, await rebuildPdf(await readFile(job.input)), { mode: 0o600 });
  result = { ok: true };
} catch (err) {
  // Only the document's own faults are refusals; a disk that fails is the server's (the worker's 'error').
  if (!(err instanceof PdfRefused)) throw err;
  result = { ok: false, reason: err.reason, maxPages: PDF_MAX_PAGES };
}
parentPort?.postMessage(result);
