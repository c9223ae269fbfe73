import { isI18nKey, type TI18nKey } from '@obmen/shared';

/**
 * The errors to show next to fields for an /api refusal. A money refusal names one field with a
 * short text ("Above the maximum amount") while its message says more ("The maximum is 2.00
 * BTC"): the fuller message goes next to the field. Validation answers keep their per-field texts.
 */
export function fieldErrors(error: { code: string; message: string; fields: Record<string, string> }): Record<string, string> {
  const names = Object.keys(error.fields);
  if (names.length === 1 && error.code !== 'validation' && error.message) return { [names[0]!]: error.message };
  return error.fields;
}

/**
 * What islands and pages translate with: only keys of the dictionaries. A method's signature, so
 * that i18next's overloaded t() (islands) is accepted beside the pages' own.
 */
export type TKeyTranslate = { translate(key: TI18nKey, vars?: Record<string, string | number>): string }['translate'];

/** A text that may be a dictionary key (a shared schema's message, a refusal's reason): translated when it is one. */
export function messageText(t: TKeyTranslate, message: string, vars?: Record<string, string | number>): string {
  return isI18nKey(message) ? t(message, vars) : message;
}

/** A shared schema's refusal as one message per field (its first), translated; `_` for the whole input. */
export function issueErrors(t: TKeyTranslate, issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): Record<string, string> {
  const found: Record<string, string> = {};
  for (const issue of issues) found[String(issue.path[0] ?? '_')] ??= messageText(t, issue.message);
  return found;
}
