const KEY = 'obmen.tutorial';

type TFlags = Record<string, { show: boolean }>;

function readFlags(): TFlags {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? '{}') as TFlags;
  } catch {
    return {};
  }
}

export function initTutorial(): void {
  const root = document.querySelector<HTMLElement>('[data-tutorial]');
  if (!root) return;
  const hints = [...root.querySelectorAll<HTMLElement>('[data-step]')];
  const reset = root.querySelector<HTMLButtonElement>('[data-tutorial-reset]');
  const apply = () => {
    const flags = readFlags();
    for (const hint of hints) hint.hidden = flags[hint.dataset.step ?? '']?.show === false;
    if (reset) reset.hidden = !hints.some((hint) => hint.hidden);
  };
  root.addEventListener('click', (event) => {
    const button = (event.target as Element).closest('[data-tutorial-hide]');
    const step = button?.closest<HTMLElement>('[data-step]')?.dataset.step;
    if (!step) return;
    localStorage.setItem(KEY, JSON.stringify({ ...readFlags(), [step]: { show: false } }));
    apply();
    // The pressed button is hidden with its hint: focus goes to the next hint's, else to "show all".
    const at = hints.findIndex((hint) => hint.dataset.step === step);
    const next = [...hints.slice(at + 1), ...hints.slice(0, at).reverse()].find((hint) => !hint.hidden);
    (next?.querySelector<HTMLElement>('[data-tutorial-hide]') ?? reset)?.focus();
  });
  reset?.addEventListener('click', () => {
    localStorage.removeItem(KEY);
    apply();
    hints[0]?.querySelector<HTMLElement>('[data-tutorial-hide]')?.focus();
  });
  apply();
}
