import { useEffect, useState } from 'react';

/**
 * False on the server's render and the first client one: a form keeps its submit disabled until
 * its handlers run, so a click on a page still loading is never a native submit (which would put
 * the form's fields, a card number or a password among them, into the page's URL).
 */
export function useHydrated(): boolean {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return hydrated;
}
