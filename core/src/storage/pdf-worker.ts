import { readFile, writeFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { PdfRefused, rebuildPdf } from './pdf.ts';

/** One PDF rebuilt off the core's event loop (inspect.ts starts a worker per file and ends it). */
export type TPdfJob = { input: string; output: string };
export type TPdfResult = { ok: true } | { ok: false; reason: PdfRefused['reason'] };

const job = workerData as TPdfJob;
let result: TPdfResult;
try {
  await writeFile(job.output, await rebuildPdf(await readFile(job.input)), { mode: 0o600 });
  result = { ok: true };
} catch (err) {
  result = { ok: false, reason: err instanceof PdfRefused ? err.reason : 'unreadable' };
}
parentPort?.postMessage(result);
