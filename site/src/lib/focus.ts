/*
 * Where keyboard focus goes when a form or island replaces what is on screen (WCAG 2.4.3):
 * never left on the page body.
 */

/** After a submit that found errors: the first field marked invalid, which its message describes. */
export function focusFirstInvalid(form: HTMLElement | null): void {
  requestAnimationFrame(() => form?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
}

/** After content was replaced (a result, a confirmation step): its heading or container, once rendered. */
export function focusWhenShown(element: HTMLElement | null): void {
  if (element && !element.contains(document.activeElement)) element.focus();
}
