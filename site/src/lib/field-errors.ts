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
