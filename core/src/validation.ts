import type { z } from 'zod';
import { AppError } from './errors.ts';

/** Parses input with a shared schema; a failure names each bad field and changes nothing. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const fields: Record<string, string> = {};
  for (const issue of result.error.issues) {
    const key = issue.path.join('.') || '_';
    fields[key] ??= issue.message;
  }
  throw new AppError('validation', { fields });
}
